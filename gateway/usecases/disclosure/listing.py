"""The list disclosures: search (ranked snippets) here; timeline and fetch by id in
`gateway.usecases.disclosure.lookup`; a session's history in `gateway.usecases.sessions.history`.
Each goes through the pipeline of `gateway.usecases.disclosure.pipeline`: admission
(the request stage, once), the memories judged by the same judgement, one application of its
verdict (`partition`: denied and capped memories are withheld, the rest shown up to a limit),
redaction of exactly the texts shown, then the receipt of exactly the list sent: its `bundle`
hashes the RFC 8785 form of that list (an auditor re-canonicalizes the response field).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TypeVar

import msgspec
import rfc8785

from gateway.core.model import Candidate, Exclusion, MemoryId, MemoryType
from gateway.core.preparation import rank_admitted
from gateway.core.profile import RankingProfile
from gateway.core.ranking import Ranked
from gateway.core.render import one_line
from gateway.domain.memory import MemoryVersion
from gateway.domain.principal import Principal
from gateway.responses.disclosures import (
    Excluded,
    SearchHit,
    SearchResults,
)
from gateway.responses.receipt_bodies import (
    SearchBody,
    SearchHitRecord,
    SearchRequestRecord,
)
from gateway.responses.receipt_parts import PolicyRecord
from gateway.store.database import Connection
from gateway.usecases.access.need_to_know import Account, Told, account_for
from gateway.usecases.access.policy import (
    may_deny,
    memory_view,
    request_view,
    shown_evaluation,
    verdict_of,
)
from gateway.usecases.disclosure import retrieval
from gateway.usecases.disclosure.pipeline import Admitted, Discloser
from gateway.usecases.disclosure.records import candidate_record, excluded, exclusion_record
from gateway.usecases.receiptlog.kinds import SEARCH, Kind
from policies import Judgement

__all__ = ["SNIPPET_CHARS", "disclose_list", "partition", "search", "shown_texts_of"]

SNIPPET_CHARS = 120
Body = TypeVar("Body", bound=msgspec.Struct)


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


def shown_texts_of(
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
    request = SearchRequestRecord(
        query=query,
        namespaces=list(namespaces),
        memory_types=list(memory_types) if memory_types else None,
        limit=limit,
        purpose=purpose,
    )
    admitted = await discloser.admit(
        conn,
        principal,
        view,
        disclosure=SEARCH,
        request=request,
        purpose=purpose,
        at=now,
        issued_at=now,
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
        policy=admitted.policy.bundle,
        profile=discloser.makers.profile,
        recall_for=limit,
    )
    ranked, unranked, judgement, unseen = _ranked_as_admitted(
        outcome, admitted, discloser.makers.profile, now
    )
    candidates = [r.candidate for r in ranked] + unranked
    parts = partition(judgement, limit)
    hits = parts.shown  # positions in `ranked`
    left_out = sorted([*outcome.excluded, *parts.excluded], key=lambda e: e.memory_id)
    rewritten = judgement.texts(full=hits)
    ids = [c.memory_id for c in candidates]
    record = admitted.policy.record(shown_evaluation(judgement, (), [ids[m] for m in hits]))
    results = [
        SearchHit(
            memory_id=ranked[position].candidate.memory_id,
            heading=heading,
            snippet=one_line(content)[:SNIPPET_CHARS],
            memory_type=ranked[position].candidate.memory_type,
            confidence=ranked[position].candidate.confidence,
            distance=ranked[position].candidate.vector_distance,
            score=ranked[position].score,
        )
        for position, (heading, content) in zip(
            hits, shown_texts_of(judgement, hits, candidates), strict=True
        )
    ]
    body = SearchBody(
        request=request,
        policy=record,
        assembler=discloser.makers.record(),
        candidates=sorted((candidate_record(c) for c in candidates), key=lambda x: x.memory_id),
        included=[
            SearchHitRecord(
                memory_id=ranked[position].candidate.memory_id,
                content_sha256=ranked[position].candidate.content_sha256,
                score_micros=ranked[position].score_micros,
                rewritten=position in rewritten,
            )
            for position in hits
        ],
        excluded=[exclusion_record(e) for e in left_out],
    )
    receipt_id, told = await disclose_list(
        discloser,
        conn,
        principal,
        kind=SEARCH,
        body=body,
        record=record,
        purpose=purpose,
        delivered=results,
        now=now,
        admitted=admitted,
        excluded=[excluded(e) for e in left_out],
        account=Account([ids[m] for m in hits], unseen=unseen),
    )
    return SearchResults(results, told.excluded, told.policy, receipt_id)


def _ranked_as_admitted(
    outcome: retrieval.SearchOutcome, admitted: Admitted, profile: RankingProfile, now: datetime
) -> tuple[list[Ranked], list[Candidate], Judgement, frozenset[str]]:
    """The live matches ranked over those the policy admits (as a bundle's assembler that
    ranks what it admits does: no score shown depends on a memory the policy denies), the
    denied ones after them, unranked, the judgement of them all in that order, and the dead
    matches the policy would deny. When the policy denies none of them, the ranking as found."""
    ranked = outcome.hits
    judgement = admitted.judging.judge([memory_view(r.candidate) for r in ranked])
    unseen = frozenset[str]()
    dead = {e.memory_id for e in outcome.excluded}
    if dead and may_deny(admitted.policy.bundle):
        retired = [c for c in outcome.recalled if c.memory_id in dead]
        views = [memory_view(c) for c in retired]
        unseen = frozenset(verdict_of(admitted.judging.judge(views)).denied)
    hidden = verdict_of(judgement).denied.keys() | unseen
    if not hidden:
        return ranked, [], judgement, unseen
    reranked, _ = rank_admitted(outcome.recalled, profile, now, hidden)
    unranked = [r.candidate for r in ranked if r.candidate.memory_id in hidden]
    views = [memory_view(c) for c in [*(r.candidate for r in reranked), *unranked]]
    return list(reranked), unranked, admitted.judging.judge(views), unseen


async def disclose_list(
    discloser: Discloser,
    conn: Connection,
    principal: Principal,
    *,
    kind: Kind[Body],
    body: Body,
    record: PolicyRecord,
    purpose: str | None,
    delivered: Sequence[msgspec.Struct],
    now: datetime,
    admitted: Admitted,
    excluded: Sequence[Excluded],
    account: Account,
) -> tuple[str, Told]:
    """Receipt a list disclosure (search, timeline, fetch, history): the bundle hash covers the
    RFC 8785 form of exactly the list sent. The receipt id, and what the response may say of
    what was left out (`gateway.usecases.access.need_to_know`)."""
    policy = admitted.policy
    receipt_id = await discloser.recorder.record(
        conn,
        principal,
        kind=kind,
        issued_at=now,
        purpose=purpose,
        delivered=rfc8785.dumps(msgspec.to_builtins(list(delivered))),
        members=body,
        disclosed_ids=list(account.received),
        policy_digest=policy.digest,
    )
    return receipt_id, account_for(principal, policy, record, excluded, account)
