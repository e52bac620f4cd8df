"""What a disclosure answers: context bundles, search pointers, timelines, fetched memories, and
replays. Every one names its receipt (`receipt_id`) and the policy it was judged by (`policy`,
the same record the receipt signs)."""

from __future__ import annotations

from typing import Any

import msgspec

from gateway.responses.timestamps import Timestamp

__all__ = [
    "ContextBundle",
    "ContextReplay",
    "DecisionRecord",
    "DiffChange",
    "Evidence",
    "Excluded",
    "FetchedMemories",
    "FetchedMemory",
    "IncludedMemory",
    "IndexReport",
    "MemoryOutcome",
    "PolicyReport",
    "RankingProfileRef",
    "RedactionCount",
    "RefusalBundle",
    "RefusalDiff",
    "RefusalOutcome",
    "RefusalRecord",
    "RefusalReplay",
    "ReplayDiff",
    "ReplayProblem",
    "ReplayedBundle",
    "ReplayedRefusal",
    "SearchHit",
    "SearchResults",
    "Timeline",
    "TimelineEntry",
]


class Evidence(msgspec.Struct, frozen=True):
    """What a condition compared: the field, the operator, the values and the result."""

    actual: Any
    expected: Any
    field: str
    op: str
    result: Any


class RedactionCount(msgspec.Struct, frozen=True):
    count: int
    detector: str
    field: str


class DecisionRecord(msgspec.Struct, frozen=True):
    """One rule that fired (or, for require, was evaluated), with its evidence."""

    applied: bool
    effect: str
    error: str | None
    evidence: list[Evidence]
    memory_id: str | None
    mode: str
    outcome: str
    outcome_if_enforced: str
    reason: str
    redactions: list[RedactionCount]
    rule_id: str
    stage: str


class MemoryOutcome(msgspec.Struct, frozen=True):
    """The fate of one judged memory, on the enforced track and as if every rule were."""

    memory_id: str
    outcome: str
    outcome_if_enforced: str
    redactions: list[RedactionCount]
    redactions_if_enforced: list[RedactionCount]
    rule_id: str | None
    rule_id_if_enforced: str | None


class RefusalRecord(msgspec.Struct, frozen=True):
    reason: str
    rule_id: str


class PolicyReport(msgspec.Struct, frozen=True):
    """The policy a disclosure was judged by, and what it decided. To an agent, only the
    decisions about what it received (need to know); auditors and admins see every one."""

    digest: str
    mode: str
    decisions: list[DecisionRecord]
    outcomes: list[MemoryOutcome]
    refused: RefusalRecord | None
    # How many memories the policy withheld (denied or capped); null to an agent unless the
    # bundle's `withheld_count` is `shown`. Absent from receipts, which name each one.
    withheld: int | None = None


class Excluded(msgspec.Struct, frozen=True):
    """A memory left out, with its reason (ARCHITECTURE §5's closed set) and a detail."""

    memory_id: str
    reason: str
    detail: str


class RankingProfileRef(msgspec.Struct, frozen=True):
    version: str
    digest: str


class IndexReport(msgspec.Struct, frozen=True):
    """Tier 1: the ids listed, how many, the live total and the section's tokens."""

    entries: list[str]
    shown: int
    total_live: int | None  # null to an agent when it would count memories withheld from it
    tokens: int
    count_withheld: bool


class IncludedMemory(msgspec.Struct, frozen=True):
    """A memory delivered in full, with its score and the signals behind it."""

    memory_id: str
    content_sha256: str
    tokens: int
    score: float
    signals: dict[str, float]
    ref: str  # its per-bundle reference in the text (`m3`)


class ContextBundle(msgspec.Struct, frozen=True):
    """POST /v1/context: the bundle (the exact string), and the account of how it was made."""

    bundle: str
    bundle_sha256: str
    tokens_used: int
    budget_tokens: int
    utilization: float
    tokenizer: str
    ranking_profile: RankingProfileRef
    index: IndexReport
    included: list[IncludedMemory]
    excluded: list[Excluded]
    refs: dict[str, str]  # every per-bundle reference in the text, and the memory it names
    policy: PolicyReport
    receipt_id: str


class SearchHit(msgspec.Struct, frozen=True):
    """A pointer: enough to decide whether to fetch the memory."""

    memory_id: str
    heading: str
    snippet: str
    memory_type: str
    confidence: float
    distance: float | None
    score: float


