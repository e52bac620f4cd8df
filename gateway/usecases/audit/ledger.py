"""A receipt body read for people: the columns of a listing and the ledger of every candidate
(included or excluded, why, under which rule, with its score and signals).

The console's reader is the one lenient reader of receipt bodies: every kind is read through the
same loose shape (`msgspec.convert` into Structs whose every field has a default), so that a
kind without a member shows an empty cell, and a body of a shape no kind has (one this gateway
never wrote) shows an empty ledger, never an error. Everything else reads a body strictly, as
its kind's Struct (`gateway.usecases.receiptlog.kinds`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

import msgspec

__all__ = [
    "LedgerRow",
    "ReceiptFacts",
    "ledger_of",
    "read_loosely",
    "reason_counts",
    "receipt_facts",
]

INCLUDED = "included"


class _Loose(msgspec.Struct, frozen=True, kw_only=True):
    """A part of a body as the console reads it: every field optional."""


class _Item(_Loose, frozen=True, kw_only=True):
    memory_id: str | None = None
    turn_id: str | None = None
    reason: str | None = None
    detail: str | None = None
    content_sha256: str | None = None
    tokens: int | None = None
    score_micros: int | None = None
    signals_micros: dict[str, int] = {}


class _Candidate(_Loose, frozen=True, kw_only=True):
    memory_id: str
    content_sha256: str | None = None
    vector_rank: int | None = None
    vector_distance: str | None = None
    lexical_rank: int | None = None
    lexical_score: str | None = None


class _Outcome(_Loose, frozen=True, kw_only=True):
    memory_id: str
    rule_id: str | None = None


class _Policy(_Loose, frozen=True, kw_only=True):
    mode: str | None = None
    outcomes: list[_Outcome] = []
    decisions: list[dict[str, object]] = []


class _Named(_Loose, frozen=True, kw_only=True):
    version: str | None = None
    digest: str | None = None
    model: str | None = None


class _Assembler(_Loose, frozen=True, kw_only=True):
    version: str | None = None
    tokenizer: str | None = None
    ranking_profile: _Named = _Named()
    embedder: _Named = _Named()


class _Subject(_Loose, frozen=True, kw_only=True):
    purpose: str | None = None
    key_id: str | None = None
    role: str | None = None


class _Budget(_Loose, frozen=True, kw_only=True):
    tokens_used: int | None = None
    budget_tokens: int | None = None


class _Delivery(_Loose, frozen=True, kw_only=True):
    bytes: int | None = None


class _Part(_Loose, frozen=True, kw_only=True):
    """The members that account for candidates: a bundle's, a list's, or a session context's
    memory part."""

    included: list[_Item] | None = None
    excluded: list[_Item] | None = None
    candidates: list[_Candidate] = []


class LooseBody(_Part, frozen=True, kw_only=True):
    subject: _Subject = _Subject()
    budget: _Budget = _Budget()
    assembler: _Assembler = _Assembler()
    policy: _Policy = _Policy()
    bundle: _Delivery = _Delivery()
    memory: _Part | None = None
    # The complete request as recorded: its fields are the kind's, shown as they are.
    request: dict[str, object] = {}

    @property
    def accounted(self) -> _Part:
        """Where the kind keeps its candidates' account: at the top (context, replay, the
        lists), or under `memory` (a session context's memory part)."""
        if self.included is None and self.memory is not None:
            return self.memory
        return self


def read_loosely(body: Mapping[str, object]) -> LooseBody:
    """A decoded body in the console's loose shape; an empty one when it has no shape a kind
    has."""
    try:
        return msgspec.convert(body, LooseBody)
    except msgspec.ValidationError:
        return LooseBody()


@dataclass(frozen=True, slots=True)
class ReceiptFacts:
    """What a listing row or a receipt header shows beyond the log row."""

    purpose: str | None
    key_id: str | None
    role: str | None  # whose request wrote it: an agent's, or an auditor's or admin's
    included: int | None
    excluded: int | None
    tokens_used: int | None
    budget_tokens: int | None
    policy_mode: str | None
    assembler: str | None
    tokenizer: str | None
    ranking_profile: str | None
    ranking_profile_digest: str | None
    embedder: str | None
    bundle_bytes: int | None


@dataclass(frozen=True, slots=True)
class LedgerRow:
    """One candidate: in the bundle (`reason` is "included") or left out, and why."""

    memory_id: str
    reason: str
    detail: str
    rule_id: str | None
    content_sha256: str | None
    tokens: int | None
    score_micros: int | None
    signals_micros: dict[str, int] = field(default_factory=dict)
    vector_rank: int | None = None
    vector_distance: str | None = None
    lexical_rank: int | None = None
    lexical_score: str | None = None

    @property
    def included(self) -> bool:
        return self.reason == INCLUDED


def receipt_facts(body: LooseBody) -> ReceiptFacts:
    part, assembler = body.accounted, body.assembler
    return ReceiptFacts(
        purpose=body.subject.purpose,
        key_id=body.subject.key_id,
        role=body.subject.role,
        included=None if part.included is None else len(part.included),
        excluded=None if part.excluded is None else len(part.excluded),
        tokens_used=body.budget.tokens_used,
        budget_tokens=body.budget.budget_tokens,
        policy_mode=body.policy.mode,
        assembler=assembler.version,
        tokenizer=assembler.tokenizer,
        ranking_profile=assembler.ranking_profile.version,
        ranking_profile_digest=assembler.ranking_profile.digest,
        embedder=assembler.embedder.model,
        bundle_bytes=body.bundle.bytes,
    )


def ledger_of(body: LooseBody) -> list[LedgerRow]:
    """Every candidate the receipt records, in the delivered order first, then the excluded in
    the receipt's own (sorted) order, then any candidate neither names (none should exist:
    nothing leaves the candidate set silently, so such a row says "unaccounted")."""
    part = body.accounted
    candidates = {c.memory_id: c for c in part.candidates}
    rules = {o.memory_id: o.rule_id for o in body.policy.outcomes}

    def row(item: _Item, reason: str) -> LedgerRow:
        memory_id = str(item.memory_id or item.turn_id)
        candidate = candidates.get(memory_id, _Candidate(memory_id=memory_id))
        return LedgerRow(
            memory_id=memory_id,
            reason=reason,
            detail=item.detail or "",
            rule_id=rules.get(memory_id),
            content_sha256=item.content_sha256 or candidate.content_sha256,
            tokens=item.tokens,
            score_micros=item.score_micros,
            signals_micros=dict(sorted(item.signals_micros.items())),
            vector_rank=candidate.vector_rank,
            vector_distance=candidate.vector_distance,
            lexical_rank=candidate.lexical_rank,
            lexical_score=candidate.lexical_score,
        )

    rows = [row(item, INCLUDED) for item in part.included or ()]
    rows += [row(item, str(item.reason)) for item in part.excluded or ()]
    named = {r.memory_id for r in rows}
    rows += [row(_Item(memory_id=m), "unaccounted") for m in candidates if m not in named]
    return rows


def reason_counts(rows: list[LedgerRow]) -> list[tuple[str, int]]:
    """How many candidates each reason accounts for: included first, then by count."""
    counts = Counter(row.reason for row in rows)
    return sorted(counts.items(), key=lambda kv: (kv[0] != INCLUDED, -kv[1], kv[0]))
