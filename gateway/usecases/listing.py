"""The list disclosures: search (ranked snippets), timeline (a memory's versions) and fetch
(memories in full). Each judges by the policy in force, then receipts exactly the list it sends:
the receipt's `bundle` hashes the RFC 8785 form of that list (an auditor re-canonicalizes the
response field). The shape they share with context is `gateway.usecases.disclosure`.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import rfc8785

from gateway.core.model import Exclusion, MemoryId, MemoryType
from gateway.core.render import one_line
from gateway.memory import MemoryVersion
from gateway.principal import Principal
from gateway.store.database import Connection
from gateway.usecases import context as retrieval
from gateway.usecases.disclosure import Disclosed, Discloser
from gateway.usecases.memories import withheld_reason
from gateway.usecases.policy import (
    PolicyInForce,
    judged_exclusions,
    memory_view,
    request_view,
    verdict,
)
from gateway.usecases.records import (
    candidate_record,
    exclusion,
    memory_payload,
    timeline_entry,
)
from gateway.usecases.refusal import Disclosure
from policies import Evaluation, evaluate, judge

__all__ = ["SNIPPET_CHARS", "fetch", "search", "timeline"]

SNIPPET_CHARS = 120


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
) -> Disclosed:
    view = request_view(principal, purpose=purpose, namespaces=namespaces, budget_tokens=None)
    request: dict[str, Any] = {
        "query": query,
        "namespaces": list(namespaces),
        "memory_types": list(memory_types) if memory_types else None,
        "limit": limit,
        "purpose": purpose,
    }
    policy = await discloser.policy_for(
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
    judgement = judge(policy.bundle, view, [memory_view(r.candidate) for r in ranked], now)
    judged = judged_exclusions(judgement)
    hits: list[int] = []  # positions in `ranked`
    excluded = list(outcome.excluded)
    for position, r in enumerate(ranked):
        memory_id = r.candidate.memory_id
        if memory_id in judged.denied:
            excluded.append(judged.denied[memory_id])
        elif memory_id in judged.capped:
            excluded.append(judged.capped[memory_id])
        elif len(hits) < limit:
            hits.append(position)
        else:
            excluded.append(Exclusion(memory_id, "below_top_k", f"beyond the limit of {limit}"))
    # Only the hits are shown (heading and snippet): only they are redacted and recorded so.
    rewritten = judgement.texts(full=hits)
    evaluation = judgement.evaluation(full=hits)
    results: list[dict[str, Any]] = []
    for position in hits:
        r = ranked[position]
        heading, content = rewritten.get(position, (r.candidate.heading, r.candidate.content))
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
    return await _disclose_list(
        discloser,
        conn,
        principal,
        kind="search",
        now=now,
        purpose=purpose,
        policy=policy,
        evaluation=evaluation,
        delivered=results,
        request=request,
        members={
            "assembler": discloser.assembler_record(),
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
    )


async def timeline(
    discloser: Discloser,
    conn: Connection,
    principal: Principal,
    ids: Sequence[str],
    purpose: str | None,
    now: datetime,
) -> Disclosed:
    view, request, policy = await _by_ids(
        discloser, conn, principal, ids, purpose, now, disclosure="timeline"
    )
    found = await retrieval.timeline(conn, principal, ids)
    evaluation = evaluate(policy.bundle, view, [memory_view(v) for v in found.entries], now)
    judged = verdict(evaluation, found.entries)
    shown = [v for v in found.entries if MemoryId(v.memory_id) not in judged.denied]
    entries = [timeline_entry(v) for v in shown]
    excluded = sorted(judged.denied.values(), key=lambda e: e.memory_id)
    return await _disclose_list(
        discloser,
        conn,
        principal,
        kind="timeline",
        now=now,
        purpose=purpose,
        policy=policy,
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
    )


async def fetch(
    discloser: Discloser,
    conn: Connection,
    principal: Principal,
    ids: Sequence[str],
    purpose: str | None,
    now: datetime,
) -> Disclosed:
    view, request, policy = await _by_ids(
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
    evaluation = evaluate(policy.bundle, view, [memory_view(v) for v in live], now)
    judged = verdict(evaluation, live)
    memories: list[dict[str, Any]] = []
    delivered_versions: list[MemoryVersion] = []
    for version in live:
        memory_id = MemoryId(version.memory_id)
        blocked = judged.denied.get(memory_id) or judged.capped.get(memory_id)
        if blocked is not None:
            withheld.append(exclusion(blocked))
            continue
        heading, content = judged.rewritten.get(memory_id, (version.heading, version.content))
        memories.append(memory_payload(version, heading, content))
        delivered_versions.append(version)
    missing = [i for i in unique if i not in versions]
    withheld.sort(key=lambda w: w["memory_id"])
    return await _disclose_list(
        discloser,
        conn,
        principal,
        kind="fetch",
        now=now,
        purpose=purpose,
        policy=policy,
        evaluation=evaluation,
        delivered=memories,
        request=request,
        members={
            "included": [
                {
                    "memory_id": v.memory_id,
                    "content_sha256": v.content_sha256,
                    "rewritten": MemoryId(v.memory_id) in judged.rewritten,
                }
                for v in delivered_versions
            ],
            "excluded": withheld,
            "missing": missing,
        },
        disclosed_ids=[v.memory_id for v in delivered_versions],
        payload={"memories": memories, "withheld": withheld, "missing": missing},
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
) -> tuple[dict[str, object], dict[str, Any], PolicyInForce]:
    """A request by memory ids (timeline, fetch): its policy view (no namespaces, no budget),
    its record, and the policy in force once the request stage lets it through."""
    view = request_view(principal, purpose=purpose, namespaces=(), budget_tokens=None)
    request: dict[str, Any] = {"ids": list(ids), "purpose": purpose}
    policy = await discloser.policy_for(
        conn, principal, view, disclosure=disclosure, request=request, at=now, issued_at=now
    )
    return view, request, policy


async def _disclose_list(
    discloser: Discloser,
    conn: Connection,
    principal: Principal,
    *,
    kind: str,
    now: datetime,
    purpose: str | None,
    policy: PolicyInForce,
    evaluation: Evaluation,
    delivered: list[dict[str, Any]],
    request: dict[str, Any],
    members: dict[str, Any],
    disclosed_ids: list[str],
    payload: dict[str, Any],
) -> Disclosed:
    """Receipt a list disclosure (search, timeline, fetch): the bundle hash covers the
    RFC 8785 form of exactly the list sent."""
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
    return Disclosed({**payload, "policy": policy_record, "receipt_id": receipt_id}, receipt_id)
