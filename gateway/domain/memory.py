"""Memory records as the use cases see them: a validated draft and a stored version."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal, NewType

__all__ = ["MEMORY_TYPES", "MemoryDraft", "MemoryId", "MemoryType", "MemoryVersion"]

MemoryId = NewType("MemoryId", str)
MemoryType = Literal["semantic", "episodic", "procedural", "working"]
MEMORY_TYPES: tuple[MemoryType, ...] = ("semantic", "episodic", "procedural", "working")


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
    # Provenance of a compiled fact (ARCHITECTURE §12): the turn / memory ids it came from, the
    # extractor (name/version) and when it became true. Plain writes leave them empty.
    sources: tuple[str, ...] = ()
    extractor: str | None = None
    valid_from: datetime | None = None
    claim_value: str | None = None
    claim_previous: str | None = None


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
    # Compile provenance (ARCHITECTURE §12); readers that select none of it get the defaults.
    sources: list[str] = field(default_factory=list)
    extractor: str | None = None
    valid_from: datetime | None = None
    superseded_decision: str | None = None
    written_by_key: str | None = None
