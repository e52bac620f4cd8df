"""The parts of a signed receipt body (ARCHITECTURE §8) that every kind, or several, share: the
header every receipt has, the policy's record, what made a bundle and a bundle's account of its
candidates. Integers, strings, booleans, null and containers only (no floats); a member that
some receipts carry and others do not is `UNSET` when absent, so that it is absent from the
bytes too. The kinds' own members are `gateway.responses.receipt_bodies`.
"""

from __future__ import annotations

from typing import Literal

import msgspec
from msgspec import UNSET, UnsetType

from gateway.responses.disclosures import (
    DecisionRecord,
    MemoryOutcome,
    RefusalRecord,
    ReplayProblem,
)

__all__ = [
    "AssemblerRecord",
    "BudgetRecord",
    "BundleMembers",
    "CandidateRecord",
    "ConflictRecord",
    "ConflictSideRecord",
    "ContextRequestRecord",
    "Delivery",
    "EarlierValueRecord",
    "EmbedderRecord",
    "ExclusionRecord",
    "IncludedRecord",
    "IndexInput",
    "IndexRecord",
    "JudgedRecord",
    "LogPosition",
    "PolicyRecord",
    "RankingInputRecord",
    "RankingProfileRecord",
    "ReceiptHeader",
    "Record",
    "ReplayRecord",
    "RoleText",
    "Subject",
]


class Record(msgspec.Struct, frozen=True, kw_only=True):
    """A part of a signed body (no floats)."""


# --- The header every receipt has -------------------------------------------------------------


class LogPosition(Record, frozen=True, kw_only=True):
    seq: int
    prev: str


RoleText = Literal["agent", "auditor", "admin"]


class Subject(Record, frozen=True, kw_only=True):
    agent_id: str | None
    key_id: str
    role: RoleText
    purpose: str | None


class Delivery(Record, frozen=True, kw_only=True):
    """What reached the caller: the sha256 and size of the exact bytes."""

    sha256: str
    bytes: int


class ReceiptHeader(Record, frozen=True, kw_only=True):
    schema: str
    receipt_id: str
    kind: str
    tenant_id: str
    log: LogPosition
    issued_at: str
    subject: Subject
    bundle: Delivery
    parent_receipt_id: str | None
    # Signed, so the row's index of "which receipts disclosed memory X" can be checked.
    disclosed_ids: list[str]


# --- Parts several kinds share ----------------------------------------------------------------


class PolicyRecord(Record, frozen=True, kw_only=True):
    """Every decision of every evaluation one disclosure made, in order."""

    digest: str
    mode: str
    decisions: list[DecisionRecord]
    outcomes: list[MemoryOutcome]
    refused: RefusalRecord | None


class RankingProfileRecord(Record, frozen=True, kw_only=True):
    """A ranking profile's canonical form (`RankingProfile.canonical`) and its digest; the
    optional fields appear only when the profile sets them, as in the digest's form."""

    version: str
    weights: dict[str, str]
    type_priority: dict[str, str]
    recency_half_life_days: str
    validity_horizon_days: str
    rrf_k: int
    digest: str
    brevity_half_medians: str | UnsetType = UNSET
    brevity_half_tokens: int | UnsetType = UNSET
    recency_reference: str | UnsetType = UNSET


class EmbedderRecord(Record, frozen=True, kw_only=True):
    model: str
    dim: int


class AssemblerRecord(Record, frozen=True, kw_only=True):
    """What made the bytes: a replay rebuilds with exactly these."""

    version: str
    tokenizer: str
    ranking_profile: RankingProfileRecord
    embedder: EmbedderRecord
    session_layout: str | UnsetType = UNSET  # a session context's layout


class CandidateRecord(Record, frozen=True, kw_only=True):
    """A candidate with the raw retrieval signals its ranking read (floats as decimal text)."""

    memory_id: str
    content_sha256: str
    vector_rank: int | None
    vector_distance: str | None
    lexical_rank: int | None
    lexical_score: str | None
    # Only the strongest hits have neighbours looked up.
    neighbours: list[str] | UnsetType = UNSET


class IndexInput(Record, frozen=True, kw_only=True):
    ids: list[str]
    total_live: int


class ConflictSideRecord(Record, frozen=True, kw_only=True):
    memory_id: str
    agent_id: str | None
    key_id: str
    at: str


class ConflictRecord(Record, frozen=True, kw_only=True):
    claim_key: str
    sides: list[ConflictSideRecord]


class EarlierValueRecord(Record, frozen=True, kw_only=True):
    """A decision of an assembler that leaves out the older of two memories stating different
    values of one claim (`superseded_in_bundle`, assemble/2026-12-05.1 on): the rule
    (`stated_value`; `asked_value` from 2026-12-05.2, the claim then being what the question
    asks: `duration: cat luna`, or from 2026-12-05.3 `name: go gym`), the memory whose value is current, the one left out, the
    claim, and how alike the two texts are (a decimal string, as the other scores)."""

    rule: str
    current: str
    earlier: str
    claim_key: str
    score: str


class ExclusionRecord(Record, frozen=True, kw_only=True):
    """A candidate left out, with its reason (ARCHITECTURE §5's closed set); `extra` names
    what decided it where there is such a thing (the supersession that retired it)."""

    memory_id: str
    reason: str
    detail: str
    extra: dict[str, str] | UnsetType = UNSET


class IncludedRecord(Record, frozen=True, kw_only=True):
    memory_id: str
    content_sha256: str
    tokens: int
    score_micros: int
    signals_micros: dict[str, int]
    rewritten: bool
    ref: str


class IndexRecord(Record, frozen=True, kw_only=True):
    entries: list[str]
    shown: int
    total_live: int
    tokens: int
    count_withheld: bool


class RankingInputRecord(Record, frozen=True, kw_only=True):
    median_tokens: int
    newest_created_at: str | None


class BudgetRecord(Record, frozen=True, kw_only=True):
    budget_tokens: int
    tokens_used: int
    utilization_bp: int
    prefix_bytes: int


class ContextRequestRecord(Record, frozen=True, kw_only=True):
    """A context request, complete, so that replay needs nothing else."""

    as_of: str | None
    task: str
    namespaces: list[str]
    budget_tokens: int
    top_k: int | None  # None: sized by the budget (assembler 2026-12-04.2 on)
    memory_types: list[str] | None
    purpose: str | None
    include_index: bool
    index_budget_tokens: int | None
    fill: str


class BundleMembers(Record, frozen=True, kw_only=True):
    """A bundle's account: the candidates it was assembled from and what became of each, shared
    by a context receipt and a session context's memory part."""

    request: ContextRequestRecord
    candidates: list[CandidateRecord]
    index_input: IndexInput
    included: list[IncludedRecord]
    excluded: list[ExclusionRecord]
    index: IndexRecord
    refs: dict[str, str]
    # The statistics of the candidates the ranking profile's adaptive priors read.
    ranking_input: RankingInputRecord
    budget: BudgetRecord
    conflicts: list[ConflictRecord] | UnsetType = UNSET
    # Absent when the assembler made no such decision (and always before 2026-12-05.1).
    earlier_values: list[EarlierValueRecord] | UnsetType = UNSET


class JudgedRecord(Record, frozen=True, kw_only=True):
    """Whom a replay's policy judged: the original agent, as its receipt's subject named it."""

    agent_id: str | None
    key_id: str
    role: RoleText


class ReplayRecord(Record, frozen=True, kw_only=True):
    mode: str
    of_kind: str
    original_bundle_sha256: str
    problems: list[ReplayProblem]
