"""The list disclosures: search (ranked snippets), timeline (a memory's versions) and fetch
(memories in full). Each goes through the pipeline of `gateway.usecases.disclosure.pipeline`: admission
(the request stage, once), the memories judged by the same judgement, one application of its
verdict (`partition`: denied and capped memories are withheld, the rest shown up to a limit),
redaction of exactly the texts shown, then the receipt of exactly the list sent: its `bundle`
hashes the RFC 8785 form of that list (an auditor re-canonicalizes the response field).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

import msgspec
import rfc8785

from gateway.core.instants import rfc3339
from gateway.core.model import Candidate, Exclusion, MemoryId, MemoryType
from gateway.core.render import one_line
from gateway.domain.memory import MemoryVersion
from gateway.domain.principal import Principal
from gateway.responses.disclosures import FetchedMemories, SearchResults, Timeline
from gateway.responses.sessions import HistoryPage
from gateway.store import supersessions as supersession_store
from gateway.store.database import Connection
from gateway.usecases.access.need_to_know import Account, account_for
from gateway.usecases.access.policy import memory_view, request_view, shown_evaluation, verdict_of
from gateway.usecases.disclosure import retrieval
from gateway.usecases.disclosure.pipeline import Admitted, Discloser
from gateway.usecases.disclosure.records import (
    candidate_record,
    exclusion,
    memory_payload,
    timeline_entry,
)
from gateway.usecases.disclosure.refusal import Disclosure
from gateway.usecases.memories.writer import withheld_reason
from policies import Evaluation, Judgement

__all__ = ["SNIPPET_CHARS", "disclose_list", "fetch", "partition", "search", "timeline"]

SNIPPET_CHARS = 120
Listed = TypeVar("Listed", SearchResults, Timeline, FetchedMemories, HistoryPage)


@dataclass(frozen=True, slots=True)
class Partition:
    """A judgement applied to memories in order: the positions shown, and an exclusion for every
    other one (policy first, then the limit)."""

    shown: list[int]
    excluded: list[Exclusion]


def partition(judgement: Judgement, limit: int | None = None) -> Partition:
    verdict = verdict_of(judgement)
    shown: list[int] = []
    excluded: list[Exclusion] = []
    for position, memory_id in enumerate(map(MemoryId, judgement.ids)):
        blocked = verdict.denied.get(memory_id) or verdict.capped.get(memory_id)
        if blocked is not None:
            excluded.append(blocked)
        elif limit is None or len(shown) < limit:
            shown.append(position)
        else:
            excluded.append(Exclusion(memory_id, "below_top_k", f"beyond the limit of {limit}"))
    return Partition(shown, excluded)


def _texts(
    judgement: Judgement, positions: Sequence[int], memories: Sequence[Candidate | MemoryVersion]
) -> list[tuple[str, str]]:
    """The (heading, content) shown for the memories at `positions`, redacted where a rule
    says so."""
    rewritten = judgement.texts(full=positions)
    return [rewritten.get(m, (memories[m].heading, memories[m].content)) for m in positions]


async def search(
    discloser: Discloser,
    conn: Connection,
    principal: Principal,
    *,
    query: str,
    namespaces: tuple[str, ...],
    memory_types: tuple[MemoryType, ...] | None,
    limit: int,
    purpose: str | None,
    now: datetime,
) -> SearchResults:
    view = request_view(principal, purpose=purpose, namespaces=namespaces, budget_tokens=None)
    request: dict[str, Any] = {
        "query": query,
        "namespaces": list(namespaces),
        "memory_types": list(memory_types) if memory_types else None,
        "limit": limit,
        "purpose": purpose,
    }
    admitted = await discloser.admit(
        conn, principal, view, disclosure="search", request=request, at=now, issued_at=now
    )
    outcome = await retrieval.search(
        conn,
        discloser.embedder,
        principal,
        query=query,
        namespaces=namespaces,
        memory_types=memory_types,
        limit=None,
        now=now,
        profile=discloser.profile,
        recall_for=limit,
    )
    ranked = outcome.hits
    candidates = [r.candidate for r in ranked]
    judgement = admitted.judging.judge([memory_view(c) for c in candidates])
    parts = partition(judgement, limit)
    hits = parts.shown  # positions in `ranked`
    excluded = [*outcome.excluded, *parts.excluded]
    rewritten = judgement.texts(full=hits)
    ids = [c.memory_id for c in candidates]
    evaluation = shown_evaluation(judgement, (), [ids[m] for m in hits])
    results: list[dict[str, Any]] = []
    for position, (heading, content) in zip(hits, _texts(judgement, hits, candidates), strict=True):
        r = ranked[position]
        results.append(
            {
                "memory_id": r.candidate.memory_id,
                "heading": heading,
                "snippet": one_line(content)[:SNIPPET_CHARS],
                "memory_type": r.candidate.memory_type,
                "confidence": r.candidate.confidence,
                "distance": r.candidate.vector_distance,
                "score": r.score,
            }
        )
    excluded.sort(key=lambda e: e.memory_id)
    return await disclose_list(
        discloser,
        conn,
        principal,
        kind="search",
        shape=SearchResults,
        now=now,
        purpose=purpose,
        admitted=admitted,
        evaluation=evaluation,
        delivered=results,
        request=request,
        members={
            "assembler": discloser.makers.record(),
            "candidates": sorted(
                (candidate_record(r.candidate) for r in ranked), key=lambda x: x["memory_id"]
            ),
            "included": [
                {
                    "memory_id": ranked[position].candidate.memory_id,
                    "content_sha256": ranked[position].candidate.content_sha256,
                    "score_micros": ranked[position].score_micros,
                    "rewritten": position in rewritten,
                }
                for position in hits
            ],
            "excluded": [exclusion(e) for e in excluded],
        },
        disclosed_ids=[ranked[position].candidate.memory_id for position in hits],
        payload={"results": results, "excluded": [exclusion(e) for e in excluded]},
        account=Account("excluded", [ids[m] for m in hits]),
    )


def _decision(row: supersession_store.DecisionRow) -> dict[str, Any]:
    return {
        "decision_id": row.decision_id,
        "rule": row.rule,
        "newer": row.newer,
        "claim_key": row.claim_key,
        "score": None if row.score is None else f"{row.score:.3f}",
        "threshold": None if row.threshold is None else f"{row.threshold:.3f}",
        "job_id": row.job_id,
        "decided_at": rfc3339(row.decided_at),
    }


async def timeline(
    discloser: Discloser,
    conn: Connection,
    principal: Principal,
    ids: Sequence[str],
    purpose: str | None,
    now: datetime,
) -> Timeline:
    request, admitted = await _by_ids(
        discloser, conn, principal, ids, purpose, now, disclosure="timeline"
    )
    found = await retrieval.timeline(conn, principal, ids)
    judgement = admitted.judging.judge([memory_view(v) for v in found.entries])
    parts = partition(judgement)
    shown = [found.entries[m] for m in parts.shown]
    # Metadata only: no text of any memory is shown, so none is redacted or recorded.
    evaluation = shown_evaluation(judgement, (), ())
    retired_by = {
        d.older: d
        for d in await supersession_store.decisions_about(
            conn, principal.tenant_id, [v.memory_id for v in shown if v.superseded_decision]
        )
    }
    entries = [
        timeline_entry(v, _decision(retired_by[v.memory_id]) if v.memory_id in retired_by else None)
        for v in shown
    ]
    excluded = sorted(parts.excluded, key=lambda e: e.memory_id)
    return await disclose_list(
        discloser,
        conn,
        principal,
        kind="timeline",
        shape=Timeline,
        now=now,
        purpose=purpose,
        admitted=admitted,
        evaluation=evaluation,
        delivered=entries,
        request=request,
        members={
            "included": [{"memory_id": v.memory_id} for v in shown],
            "excluded": [exclusion(e) for e in excluded],
            "missing": found.missing,
        },
        disclosed_ids=[v.memory_id for v in shown],
        payload={
            "entries": entries,
            "missing": found.missing,
            "excluded": [exclusion(e) for e in excluded],
        },
        account=Account(
            "excluded", [v.memory_id for v in shown], missing=found.missing, requested=ids
        ),
    )


async def fetch(
    discloser: Discloser,
    conn: Connection,
    principal: Principal,
    ids: Sequence[str],
    purpose: str | None,
    now: datetime,
) -> FetchedMemories:
    request, admitted = await _by_ids(
        discloser, conn, principal, ids, purpose, now, disclosure="fetch"
    )
    unique = list(dict.fromkeys(ids))
    versions = await retrieval.readable_versions(conn, principal, unique)
    live: list[MemoryVersion] = []
    withheld: list[dict[str, str]] = []
    for memory_id in unique:
        version = versions.get(memory_id)
        if version is None:
            continue
        reason = withheld_reason(version, now)
        if reason is None:
            live.append(version)
        else:
            withheld.append({"memory_id": memory_id, "reason": reason, "detail": ""})
    judgement = admitted.judging.judge([memory_view(v) for v in live])
    parts = partition(judgement)
    withheld.extend(exclusion(e) for e in parts.excluded)
    delivered_versions = [live[m] for m in parts.shown]
    texts = _texts(judgement, parts.shown, live)
    rewritten = {live[m].memory_id for m in judgement.texts(full=parts.shown)}
    evaluation = shown_evaluation(judgement, (), [v.memory_id for v in delivered_versions])
    memories = [
        memory_payload(v, heading, content)
        for v, (heading, content) in zip(delivered_versions, texts, strict=True)
    ]
    missing = [i for i in unique if i not in versions]
    withheld.sort(key=lambda w: w["memory_id"])
    return await disclose_list(
        discloser,
        conn,
        principal,
        kind="fetch",
        shape=FetchedMemories,
        now=now,
        purpose=purpose,
        admitted=admitted,
        evaluation=evaluation,
        delivered=memories,
        request=request,
        members={
            "included": [
                {
                    "memory_id": v.memory_id,
                    "content_sha256": v.content_sha256,
                    "rewritten": v.memory_id in rewritten,
                }
                for v in delivered_versions
            ],
            "excluded": withheld,
            "missing": missing,
        },
        disclosed_ids=[v.memory_id for v in delivered_versions],
        payload={"memories": memories, "withheld": withheld, "missing": missing},
        account=Account(
            "withheld",
            [v.memory_id for v in delivered_versions],
            missing=missing,
            requested=unique,
        ),
    )


async def _by_ids(
    discloser: Discloser,
    conn: Connection,
    principal: Principal,
    ids: Sequence[str],
    purpose: str | None,
    now: datetime,
    *,
    disclosure: Disclosure,
) -> tuple[dict[str, Any], Admitted]:
    """A request by memory ids (timeline, fetch): its record, admitted by the policy in force
    (its view carries no namespaces and no budget)."""
    view = request_view(principal, purpose=purpose, namespaces=(), budget_tokens=None)
    request: dict[str, Any] = {"ids": list(ids), "purpose": purpose}
    admitted = await discloser.admit(
        conn, principal, view, disclosure=disclosure, request=request, at=now, issued_at=now
    )
    return request, admitted


async def disclose_list(
    discloser: Discloser,
    conn: Connection,
    principal: Principal,
    *,
    kind: str,
    shape: type[Listed],
    now: datetime,
    purpose: str | None,
    admitted: Admitted,
    evaluation: Evaluation,
    delivered: list[dict[str, Any]],
    request: dict[str, Any],
    members: dict[str, Any],
    disclosed_ids: list[str],
    payload: dict[str, Any],
    account: Account,
) -> Listed:
    """Receipt a list disclosure (search, timeline, fetch): the bundle hash covers the
    RFC 8785 form of exactly the list sent; the response is `payload` as `shape`, as the caller
    may read it (`gateway.usecases.access.need_to_know`)."""
    policy = admitted.policy
    policy_record = policy.record(evaluation)
    receipt_id = await discloser.recorder.record(
        conn,
        principal,
        kind=kind,
        issued_at=now,
        purpose=purpose,
        delivered=rfc8785.dumps(delivered),
        members={"request": request, "policy": policy_record, **members},
        disclosed_ids=disclosed_ids,
        policy_digest=policy.digest,
    )
    readable = account_for(principal, policy, policy_record, payload, account)
    return msgspec.convert({**readable, "receipt_id": receipt_id}, shape)
