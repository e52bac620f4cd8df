"""A receipt body read for people: the columns of a listing and the ledger of every candidate
(included or excluded, why, under which rule, with its score and signals). Pure functions of the
signed body; a body of another shape (an older kind) yields empty cells, never an error."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "LedgerRow",
    "ReceiptFacts",
    "decisions_of",
    "ledger_of",
    "reason_counts",
    "receipt_facts",
    "request_of",
]

INCLUDED = "included"


@dataclass(frozen=True, slots=True)
class ReceiptFacts:
    """What a listing row or a receipt header shows beyond the log row."""

    purpose: str | None
    key_id: str | None
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


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _members(body: dict[str, Any]) -> dict[str, Any]:
    """Where a kind keeps its disclosure members: at the top (context, replay), or under
    `memory` (a session context's memory part)."""
    return body if "included" in body or "memory" not in body else _dict(body["memory"])


def receipt_facts(body: dict[str, Any]) -> ReceiptFacts:
    members = _members(body)
    subject, budget = _dict(body.get("subject")), _dict(body.get("budget"))
    assembler, policy = _dict(body.get("assembler")), _dict(body.get("policy"))
    profile, embedder = _dict(assembler.get("ranking_profile")), _dict(assembler.get("embedder"))
    included, excluded = members.get("included"), members.get("excluded")
    return ReceiptFacts(
        purpose=_str(subject.get("purpose")),
        key_id=_str(subject.get("key_id")),
        included=len(included) if isinstance(included, list) else None,
        excluded=len(excluded) if isinstance(excluded, list) else None,
        tokens_used=_int(budget.get("tokens_used")),
        budget_tokens=_int(budget.get("budget_tokens")),
        policy_mode=_str(policy.get("mode")),
        assembler=_str(assembler.get("version")),
        tokenizer=_str(assembler.get("tokenizer")),
        ranking_profile=_str(profile.get("version")),
        ranking_profile_digest=_str(profile.get("digest")),
        embedder=_str(embedder.get("model")),
        bundle_bytes=_int(_dict(body.get("bundle")).get("bytes")),
    )


def ledger_of(body: dict[str, Any]) -> list[LedgerRow]:
    """Every candidate the receipt records, in the delivered order first, then the excluded in
    the receipt's own (sorted) order, then any candidate neither names (none should exist:
    nothing leaves the candidate set silently, so such a row says "unaccounted")."""
    members = _members(body)
    candidates = {
        c["memory_id"]: c for c in map(_dict, _list(members.get("candidates"))) if "memory_id" in c
    }
    rules = {
        o["memory_id"]: _str(o.get("rule_id"))
        for o in map(_dict, _list(_dict(body.get("policy")).get("outcomes")))
        if "memory_id" in o
    }
    rows: list[LedgerRow] = []
    for item in map(_dict, _list(members.get("included"))):
        rows.append(_row(item, candidates, rules, INCLUDED, ""))
    for item in map(_dict, _list(members.get("excluded"))):
        rows.append(
            _row(item, candidates, rules, str(item.get("reason")), str(item.get("detail") or ""))
        )
    named = {row.memory_id for row in rows}
    rows.extend(
        _row({"memory_id": memory_id}, candidates, rules, "unaccounted", "")
        for memory_id in candidates
        if memory_id not in named
    )
    return rows


def _row(
    item: dict[str, Any],
    candidates: dict[str, dict[str, Any]],
    rules: dict[str, str | None],
    reason: str,
    detail: str,
) -> LedgerRow:
    memory_id = str(item.get("memory_id"))
    candidate = candidates.get(memory_id, {})
    signals = _dict(item.get("signals_micros"))
    return LedgerRow(
        memory_id=memory_id,
        reason=reason,
        detail=detail,
        rule_id=rules.get(memory_id),
        content_sha256=_str(item.get("content_sha256")) or _str(candidate.get("content_sha256")),
        tokens=_int(item.get("tokens")),
        score_micros=_int(item.get("score_micros")),
        signals_micros={k: v for k, v in sorted(signals.items()) if _int(v) is not None},
        vector_rank=_int(candidate.get("vector_rank")),
        vector_distance=_str(candidate.get("vector_distance")),
        lexical_rank=_int(candidate.get("lexical_rank")),
        lexical_score=_str(candidate.get("lexical_score")),
    )


def reason_counts(rows: list[LedgerRow]) -> list[tuple[str, int]]:
    """How many candidates each reason accounts for: included first, then by count."""
    counts = Counter(row.reason for row in rows)
    return sorted(counts.items(), key=lambda kv: (kv[0] != INCLUDED, -kv[1], kv[0]))


def decisions_of(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The policy's recorded decisions, each as the receipt spells it."""
    return [d for d in _list(_dict(body.get("policy")).get("decisions")) if isinstance(d, dict)]


def request_of(body: dict[str, Any]) -> dict[str, Any]:
    """The complete request the receipt recorded (what replay needs)."""
    return _dict(body.get("request"))
