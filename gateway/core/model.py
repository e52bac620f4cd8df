"""Records the pure core works on. The store builds them; the core never sees a driver type."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from gateway.domain.memory import MEMORY_TYPES, MemoryId, MemoryType

__all__ = [
    "EXCLUSION_REASONS",
    "MEMORY_TYPES",
    "Candidate",
    "ConflictSide",
    "ContextRequest",
    "Exclusion",
    "ExclusionReason",
    "FillMode",
    "MemoryId",
    "MemoryType",
    "OpenConflict",
    "candidate_of",
]

FillMode = Literal["skip", "stop"]

# The closed set of reasons a candidate can be absent from a bundle (ARCHITECTURE §5).
# Extend deliberately: auditors filter on these strings.
ExclusionReason = Literal[
    "over_budget",
    "below_top_k",
    "policy_denied",
    "policy_capped",
    "expired",
    "superseded",
    "deleted",
    "index_truncated",
    "not_authorized",
    "superseded_in_bundle",
]
EXCLUSION_REASONS: tuple[ExclusionReason, ...] = (
    "over_budget",
    "below_top_k",
    "policy_denied",
    "policy_capped",
    "expired",
    "superseded",
    "deleted",
    "index_truncated",
    "not_authorized",
    "superseded_in_bundle",
)


@dataclass(frozen=True, slots=True)
class Candidate:
    """A memory version retrieved for a task, with its raw retrieval signals.

    Ranks are 1-based positions in each retriever's own list (None when that retriever did not
    return it). Dead versions (expired, superseded, deleted) are candidates too, so that the
    receipt can say why they are absent. Index entries (tier 1) are Candidates without retrieval
    signals: policy needs the same fields to decide whether even a heading may be shown.
    """

    memory_id: MemoryId
    namespace: str
    memory_type: MemoryType
    heading: str
    content: str
    confidence: float
    labels: tuple[str, ...]
    source_type: str | None
    source_ref: str | None
    created_at: datetime
    expires_at: datetime | None
    deleted_at: datetime | None
    superseded_by: MemoryId | None
    content_sha256: str
    tokens: int
    heading_tokens: int
    vector_rank: int | None = None
    vector_distance: float | None = None
    # Erased (right to be forgotten): dead at every instant, since no text is left to show.
    erased_at: datetime | None = None
    lexical_rank: int | None = None
    lexical_score: float | None = None
    # The supersession decision that retired it (ARCHITECTURE §12), named by its exclusion.
    superseded_decision: str | None = None
    # Names a single-valued fact (ARCHITECTURE §12): only such a memory can be in a conflict.
    claim_key: str | None = None
    # The live memories written just before and just after this one in its namespace, looked
    # up by the store for its strongest hits only (empty otherwise): a memory's neighbours in
    # write order are the turns of the same conversation, which the ranking's context signal
    # reads (a reply rarely repeats the words of the question it answers).
    neighbours: tuple[MemoryId, ...] = ()
    # When what it says became true, where the writer said (ARCHITECTURE §12): a compiled fact's
    # source turn's instant, a remembered turn's `occurred_at` (an imported history is said
    # before it is written). None: when it was written.
    valid_from: datetime | None = None

    @property
    def said_at(self) -> datetime:
        """When what it says became true: `valid_from`, else when it was written."""
        return self.valid_from or self.created_at


@dataclass(frozen=True, slots=True)
class ConflictSide:
    """One side of an open conflict: the live version, who wrote it and when it became true."""

    memory_id: MemoryId
    agent_id: str | None
    key_id: str
    at: datetime  # valid_from, else created_at


@dataclass(frozen=True, slots=True)
class OpenConflict:
    """Two live facts for one claim key that the rules could not order (ARCHITECTURE §12):
    same instant, or peer writers. Unresolved, so a bundle showing one shows both."""

    claim_key: str
    sides: tuple[ConflictSide, ConflictSide]


@dataclass(frozen=True, slots=True)
class ContextRequest:
    """A validated request for a context bundle. Identity fields come from the API key."""

    task: str
    namespaces: tuple[str, ...]
    budget_tokens: int
    # How many memories the full tier may show; None: as many as the budget holds of those
    # the ranking profile deems relevant (`gateway.core.selection`).
    top_k: int | None
    memory_types: tuple[MemoryType, ...] | None = None
    purpose: str | None = None
    include_index: bool = True
    index_budget_tokens: int | None = None
    fill: FillMode = "skip"


@dataclass(frozen=True, slots=True)
class Exclusion:
    memory_id: MemoryId
    reason: ExclusionReason
    detail: str = ""
    extra: dict[str, str] = field(default_factory=dict)


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
        valid_from=get("valid_from"),
    )
