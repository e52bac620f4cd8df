"""Applying supersession inside a write's transaction: the rules (gateway.core.supersession)
decide, this module records each decision and retires the older version through the one retire
path (`superseded_by`, which liveness already reads), and opens conflicts.

A compiled fact that is superseded takes its raw source turns with it (rule `source`): the turn
memories it was distilled from state the old value, and a bundle must not present that value as
current. The facts compiled from the same turns stand in for whatever else the turn said.

Nothing is retired that the writer may not see (`gateway.usecases.access.sight`): a live fact
for the same claim it may not see stays live beside the new one, in a conflict it is not shown
(an auditor, or an agent that may see both sides, resolves it); a fact alike it may not see is
left alone, and so are the turns it may not see that state a superseded value.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime

from gateway.core.extraction.typed_values import says_nothing
from gateway.core.supersession import (
    Claimant,
    Conflict,
    Decision,
    Judgement,
    judge_claim,
    judge_similar,
    mentions,
    stale_phrases,
    states,
)
from gateway.domain.clock import IdFactory
from gateway.store import memories as memory_store
from gateway.store import supersessions as store
from gateway.store.database import Connection
from gateway.usecases.access.sight import Sight

__all__ = ["Settled", "Superseder"]


def _claimant(version: store.LiveVersion) -> Claimant:
    return Claimant(
        memory_id=version.memory_id,
        memory_type=version.memory_type,
        text=version.text,
        claim_key=version.claim_key,
        valid_from=version.valid_from,
        created_at=version.created_at,
        content_sha256=version.content_sha256,
        value=version.value,
        previous=version.previous,
    )


async def _hidden(conn: Connection, sight: Sight | None, ids: Collection[str]) -> frozenset[str]:
    """Of `ids`, those hidden from the writer (`sight`; None: a writer that sees everything)."""
    return frozenset() if sight is None else await sight.hidden_ids(conn, ids)


def _beside_hidden(judgement: Judgement, new: Claimant, hidden: Collection[str]) -> Judgement:
    """`judgement` of the claim among the versions the writer sees, and a conflict between the
    new version, if it stands, and each live one it may not see: neither is picked silently."""
    assert new.claim_key is not None
    if not hidden or any(d.older == new.memory_id for d in judgement.decisions):
        return judgement
    beside = tuple(
        Conflict(min(h, new.memory_id), max(h, new.memory_id), new.claim_key)
        for h in sorted(hidden)
    )
    return Judgement(judgement.decisions, judgement.conflicts + beside)


@dataclass(frozen=True, slots=True)
class Settled:
    superseded: int = 0
    conflicts: int = 0

    def __add__(self, other: Settled) -> Settled:
        return Settled(self.superseded + other.superseded, self.conflicts + other.conflicts)


@dataclass(frozen=True, slots=True)
class Superseder:
    threshold: float  # the similarity rule's Jaccard threshold (GATEWAY_SUPERSEDE_JACCARD)
    new_id: IdFactory

    async def settle(
        self,
        conn: Connection,
        tenant_id: str,
        namespace: str,
        new: Claimant,
        *,
        compiled: bool,
        at: datetime,
        job_id: str | None,
        sight: Sight | None = None,
    ) -> Settled:
        """Decide what the new live version `new` supersedes (or is superseded by) and record
        it, with the raw turns stating a value it replaced, among the versions its writer may
        see (`sight`). The caller holds the namespace's lock (`store.lock_namespaces`)."""
        if new.claim_key is not None:
            versions = await store.claim_competitors(
                conn, tenant_id, namespace, new.claim_key, new.memory_id
            )
            hidden = await _hidden(conn, sight, [v.memory_id for v in versions])
            live = [_claimant(v) for v in versions if v.memory_id not in hidden]
            judgement = _beside_hidden(judge_claim(new, live), new, hidden)
        elif compiled:
            probe = store.LiveVersion(
                new.memory_id,
                new.memory_type,
                new.text,
                new.claim_key,
                new.valid_from,
                new.created_at,
                new.content_sha256,
                new.value,
                new.previous,
            )
            alike = await store.similar_competitors(conn, tenant_id, namespace, probe)
            hidden = await _hidden(conn, sight, [v.memory_id for v in alike])
            live = [_claimant(v) for v in alike if v.memory_id not in hidden]
            judgement = judge_similar(new, live, self.threshold)
        else:
            live, judgement = [], Judgement()
        settled = await self._apply(conn, tenant_id, namespace, judgement, at, job_id, sight)
        # Raw turns that state a value no longer current: the superseded facts' values, and the
        # value a change "from X to Y" names, each said by the time the newer fact holds.
        claimants = {c.memory_id: c for c in [*live, new]}
        stale: list[tuple[str, Claimant]] = []
        for decision in judgement.decisions:
            older, newer = claimants.get(decision.older), claimants[decision.newer]
            if older is not None and older.value and older.value != newer.value:
                stale.append((older.value, newer))
        if new.previous:
            stale.append((new.previous, new))
        for value, newer in stale:
            settled += await self._retire_stating(
                conn, tenant_id, namespace, value, newer, at, job_id, sight
            )
        return settled

    async def _retire_stating(
        self,
        conn: Connection,
        tenant_id: str,
        namespace: str,
        value: str,
        newer: Claimant,
        at: datetime,
        job_id: str | None,
        sight: Sight | None,
    ) -> Settled:
        if newer.value and mentions(newer.value, value):
            return (
                Settled()
            )  # "Pro" replaced by "Pro Plus": every statement of the new says the old
        if says_nothing(value):
            # "I" read as a value: nearly every turn says it and states nothing of the claim by
            # it (one such retired 6,736 turns of LongMemEval_S in one compile).
            return Settled()
        retired = 0
        for phrase in stale_phrases(value):
            stating = await store.turns_stating(conn, tenant_id, namespace, phrase, newer.instant)
            hidden = await _hidden(conn, sight, [memory_id for memory_id, _ in stating])
            for memory_id, content in stating:
                if memory_id not in hidden and states(content, phrase, value, newer.claim_key):
                    decision = Decision(memory_id, newer.memory_id, "value", newer.claim_key)
                    recorded = await self.record(conn, tenant_id, namespace, decision, at, job_id)
                    retired += recorded is not None
        return Settled(superseded=retired)

    async def record(
        self,
        conn: Connection,
        tenant_id: str,
        namespace: str,
        decision: Decision,
        at: datetime,
        job_id: str | None = None,
    ) -> str | None:
        """Record one decision and retire its older version; None (nothing recorded) when the
        older one was already retired meanwhile."""
        decision_id = self.new_id(at)
        retired = await memory_store.retire(
            conn,
            tenant_id,
            decision.older,
            at=at,
            reason="superseded",
            superseded_by=decision.newer,
            decision=decision_id,
        )
        if not retired:
            return None
        row = store.DecisionRow(
            decision_id=decision_id,
            namespace=namespace,
            older=decision.older,
            newer=decision.newer,
            rule=decision.rule,
            score=decision.score,
            threshold=decision.threshold,
            claim_key=decision.claim_key,
            job_id=job_id,
            decided_at=at,
        )
        await store.insert_decision(conn, tenant_id, row)
        return decision_id

    async def supersede(
        self,
        conn: Connection,
        tenant_id: str,
        namespace: str,
        decision: Decision,
        at: datetime,
        job_id: str | None = None,
        sight: Sight | None = None,
    ) -> str | None:
        """Record `decision` and retire with the older fact the live raw turns it came from
        (rule `source`) that its writer may see; the decision's id, or None when the older one
        was already retired."""
        decision_id = await self.record(conn, tenant_id, namespace, decision, at, job_id)
        if decision_id is None:
            return None
        sources = await store.sources_of(conn, tenant_id, decision.older)
        hidden = await _hidden(conn, sight, sources)
        for source in sources:
            retire_turn = Decision(source, decision.newer, "source", decision.claim_key)
            if (
                source != decision.newer
                and source not in hidden
                and await self._is_live_turn(conn, tenant_id, source)
            ):
                await self.record(conn, tenant_id, namespace, retire_turn, at, job_id)
        return decision_id

    async def resolve(
        self,
        conn: Connection,
        tenant_id: str,
        namespace: str,
        decision: Decision,
        at: datetime,
        sight: Sight | None = None,
    ) -> str | None:
        """A conflict resolved: the loser superseded with its turns (as `supersede`), and the
        turns and digests stating its value retired, as for any value no longer current (those
        its resolver may see, `sight`)."""
        assert decision.claim_key is not None
        live = {
            v.memory_id: v
            for v in await store.claim_competitors(
                conn, tenant_id, namespace, decision.claim_key, ""
            )
        }
        decision_id = await self.supersede(conn, tenant_id, namespace, decision, at, None, sight)
        loser, winner = live.get(decision.older), live.get(decision.newer)
        if decision_id and loser and winner and loser.value and loser.value != winner.value:
            await self._retire_stating(
                conn, tenant_id, namespace, loser.value, _claimant(winner), at, None, sight
            )
        return decision_id

    async def _apply(
        self,
        conn: Connection,
        tenant_id: str,
        namespace: str,
        judgement: Judgement,
        at: datetime,
        job_id: str | None,
        sight: Sight | None,
    ) -> Settled:
        superseded = 0
        for decision in judgement.decisions:
            if await self.supersede(conn, tenant_id, namespace, decision, at, job_id, sight):
                superseded += 1
        opened = 0
        for pair in judgement.conflicts:
            row = store.ConflictRow(
                conflict_id=self.new_id(at),
                namespace=namespace,
                claim_key=pair.claim_key,
                first_id=pair.first,
                second_id=pair.second,
                opened_at=at,
                job_id=job_id,
                resolved_at=None,
                winner=None,
                reason=None,
                decision_id=None,
            )
            opened += await store.insert_conflict(conn, tenant_id, row)
        return Settled(superseded, opened)

    async def _is_live_turn(self, conn: Connection, tenant_id: str, memory_id: str) -> bool:
        versions = await memory_store.fetch_versions(conn, tenant_id, [memory_id])
        return any(
            v.source_type == "turn" and v.deleted_at is None and v.erased_at is None
            for v in versions
        )
