"""The disclosures by memory id: timeline (a memory's versions, metadata only) and fetch
(memories in full), through the list pipeline of `gateway.usecases.disclosure.listing`: the
request stage once, the memories judged, denied and capped ones withheld, redaction of exactly
the texts shown, the receipt of exactly the list sent."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from gateway.core.instants import rfc3339
from gateway.core.model import Exclusion, MemoryId
from gateway.domain.memory import MemoryVersion
from gateway.domain.principal import Principal
from gateway.responses.disclosures import (
    FetchedMemories,
    FetchedMemory,
    Supersession,
    Timeline,
    TimelineEntry,
)
from gateway.responses.receipt_bodies import (
    FetchBody,
    FetchedRecord,
    IdsRequestRecord,
    TimelineBody,
    TimelineRecord,
)
from gateway.store import memories as memory_store
from gateway.store import supersessions as supersession_store
from gateway.store.database import Connection
from gateway.usecases.access.need_to_know import Account
from gateway.usecases.access.policy import (
    may_deny,
    memory_view,
    request_view,
    shown_evaluation,
    verdict_of,
)
from gateway.usecases.disclosure import retrieval
from gateway.usecases.disclosure.listing import disclose_list, partition, shown_texts_of
from gateway.usecases.disclosure.pipeline import Admitted, Discloser
from gateway.usecases.disclosure.records import excluded, exclusion_record
from gateway.usecases.memories.writer import withheld_reason
from gateway.usecases.receiptlog.kinds import FETCH, TIMELINE, Kind

__all__ = ["fetch", "timeline"]


def _decision(row: supersession_store.DecisionRow) -> Supersession:
    return Supersession(
        decision_id=row.decision_id,
        rule=row.rule,
        newer=row.newer,
        claim_key=row.claim_key,
        score=None if row.score is None else f"{row.score:.3f}",
        threshold=None if row.threshold is None else f"{row.threshold:.3f}",
        job_id=row.job_id,
        decided_at=rfc3339(row.decided_at),
    )


def _timeline_entry(v: MemoryVersion, decision: Supersession | None) -> TimelineEntry:
    """A version's history; `decision`: the supersession that retired it (rule, score, …)."""
    return TimelineEntry(
        memory_id=v.memory_id,
        namespace=v.namespace,
        memory_type=v.memory_type,
        created_at=rfc3339(v.created_at),
        supersedes=v.supersedes,
        superseded_by=v.superseded_by,
        deleted_at=rfc3339(v.deleted_at) if v.deleted_at else None,
        deleted_reason=v.deleted_reason,
        expires_at=rfc3339(v.expires_at) if v.expires_at else None,
        valid_from=rfc3339(v.valid_from) if v.valid_from else None,
        extractor=v.extractor,
        sources=list(v.sources),
        supersession=decision,
    )


def _fetched(v: MemoryVersion, heading: str, content: str) -> FetchedMemory:
    return FetchedMemory(
        memory_id=v.memory_id,
        namespace=v.namespace,
        memory_type=v.memory_type,
        heading=heading,
        content=content,
        confidence=v.confidence,
        labels=list(v.labels),
        source_type=v.source_type,
        source_ref=v.source_ref,
        claim_key=v.claim_key,
        supersedes=v.supersedes,
        superseded_by=v.superseded_by,
        agent_id=v.agent_id,
        created_at=rfc3339(v.created_at),
        expires_at=rfc3339(v.expires_at) if v.expires_at else None,
        content_sha256=v.content_sha256,
        tokens=v.tokens,
        heading_tokens=v.heading_tokens,
        embedding_model=v.embedding_model,
    )


async def timeline(
    discloser: Discloser,
    conn: Connection,
    principal: Principal,
    ids: Sequence[str],
    purpose: str | None,
    now: datetime,
) -> Timeline:
    request, admitted = await _by_ids(
        discloser, conn, principal, ids, purpose, now, disclosure=TIMELINE
    )
    found = await retrieval.timeline(conn, principal, ids)
    judgement = admitted.judging.judge([memory_view(v) for v in found.entries])
    parts = partition(judgement)
    shown = [found.entries[m] for m in parts.shown]
    # Metadata only: no text of any memory is shown, so none is redacted or recorded.
    record = admitted.policy.record(shown_evaluation(judgement, (), ()))
    retired_by = {
        d.older: d
        for d in await supersession_store.decisions_about(
            conn, principal.tenant_id, [v.memory_id for v in shown if v.superseded_decision]
        )
    }
    unnamed = await _unnamed_links(
        conn, principal, admitted, shown, [d.newer for d in retired_by.values()]
    )
    entries = [
        _timeline_entry(
            _unlinked(v, unnamed),
            _decision(retired_by[v.memory_id])
            if v.memory_id in retired_by and retired_by[v.memory_id].newer not in unnamed
            else None,
        )
        for v in shown
    ]
    left_out = sorted(parts.excluded, key=lambda e: e.memory_id)
    body = TimelineBody(
        request=request,
        policy=record,
        included=[TimelineRecord(memory_id=v.memory_id) for v in shown],
        excluded=[exclusion_record(e) for e in left_out],
        missing=found.missing,
    )
    received = [v.memory_id for v in shown]
    receipt_id, told = await disclose_list(
        discloser,
        conn,
        principal,
        kind=TIMELINE,
        body=body,
        record=record,
        purpose=purpose,
        delivered=entries,
        now=now,
        admitted=admitted,
        excluded=[excluded(e) for e in left_out],
        account=Account(received, missing=found.missing, requested=ids),
    )
    return Timeline(entries, told.missing or [], told.excluded, told.policy, receipt_id)


