"""Conflicts (ARCHITECTURE §12): two live facts for one claim that the rules could not order.
Listed for whoever may read their namespace; resolved by naming the winner, which supersedes the
other side (a decision with rule `resolved`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from gateway.core.supersession import Decision
from gateway.domain.clock import Clock
from gateway.domain.errors import ConflictError, FieldError, InvalidRequestError, NotFoundError
from gateway.domain.memory import MemoryVersion
from gateway.domain.principal import Principal
from gateway.responses.compiling import ConflictEntry, ConflictPage, ConflictSide
from gateway.store import memories as memory_store
from gateway.store import supersessions as store
from gateway.store.database import Connection
from gateway.store.pool import Pool
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


async def _entries(
    conn: Connection, tenant_id: str, rows: Sequence[store.ConflictRow]
) -> list[ConflictEntry]:
    ids = sorted({i for r in rows for i in (r.first_id, r.second_id)})
    versions = {v.memory_id: v for v in await memory_store.fetch_versions(conn, tenant_id, ids)}
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

    async def page(
        self,
        authorization: str | None,
        *,
        namespace: str | None,
        open_only: bool,
        after: str,
        limit: int,
    ) -> ConflictPage:
        async with unit_of_work(self.pool, authorization) as (conn, principal):
            rows = await store.conflicts_page(
                conn,
                principal.tenant_id,
                _namespaces(principal, namespace),
                open_only=open_only,
                after=after,
                limit=limit + 1,
            )
            entries = await _entries(conn, principal.tenant_id, rows[:limit])
        more = len(rows) > limit
        return ConflictPage(entries, entries[-1].conflict_id if more and entries else None)

    async def resolve(
        self, authorization: str | None, conflict_id: str, winner: str, reason: str
    ) -> ConflictEntry:
        """The winner stands, the other side is superseded by it (rule `resolved`)."""
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
            [entry] = await _entries(conn, principal.tenant_id, [resolved])
        return entry