class SearchResults(msgspec.Struct, frozen=True):
    """POST /v1/search: the hits, best first; every other candidate found, with its reason."""

    results: list[SearchHit]
    excluded: list[Excluded]
    policy: PolicyReport
    receipt_id: str


class Supersession(msgspec.Struct, frozen=True):
    """The decision that retired a version (ARCHITECTURE §12): by which rule, for which claim,
    with the score and threshold of the similarity rule (decimal strings), in which job."""

    decision_id: str
    rule: str
    newer: str
    claim_key: str | None
    score: str | None
    threshold: str | None
    job_id: str | None
    decided_at: Timestamp


class TimelineEntry(msgspec.Struct, frozen=True):
    """A version's history, metadata only."""

    memory_id: str
    namespace: str
    memory_type: str
    created_at: Timestamp
    supersedes: str | None
    superseded_by: str | None
    deleted_at: Timestamp | None
    deleted_reason: str | None
    expires_at: Timestamp | None
    valid_from: Timestamp | None = None
    extractor: str | None = None
    sources: list[str] = []
    supersession: Supersession | None = None


class Timeline(msgspec.Struct, frozen=True):
    """POST /v1/timeline: the versions, newest first; ids not found; versions withheld."""

    entries: list[TimelineEntry]
    missing: list[str]
    excluded: list[Excluded]
    policy: PolicyReport
    receipt_id: str


class FetchedMemory(msgspec.Struct, frozen=True):
    """A live memory in full (its texts as the policy let them through)."""

    memory_id: str
    namespace: str
    memory_type: str
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
    created_at: Timestamp
    expires_at: Timestamp | None
    content_sha256: str
    tokens: int
    heading_tokens: int
    embedding_model: str


class FetchedMemories(msgspec.Struct, frozen=True):
    """POST /v1/fetch: the memories; those withheld (dead or by policy); ids not found."""

    memories: list[FetchedMemory]
    withheld: list[Excluded]
    missing: list[str]
    policy: PolicyReport
    receipt_id: str


class ReplayProblem(msgspec.Struct, frozen=True):
    """Why a replay may not reproduce the original: a stable code, the memory if any."""

    code: str
    memory_id: str | None
    detail: str


class DiffChange(msgspec.Struct, frozen=True, omit_defaults=True):
    """A memory (or rule) whose outcome differs: before and after."""

    before: str | None
    after: str | None
    memory_id: str | None = None
    rule_id: str | None = None


class ReplayDiff(msgspec.Struct, frozen=True):
    added: list[str]
    removed: list[str]
    reordered: bool
    decision_changes: list[DiffChange]
    exclusion_changes: list[DiffChange]
    token_delta: int


class ReplayedBundle(msgspec.Struct, frozen=True, omit_defaults=True):
    receipt_id: str
    bundle_sha256: str
    tokens_used: int
    policy_digest: str
    included: list[str]
    bundle: str | None = None


class ContextReplay(msgspec.Struct, frozen=True):
    """POST /v1/receipts/{id}/replay of a bundle: the original, the rebuilt one, the diff."""

    mode: str
    identical: bool
    replay_of_replay: bool
    problems: list[ReplayProblem]
    original: ReplayedBundle
    replayed: ReplayedBundle
    diff: ReplayDiff
    receipt_id: str


class ReplayedRefusal(msgspec.Struct, frozen=True, omit_defaults=True):
    receipt_id: str
    policy_digest: str
    outcome: str
    refused: RefusalRecord | None
    kind: str | None = None
    disclosure: str | None = None
    policy: PolicyReport | None = None


class RefusalOutcome(msgspec.Struct, frozen=True):
    before: str
    after: str


class RefusalDiff(msgspec.Struct, frozen=True):
    outcome: RefusalOutcome
    decision_changes: list[DiffChange]


class RefusalBundle(msgspec.Struct, frozen=True):
    delivered: bool
    reproducible: bool
    detail: str


class RefusalReplay(msgspec.Struct, frozen=True):
    """POST /v1/receipts/{id}/replay of a refusal: the request stage judged again."""

    mode: str
    identical: bool
    replay_of_replay: bool
    problems: list[ReplayProblem]
    original: ReplayedRefusal
    replayed: ReplayedRefusal
    bundle: RefusalBundle
    diff: RefusalDiff
    receipt_id: str
