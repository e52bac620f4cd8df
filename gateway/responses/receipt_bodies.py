"""The signed receipt body, typed (ARCHITECTURE §8): the members each kind adds to the header
every receipt has (`gateway.responses.receipt_parts`). Written by the gateway from these Structs
and read back with `msgspec.convert`; the bytes are the RFC 8785 form of the header's and the
members' fields together. The registry of kinds (`gateway.usecases.receiptlog.kinds`) names
each kind's Struct.
"""

from __future__ import annotations

from typing import Any

from msgspec import UNSET, UnsetType

from gateway.responses.disclosures import RefusalRecord, ReplayProblem
from gateway.responses.receipt_parts import (
    AssemblerRecord,
    BundleMembers,
    CandidateRecord,
    ExclusionRecord,
    JudgedRecord,
    PolicyRecord,
    Record,
    ReplayRecord,
)
from gateway.responses.sessions import Compaction

__all__ = [
    "ContextBody",
    "ErasureBody",
    "ErasureRecord",
    "ErasureTarget",
    "FetchBody",
    "FetchedRecord",
    "HistoryBody",
    "HistoryRequestRecord",
    "HistoryTurnRecord",
    "IdsRequestRecord",
    "MemoryPartRecord",
    "RefusalBody",
    "RefusalReplayBody",
    "RefusalReplayRecord",
    "SearchBody",
    "SearchHitRecord",
    "SearchRequestRecord",
    "SessionBudgetRecord",
    "SessionContextBody",
    "SessionRecord",
    "SessionReplayBody",
    "SessionRequestRecord",
    "SummaryRecord",
    "TimelineBody",
    "TimelineRecord",
    "TurnRecord",
    "WithheldRecord",
]


class ContextBody(BundleMembers, frozen=True, kw_only=True):
    """`context`, and `replay` (a rebuilt bundle, which replays in turn)."""

    at: str
    policy: PolicyRecord
    assembler: AssemblerRecord
    judged: JudgedRecord | UnsetType = UNSET
    replay: ReplayRecord | UnsetType = UNSET


class SearchRequestRecord(Record, frozen=True, kw_only=True):
    query: str
    namespaces: list[str]
    memory_types: list[str] | None
    limit: int
    purpose: str | None


class SearchHitRecord(Record, frozen=True, kw_only=True):
    memory_id: str
    content_sha256: str
    score_micros: int
    rewritten: bool


class SearchBody(Record, frozen=True, kw_only=True):
    request: SearchRequestRecord
    policy: PolicyRecord
    assembler: AssemblerRecord
    candidates: list[CandidateRecord]
    included: list[SearchHitRecord]
    excluded: list[ExclusionRecord]


class IdsRequestRecord(Record, frozen=True, kw_only=True):
    """A request by memory ids (timeline, fetch)."""

    ids: list[str]
    purpose: str | None


class TimelineRecord(Record, frozen=True, kw_only=True):
    memory_id: str


class TimelineBody(Record, frozen=True, kw_only=True):
    request: IdsRequestRecord
    policy: PolicyRecord
    included: list[TimelineRecord]
    excluded: list[ExclusionRecord]
    missing: list[str]


class FetchedRecord(Record, frozen=True, kw_only=True):
    memory_id: str
    content_sha256: str
    rewritten: bool


class FetchBody(Record, frozen=True, kw_only=True):
    request: IdsRequestRecord
    policy: PolicyRecord
    included: list[FetchedRecord]
    excluded: list[ExclusionRecord]
    missing: list[str]


class HistoryRequestRecord(Record, frozen=True, kw_only=True):
    session_id: str
    namespaces: list[str]
    after: int
    limit: int
    purpose: str | None


class HistoryTurnRecord(Record, frozen=True, kw_only=True):
    turn_id: str
    seq: int
    content_sha256: str
    rewritten: bool


class HistoryBody(Record, frozen=True, kw_only=True):
    request: HistoryRequestRecord
    policy: PolicyRecord
    included: list[HistoryTurnRecord]
    excluded: list[ExclusionRecord]


class SessionRequestRecord(Record, frozen=True, kw_only=True):
    session_id: str
    namespaces: list[str]
    budget_tokens: int
    query: str | None
    purpose: str | None


class SessionRecord(Record, frozen=True, kw_only=True):
    """The session a context was built for; its task and system prompt by hash."""

    session_id: str
    namespace: str
    labels: list[str]
    task_sha256: str | None
    system_prompt_sha256: str | None


class SummaryRecord(Record, frozen=True, kw_only=True):
    summary_id: str
    to_seq: int
    covered_sha256: str
    summarizer: str
    shown: bool


class WithheldRecord(Record, frozen=True, kw_only=True):
    """A turn or summary the policy denied or capped (by its id)."""

    id: str
    reason: str
    detail: str


class TurnRecord(Record, frozen=True, kw_only=True):
    turn_id: str
    seq: int
    content_sha256: str
    shown: bool


class MemoryPartRecord(BundleMembers, frozen=True, kw_only=True):
    """A session context's memory bundle (its decisions are the receipt's `policy`)."""

    shown: bool


class SessionBudgetRecord(Record, frozen=True, kw_only=True):
    budget_tokens: int
    tokens_used: int


class SessionContextBody(Record, frozen=True, kw_only=True):
    request: SessionRequestRecord
    at: str
    session: SessionRecord
    policy: PolicyRecord
    assembler: AssemblerRecord
    summary: SummaryRecord | None
    turns: list[TurnRecord]
    withheld: list[WithheldRecord]
    dropped: list[str]
    memory: MemoryPartRecord | None
    compaction: Compaction
    budget: SessionBudgetRecord
    messages_sha256: str


class SessionReplayBody(Record, frozen=True, kw_only=True):
    request: SessionRequestRecord
    at: str
    policy: PolicyRecord
    replay: ReplayRecord


class RefusalBody(Record, frozen=True, kw_only=True):
    """A refused request: `request` as the refused disclosure's own receipts record it (its
    Struct is that kind's, `gateway.usecases.receiptlog.kinds`)."""

    disclosure: str
    request: dict[str, Any]
    at: str
    policy: PolicyRecord
    refused: RefusalRecord


class RefusalReplayRecord(Record, frozen=True, kw_only=True):
    mode: str
    of_kind: str
    original_refused: RefusalRecord
    outcome: str
    refused: RefusalRecord | None
    problems: list[ReplayProblem]


class RefusalReplayBody(Record, frozen=True, kw_only=True):
    disclosure: str
    request: dict[str, Any]
    at: str
    policy: PolicyRecord
    replay: RefusalReplayRecord


class ErasureTarget(Record, frozen=True, kw_only=True):
    """What was asked to be erased: a memory version, or a session's turn."""

    memory_id: str | UnsetType = UNSET
    session_id: str | UnsetType = UNSET
    seq: int | UnsetType = UNSET


class ErasureRecord(Record, frozen=True, kw_only=True):
    target: ErasureTarget
    reason: str
    turns: list[str]
    summaries: list[str]
    memories: list[str]


class ErasureBody(Record, frozen=True, kw_only=True):
    erasure: ErasureRecord
