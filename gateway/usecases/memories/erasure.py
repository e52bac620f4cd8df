"""Erasure (ARCHITECTURE §14): an admin blanks a memory version, or a turn with everything
derived from its text, and the gateway signs an `erasure` receipt saying what went and why.

What stays: each row's hashes, token counts and place, and every receipt, which all still
verify; an exact replay of a bundle that held an erased text answers `memory_erased`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from gateway.core.instants import rfc3339
from gateway.domain.clock import Clock
from gateway.domain.errors import ConflictError, NotFoundError
from gateway.domain.principal import Principal
from gateway.responses.memories import Erased
from gateway.responses.receipt_bodies import ErasureBody, ErasureRecord, ErasureTarget
from gateway.store import erasures as erasure_store
from gateway.store.database import Connection
from gateway.store.pool import Pool
from gateway.usecases.access.work import unit_of_work
from gateway.usecases.receiptlog.kinds import ERASURE
from gateway.usecases.receiptlog.recorder import Recorder
from gateway.usecases.sessions.seeing import open_session

__all__ = ["Eraser"]


@dataclass(frozen=True, slots=True)
class Eraser:
    pool: Pool
    recorder: Recorder
    clock: Clock

    async def erase_memory(self, authorization: str | None, memory_id: str, reason: str) -> Erased:
        """Blank one version (any state: live, deleted or superseded) and the facts derived from
        it. 404 when the admin's key may not see it, 409 `already_erased` the second time."""
        async with unit_of_work(self.pool, authorization) as (conn, principal):
            principal.require_role("admin")
            # The namespace's write lock first: no compile writes from the memory meanwhile
            # (`gateway.store.erasures`).
            state = await erasure_store.lock_for_erasure(conn, principal.tenant_id, memory_id)
            if state is None or not principal.may_use(state.namespace):
                raise NotFoundError(f"memory {memory_id} not found")
            at = self.clock()
            # Compiled facts derived from the memory (their sources name it) go with it, each
            # with its own row in `erasures`, and the receipt names them all.
            ids = await erasure_store.erase_memory(conn, principal.tenant_id, memory_id, reason, at)
            if ids is None:
                raise ConflictError(f"memory {memory_id} is already erased", code="already_erased")
            erased = _Erased(memories=ids)
            receipt_id = await self._record(
                conn, principal, at, ErasureTarget(memory_id=memory_id), reason, erased
            )
        return erased.response(receipt_id, reason, at)

    async def erase_turn(
        self, authorization: str | None, session_id: str, seq: int, reason: str
    ) -> Erased:
        """Blank one turn of a session, the summaries that cover it, the memories remembered
        from either and the facts derived from them. 404 for an unknown session or turn, 409
        `already_erased` the second time."""
        async with unit_of_work(self.pool, authorization) as (conn, principal):
            principal.require_role("admin")
            session = await open_session(conn, principal, session_id, lock=True)
            if not 1 <= seq <= session.turn_count:
                raise NotFoundError(
                    f"session {session_id} has no turn {seq}", code="turn_not_found"
                )
            at = self.clock()
            found = await erasure_store.erase_turn(
                conn, principal.tenant_id, session_id, seq, reason, at
            )
            if found is None:
                raise ConflictError(
                    f"turn {seq} of session {session_id} is already erased", code="already_erased"
                )
            erased = _Erased(
                turns=[i for k, i in found if k == "turn"],
                summaries=[i for k, i in found if k == "summary"],
                memories=[i for k, i in found if k == "memory"],
            )
            target = ErasureTarget(session_id=session_id, seq=seq)
            receipt_id = await self._record(conn, principal, at, target, reason, erased)
        return erased.response(receipt_id, reason, at)

    async def _record(
        self,
        conn: Connection,
        principal: Principal,
        at: datetime,
        target: ErasureTarget,
        reason: str,
        erased: _Erased,
    ) -> str:
        """The signed account of an erasure: what was asked, why, and every id blanked. Nothing
        was delivered, and the receipt holds no text of what it erased."""
        return await self.recorder.record(
            conn,
            principal,
            kind=ERASURE,
            issued_at=at,
            purpose=None,
            delivered=None,
            members=ErasureBody(
                erasure=ErasureRecord(
                    target=target,
                    reason=reason,
                    turns=erased.turns,
                    summaries=erased.summaries,
                    memories=erased.memories,
                )
            ),
            disclosed_ids=[],
            policy_digest=None,
            with_writes=True,  # the receipt commits with the erasure it names, or neither does
        )


@dataclass(frozen=True, slots=True)
class _Erased:
    turns: list[str] = field(default_factory=list)
    summaries: list[str] = field(default_factory=list)
    memories: list[str] = field(default_factory=list)

    def response(self, receipt_id: str, reason: str, at: datetime) -> Erased:
        return Erased(
            erased_at=rfc3339(at),
            reason=reason,
            receipt_id=receipt_id,
            turns=self.turns,
            summaries=self.summaries,
            memories=self.memories,
        )
