"""Memory records as the use cases see them: a validated draft and a stored version."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from gateway.core.model import MemoryType

__all__ = ["MemoryDraft", "MemoryVersion"]


@dataclass(frozen=True, slots=True)
class MemoryDraft:
    """A write request that passed validation. Identity (tenant, agent) comes from the key."""

    namespace: str
    memory_type: MemoryType
    heading: str
    content: str
    confidence: float
    labels: tuple[str, ...] = ()
    source_type: str | None = None
    source_ref: str | None = None
    claim_key: str | None = None
    supersedes: str | None = None
    expires_at: datetime | None = None
    idempotency_key: str | None = None


@dataclass(frozen=True, slots=True)
class MemoryVersion:
    """One immutable stored version of a memory."""

    memory_id: str
    namespace: str
    memory_type: MemoryType
    heading: str
    content: str
    confidence: float
    labels: list[str]
    source_type: str | None
    source_ref: str | None
    claim_key: str | None
    supersedes: str | None
    superseded_by: str | None
    agent_id: str | None
    created_at: datetime
    expires_at: datetime | None
    deleted_at: datetime | None
    deleted_reason: str | None
    erased_at: datetime | None
    content_sha256: str
    heading_tokens: int
    tokens: int
    embedding_model: str
