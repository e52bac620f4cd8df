"""What a context (or replay) receipt recorded, decoded into what the pure core needs again:
the request, the instant, whom the policy judged, the candidates (their versions loaded by id and
checked against the recorded sha256), and the diff of a new assembly against the recorded one.
Shared by replay (`gateway.usecases.audit.replay`) and the policy what-if window
(`gateway.usecases.audit.what_if`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from gateway.core.assembly import Found, UnknownAssemblerError, resolve_assembler
from gateway.core.instants import rfc3339
from gateway.core.model import Candidate, ContextRequest, candidate_of
from gateway.core.outcome import Assembly
from gateway.core.ranking import RankingProfile
from gateway.domain.errors import InvalidRequestError
from gateway.domain.memory import MemoryVersion
from gateway.domain.principal import Principal
from gateway.store import memories as memory_store
from gateway.store import receipts as receipt_store
from gateway.store.database import Connection
from gateway.usecases.disclosure.pipeline import Makers
from gateway.usecases.disclosure.records import conflicts_of_record
from policies import Evaluation
from receipts import decode_body

__all__ = [
    "REPLAYABLE",
    "Problem",
    "Recorded",
    "diff",
    "found_of_record",
    "makers_of_record",
    "ranking_input_drift",
    "read_recorded",
    "recorded_found",
    "recorded_makers",
    "request_of_record",
]

REPLAYABLE = ("context", "replay")


@dataclass(frozen=True, slots=True)
class Problem:
    """Why a replay may not reproduce the original: a stable code, the memory if any, detail."""

    code: str
    detail: str
    memory_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"code": self.code, "memory_id": self.memory_id, "detail": self.detail}


@dataclass(frozen=True, slots=True)
class Recorded:
    """A context or replay receipt, decoded into what the core needs."""

    receipt_id: str
    kind: str
    body: dict[str, Any]
    request: ContextRequest
    at: datetime
    subject: Principal

    @property
    def included(self) -> list[str]:
        return [item["memory_id"] for item in self.body["included"]]


def _parse_time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def read_recorded(row: receipt_store.ReceiptRow) -> Recorded:
    body = decode_body(bytes(row.body))
    if body["kind"] not in REPLAYABLE:
        raise InvalidRequestError(
            f"only context bundles can be replayed; receipt {row.receipt_id} is a {body['kind']}",
            code="replay_unsupported",
        )
    request = request_of_record(body["request"])
    # A replay's policy judged the original agent, not the auditor its `subject` names.
    subject = _principal(body, body.get("judged") or body["subject"], request.namespaces)
    return Recorded(row.receipt_id, body["kind"], body, request, _parse_time(body["at"]), subject)


def request_of_record(r: dict[str, Any]) -> ContextRequest:
    """The context request a receipt records (`gateway.usecases.disclosure.records.context_request`)."""
    return ContextRequest(
        task=r["task"],
        namespaces=tuple(r["namespaces"]),
        budget_tokens=r["budget_tokens"],
        top_k=r["top_k"],
        memory_types=tuple(r["memory_types"]) if r["memory_types"] else None,
        purpose=r["purpose"],
        include_index=r["include_index"],
        index_budget_tokens=r["index_budget_tokens"],
        fill=r["fill"],
    )


def _principal(
    body: dict[str, Any], subject: dict[str, Any], namespaces: tuple[str, ...]
) -> Principal:
    return Principal(
        tenant_id=body["tenant_id"],
        key_id=subject["key_id"],
        role=subject["role"],
        agent_id=subject["agent_id"],
        namespaces=namespaces,
        purposes=None,
    )


def recorded_makers(recorded: Recorded) -> Makers:
    """What made the recorded bundle (assembler, tokenizer, ranking profile, embedder), to build
    it again; a 422 `assembler_unknown` when this gateway does not build its assembler."""
    return makers_of_record(recorded.receipt_id, recorded.body["assembler"])


def makers_of_record(receipt_id: str, record: dict[str, Any]) -> Makers:
    """The makers an `assembler` record names (see `recorded_makers`)."""
    try:
        assembler = resolve_assembler(record["version"])
    except UnknownAssemblerError as exc:
        raise InvalidRequestError(
            f"receipt {receipt_id} was assembled by {exc.version}, which this gateway "
            "does not build: its bundle cannot be rebuilt",
            code="assembler_unknown",
        ) from None
    profile = {k: v for k, v in record["ranking_profile"].items() if k != "digest"}
    embedder = record["embedder"]
    return Makers(
        assembler,
        record["tokenizer"],
        RankingProfile.from_canonical(profile),
        embedder["model"],
        embedder["dim"],
    )


async def recorded_found(conn: Connection, recorded: Recorded) -> tuple[Found, list[Problem]]:
    """The recorded candidates and index entries, as the versioned store holds them today."""
    return await found_of_record(conn, recorded.body["tenant_id"], recorded.body)


async def found_of_record(
    conn: Connection, tenant_id: str, body: dict[str, Any]
) -> tuple[Found, list[Problem]]:
    """The candidates and index entries a record lists (`candidates`, `index_input`: a context
    receipt's body, or a session context's memory part), as the versioned store holds them."""
    signals = {c["memory_id"]: c for c in body["candidates"]}
    expected = {c["memory_id"]: c["content_sha256"] for c in body["candidates"]}
    index_ids: list[str] = body["index_input"]["ids"]
    wanted = sorted(set(signals) | set(index_ids))
    versions = {v.memory_id: v for v in await memory_store.fetch_versions(conn, tenant_id, wanted)}
    problems: list[Problem] = []
    for memory_id in wanted:
        version = versions.get(memory_id)
        if version is None:
            problems.append(Problem("version_missing", "no such version in the store", memory_id))
        elif version.erased_at is not None:
            problems.append(
                Problem("memory_erased", f"erased at {rfc3339(version.erased_at)}", memory_id)
            )
        elif memory_id in expected and version.content_sha256 != expected[memory_id]:
            problems.append(
                Problem("content_mismatch", "stored content differs from the receipt", memory_id)
            )

    def candidate(memory_id: str, recorded_signals: dict[str, Any] | None) -> Candidate:
        fields = {f.name: getattr(versions[memory_id], f.name) for f in _VERSION_FIELDS}
        if recorded_signals is not None:
            fields |= {
                "vector_rank": recorded_signals["vector_rank"],
                "vector_distance": _float(recorded_signals["vector_distance"]),
                "lexical_rank": recorded_signals["lexical_rank"],
                "lexical_score": _float(recorded_signals["lexical_score"]),
                "neighbours": recorded_signals.get("neighbours") or (),
            }
        return candidate_of(fields)

    candidates = tuple(candidate(c, signals[c]) for c in sorted(signals) if c in versions)
    index = tuple(candidate(i, None) for i in index_ids if i in versions)
    conflicts = conflicts_of_record(body)
    return Found(candidates, index, body["index_input"]["total_live"], conflicts), problems


_VERSION_FIELDS = dataclasses.fields(MemoryVersion)


def ranking_input_drift(recorded: Recorded, rebuilt: Assembly) -> list[Problem]:
    """A problem when the statistics the ranking read from the recorded candidates differ from
    the ones the receipt recorded (a version missing or changed since), so that a replay says
    why its order moved. Receipts from before the statistics were recorded have none to check."""
    before = recorded.body.get("ranking_input")
    after = rebuilt.ranking_input.to_record()
    if before is None or before == after:
        return []
    return [
        Problem(
            "ranking_input_changed",
            f"the candidates' statistics were {before}, rebuilt from the store {after}",
        )
    ]


def _float(text: str | None) -> float | None:
    return None if text is None else float(text)


def diff(original: Recorded, replayed: Assembly, evaluation: Evaluation) -> dict[str, Any]:
    before = original.included
    after = [item.memory_id for item in replayed.included]
    common = [m for m in before if m in after]
    reordered = common != [m for m in after if m in before]
    old_outcomes = {o["memory_id"]: o["outcome"] for o in original.body["policy"]["outcomes"]}
    new_outcomes = {o.memory_id: o.outcome for o in evaluation.outcomes}
    changes = [
        {"memory_id": m, "before": old_outcomes.get(m), "after": new_outcomes.get(m)}
        for m in sorted(set(old_outcomes) | set(new_outcomes))
        if old_outcomes.get(m) != new_outcomes.get(m)
    ]
    old_reasons = {e["memory_id"]: e["reason"] for e in original.body["excluded"]}
    new_reasons = {e.memory_id: e.reason for e in replayed.excluded}
    return {
        "added": [m for m in after if m not in before],
        "removed": [m for m in before if m not in after],
        "reordered": reordered,
        "decision_changes": changes,
        "exclusion_changes": [
            {"memory_id": m, "before": old_reasons.get(m), "after": new_reasons.get(m)}
            for m in sorted(set(old_reasons) | set(new_reasons))
            if old_reasons.get(m) != new_reasons.get(m)
        ],
        "token_delta": replayed.tokens_used - original.body["budget"]["tokens_used"],
    }