async def fetch(
    discloser: Discloser,
    conn: Connection,
    principal: Principal,
    ids: Sequence[str],
    purpose: str | None,
    now: datetime,
) -> FetchedMemories:
    request, admitted = await _by_ids(
        discloser, conn, principal, ids, purpose, now, disclosure=FETCH
    )
    unique = list(dict.fromkeys(ids))
    versions = await retrieval.readable_versions(conn, principal, unique)
    live: list[MemoryVersion] = []
    retired: list[MemoryVersion] = []
    withheld: list[Exclusion] = []
    for memory_id in unique:
        version = versions.get(memory_id)
        if version is None:
            continue
        reason = withheld_reason(version, now)
        if reason is None:
            live.append(version)
        else:
            retired.append(version)
            withheld.append(Exclusion(MemoryId(memory_id), reason, ""))
    judgement = admitted.judging.judge([memory_view(v) for v in live])
    parts = partition(judgement)
    withheld.extend(parts.excluded)
    withheld.sort(key=lambda w: w.memory_id)
    delivered = [live[m] for m in parts.shown]
    unnamed = await _unnamed_links(conn, principal, admitted, delivered)
    delivered = [_unlinked(v, unnamed) for v in delivered]
    texts = shown_texts_of(judgement, parts.shown, live)
    rewritten = {live[m].memory_id for m in judgement.texts(full=parts.shown)}
    record = admitted.policy.record(
        shown_evaluation(judgement, (), [v.memory_id for v in delivered])
    )
    memories = [
        _fetched(v, heading, content)
        for v, (heading, content) in zip(delivered, texts, strict=True)
    ]
    missing = [i for i in unique if i not in versions]
    body = FetchBody(
        request=request,
        policy=record,
        included=[
            FetchedRecord(
                memory_id=v.memory_id,
                content_sha256=v.content_sha256,
                rewritten=v.memory_id in rewritten,
            )
            for v in delivered
        ],
        excluded=[exclusion_record(e) for e in withheld],
        missing=missing,
    )
    receipt_id, told = await disclose_list(
        discloser,
        conn,
        principal,
        kind=FETCH,
        body=body,
        record=record,
        purpose=purpose,
        delivered=memories,
        now=now,
        admitted=admitted,
        excluded=[excluded(e) for e in withheld],
        account=Account(
            [v.memory_id for v in delivered],
            missing=missing,
            requested=unique,
            unseen=_denied(admitted, retired),
        ),
    )
    return FetchedMemories(memories, told.excluded, told.missing or [], told.policy, receipt_id)


async def _unnamed_links(
    conn: Connection,
    principal: Principal,
    admitted: Admitted,
    shown: Sequence[MemoryVersion],
    newer: Sequence[str] = (),
) -> frozenset[str]:
    """The memories the `shown` versions name (the one each supersedes, the one that superseded
    it, `newer` ones of the decisions that retired them, the memories among their sources) that
    the caller may not see, and so that no field names to it: outside its namespaces, or, to
    an agent, denied by the policy (as `need_to_know` narrows; auditors and admins see what
    their namespaces hold). Turn ids among the sources name no memory: kept as they are."""
    ids = {v.memory_id for v in shown}
    links = {
        link
        for v in shown
        for link in (v.supersedes, v.superseded_by, *v.sources)
        if link is not None and link not in ids
    } | (set(newer) - ids)
    if not links:
        return frozenset()
    versions = await memory_store.fetch_versions(conn, principal.tenant_id, sorted(links))
    found = {v.memory_id for v in versions}
    hidden = {v.memory_id for v in versions if not principal.may_use(v.namespace)}
    if principal.role == "agent" and may_deny(admitted.policy.bundle):
        readable = [v for v in versions if v.memory_id not in hidden]
        hidden |= _denied(admitted, readable)
    sources = {s for v in shown for s in v.sources}
    # An id named as a version (not only as a source) that names no memory is not named either.
    return frozenset(hidden | {link for link in links - found if link not in sources})


def _unlinked(version: MemoryVersion, unnamed: frozenset[str]) -> MemoryVersion:
    """`version` naming none of `unnamed` (its supersession links and sources)."""
    if not unnamed:
        return version
    return dataclasses.replace(
        version,
        supersedes=None if version.supersedes in unnamed else version.supersedes,
        superseded_by=None if version.superseded_by in unnamed else version.superseded_by,
        sources=[s for s in version.sources if s not in unnamed],
    )


def _denied(admitted: Admitted, versions: Sequence[MemoryVersion]) -> frozenset[str]:
    """Of versions not judged for the list itself (withheld as dead, or named by one shown),
    those the policy would deny: never named to an agent, as the live ones it denies are not.
    Only a bundle that can deny judges them."""
    if not versions or not may_deny(admitted.policy.bundle):
        return frozenset()
    judgement = admitted.judging.judge([memory_view(v) for v in versions])
    return frozenset(verdict_of(judgement).denied)


async def _by_ids(
    discloser: Discloser,
    conn: Connection,
    principal: Principal,
    ids: Sequence[str],
    purpose: str | None,
    now: datetime,
    *,
    disclosure: Kind[Any],
) -> tuple[IdsRequestRecord, Admitted]:
    """A request by memory ids (timeline, fetch): its record, admitted by the policy in force
    (its view carries no namespaces and no budget)."""
    view = request_view(principal, purpose=purpose, namespaces=(), budget_tokens=None)
    request = IdsRequestRecord(ids=list(ids), purpose=purpose)
    admitted = await discloser.admit(
        conn,
        principal,
        view,
        disclosure=disclosure,
        request=request,
        purpose=purpose,
        at=now,
        issued_at=now,
    )
    return request, admitted
