"""Conflicts (ARCHITECTURE §12): two live facts for one claim that the rules could not order.
Listed for whoever may read their namespace; resolved by naming the winner, which supersedes the
other side (a decision with rule `resolved`).

A conflict is shown only to whom may see both its sides (`gateway.usecases.access.sight`), their
headings as the policy shows them: one side alone would name, in the other's place, a memory
the policy withholds, so a conflict with a side an agent may not see is, to that agent, no
conflict at all (not listed, 404 to resolve, as for an unknown one). Its bundles likewise show
a conflict only with both sides delivered (`gateway.core.bundle`). An auditor, an admin, or an
agent that may see both sides resolves it."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field

from gateway.core.supersession import Decision
from gateway.domain.clock import Clock
from gateway.domain.errors import ConflictError, FieldError, InvalidRequestError, NotFoundError
from gateway.domain.memory import MemoryVersion
from gateway.domain.principal import Principal
from gateway.requests import ConflictsQuery, ResolveIn
from gateway.responses.compiling import ConflictEntry, ConflictPage, ConflictSide
from gateway.store import memories as memory_store
from gateway.store import supersessions as store
from gateway.store.database import Connection
from gateway.store.pool import Pool
from gateway.usecases.access.policy import PolicyRegistry, memory_view
from gateway.usecases.access.sight import Sight, sight_of
from gateway.usecases.access.work import unit_of_work
from gateway.usecases.memories.supersession import Superseder
from gateway.usecases.receiptlog.recorder import rfc3339

__all__ = ["Conflicts"]


def _side(version: MemoryVersion | None, memory_id: str) -> ConflictSide:
    if version is None:  # pragma: no cover - a conflict names versions that exist
        raise NotFoundError(f"memory {memory_id} not found")
    return ConflictSide(
        memory_id=version.memory_id,
        heading=version.heading,
        agent_id=version.agent_id,
        written_by_key=version.written_by_key,
        valid_from=rfc3339(version.valid_from) if version.valid_from else None,
        created_at=rfc3339(version.created_at),
    )


def _shown(sight: Sight, versions: Sequence[MemoryVersion]) -> dict[str, MemoryVersion]:
    """The versions the caller may see, by id, each with its heading as the policy shows it."""
    hidden = sight.hidden(versions)
    shown = [v for v in versions if v.memory_id not in hidden]
    judgement = sight.judge([memory_view(v) for v in shown])
    rewritten = {} if judgement is None else judgement.texts(headings=range(len(shown)))
    for position, (heading, _) in rewritten.items():
        shown[position] = dataclasses.replace(shown[position], heading=heading)
    return {v.memory_id: v for v in shown}


async def _entries(
    conn: Connection, sight: Sight, rows: Sequence[store.ConflictRow]
) -> list[ConflictEntry]:
    """The entries of `rows` whose both sides the caller may see."""
    ids = sorted({i for r in rows for i in (r.first_id, r.second_id)})
    tenant_id = sight.principal.tenant_id
    versions = _shown(sight, await memory_store.fetch_versions(conn, tenant_id, ids))
    return [
        ConflictEntry(
            conflict_id=r.conflict_id,
            namespace=r.namespace,
            claim_key=r.claim_key,
            sides=[_side(versions.get(i), i) for i in (r.first_id, r.second_id)],
            opened_at=rfc3339(r.opened_at),
            job_id=r.job_id,
            resolved_at=rfc3339(r.resolved_at) if r.resolved_at else None,
            winner=r.winner,
            reason=r.reason,
            decision_id=r.decision_id,
        )
        for r in rows
        if r.first_id in versions and r.second_id in versions
    ]


def _namespaces(principal: Principal, namespace: str | None) -> tuple[str, ...] | None:
    if namespace is not None:
        principal.require_namespace(namespace)
        return (namespace,)
    return None if principal.all_namespaces else tuple(sorted(principal.namespaces))


@dataclass(frozen=True, slots=True)
class Conflicts:
    pool: Pool
    superseder: Superseder
    clock: Clock
    # The policy in force judges which sides a caller may see (the disclosures' registry).
    policies: PolicyRegistry = field(default_factory=PolicyRegistry)

    async def page(self, authorization: str | None, query: ConflictsQuery) -> ConflictPage:
        open_only, after, limit = query.status == "open", query.after, query.limit
        async with unit_of_work(self.pool, authorization) as (conn, principal):
            namespaces = _namespaces(principal, query.namespace)
            sight = await sight_of(
                conn, self.policies, principal, self.clock(), namespaces=namespaces or ()
            )
            # Those the caller may see, a page's worth and one more (to know there are more):
            # reading on past the ones it may not see, which no answer may count.
            entries: list[ConflictEntry] = []
            while len(entries) <= limit:
                rows = await store.conflicts_page(
                    conn,
                    principal.tenant_id,
                    namespaces,
                    open_only=open_only,
                    after=after,
                    limit=limit + 1,
                )
                entries += await _entries(conn, sight, rows)
                if len(rows) <= limit:
                    break
                after = rows[-1].conflict_id
        more = len(entries) > limit
        entries = entries[:limit]
        return ConflictPage(entries, entries[-1].conflict_id if more else None)

    async def resolve(
        self, authorization: str | None, conflict_id: str, ask: ResolveIn
    ) -> ConflictEntry:
        """The winner stands, the other side is superseded by it (rule `resolved`)."""
        winner, reason = ask.winner, ask.reason
        async with unit_of_work(self.pool, authorization) as (conn, principal):
            principal.require_role("agent", "admin")
            row = await store.conflict(conn, principal.tenant_id, conflict_id)
            if row is None or not principal.may_use(row.namespace):
                raise NotFoundError(f"conflict {conflict_id} not found", code="conflict_not_found")
            if row.resolved_at is not None:
                raise ConflictError(
                    f"conflict {conflict_id} was already resolved for {row.winner}",
                    code="conflict_resolved",
                )
            sides = (row.first_id, row.second_id)
            sight = await sight_of(
                conn, self.policies, principal, self.clock(), namespaces=(row.namespace,)
            )
            if await sight.hidden_ids(conn, sides):  # a side it may not see: no such conflict
                raise NotFoundError(f"conflict {conflict_id} not found", code="conflict_not_found")
            if winner not in sides:
                raise InvalidRequestError(
                    "winner is not a side of this conflict",
                    (FieldError("winner", f"expected {sides[0]} or {sides[1]}"),),
                )
            loser = sides[1] if winner == sides[0] else sides[0]
            now = self.clock()
            await store.lock_namespaces(conn, principal.tenant_id, [row.namespace])
            decision_id = await self.superseder.resolve(
                conn,
                principal.tenant_id,
                row.namespace,
                Decision(loser, winner, "resolved", row.claim_key),
                now,
                sight,
            )
            await store.resolve_conflict(
                conn,
                principal.tenant_id,
                conflict_id,
                at=now,
                winner=winner,
                reason=reason,
                decision_id=decision_id,
                by=principal.key_id,
            )
            resolved = dataclasses.replace(
                row, resolved_at=now, winner=winner, reason=reason, decision_id=decision_id
            )
            [entry] = await _entries(conn, sight, [resolved])
        return entry
