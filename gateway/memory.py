"""Memory records as the use cases see them: a validated draft and a stored version."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from gateway.core.model import Candidate, MemoryType

__all__ = ["MemoryDraft", "MemoryVersion", "candidate_of"]


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


def candidate_of(row: Mapping[str, Any]) -> Candidate:
    """The one way a stored version becomes a core `Candidate`: from its columns (a store row,
    or a `MemoryVersion`'s fields with the signals a receipt recorded). Every context request
    builds a few hundred, so the ids are taken as they are (MemoryId is a NewType: no check)."""
    get = row.get
    neighbours = get("neighbours")
    return Candidate(
        memory_id=row["memory_id"],
        namespace=row["namespace"],
        memory_type=row["memory_type"],
        heading=row["heading"],
        content=row["content"],
        confidence=row["confidence"],
        labels=tuple(row["labels"]),
        source_type=row["source_type"],
        source_ref=row["source_ref"],
        created_at=row["created_at"],
        expires_at=row["expires_at"],
        deleted_at=row["deleted_at"],
        superseded_by=row["superseded_by"] or None,
        content_sha256=row["content_sha256"],
        tokens=row["tokens"],
        heading_tokens=row["heading_tokens"],
        vector_rank=get("vector_rank"),
        vector_distance=get("vector_distance"),
        lexical_rank=get("lexical_rank"),
        lexical_score=get("lexical_score"),
        erased_at=row["erased_at"],
        superseded_decision=get("superseded_decision"),
        claim_key=get("claim_key"),
        neighbours=tuple(neighbours) if neighbours else (),
    )
