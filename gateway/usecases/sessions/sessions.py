"""Sessions (ARCHITECTURE §11): create one, append to its history, read it and page its history.

The history is append-only and numbered under the session row's lock (`gateway.store.sessions`):
concurrent appends to one session are serialized, so seqs are gapless and never given twice.
Reading the history discloses what was said: it is judged by the policy in force and receipted
(kind `history`) through the list pipeline of `gateway.usecases.disclosure.listing`. With `remember_turns`
each turn is also written as an episodic memory through the one memory writer, so older turns
come back by relevance and not only through the summary.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import msgspec
import rfc8785

from gateway.core.tokens import Tokenizer
from gateway.domain.clock import Clock, IdFactory
from gateway.domain.errors import ConflictError, FieldError, InvalidRequestError
from gateway.domain.memory import MemoryDraft
from gateway.domain.principal import Principal
from gateway.requests import HistoryQuery, SessionIn, TurnIn, TurnsShape
from gateway.responses.sessions import (
    Appended,
    HistoryPage,
    SessionInfo,
    SummaryRef,
)
from gateway.store import session_appends as append_store
from gateway.store import sessions as store
from gateway.store import summaries as summary_store
from gateway.store import turns as turn_store
from gateway.store.database import Connection
from gateway.store.pool import Pool
from gateway.usecases.access.work import unit_of_work
from gateway.usecases.disclosure.pipeline import Discloser
from gateway.usecases.memories.writer import Writer
from gateway.usecases.receiptlog.recorder import rfc3339
from gateway.usecases.sessions.budget import check_budget, memory_share
from gateway.usecases.sessions.conversation import (
    Pinned,
    as_stored,
)
from gateway.usecases.sessions.history import page_history
from gateway.usecases.sessions.seeing import Seen, seen_session

__all__ = ["Sessions", "summary_ref"]

TURN_CONFIDENCE = 0.6  # a remembered turn is what was said, not a distilled fact


def _sha256(payload: Any) -> str:
    return hashlib.sha256(rfc8785.dumps(payload)).hexdigest()


def summary_ref(summary: summary_store.SummaryRow) -> SummaryRef:
    return SummaryRef(
        summary_id=summary.summary_id,
        covers=[1, summary.to_seq],
        tokens=summary.tokens,
        summarizer=f"{summary.summarizer}/{summary.summarizer_version}",
    )


def _info(
    session: store.SessionRow,
    summary: summary_store.SummaryRow | None,
    *,
    created: bool | None,
    pinned: Pinned | None = None,
) -> SessionInfo:
    """The session as answered: its system prompt and task as `pinned` shows them (a read),
    or as its creator sent them (a create, its idempotent repeat)."""
    shown = as_stored(session) if pinned is None else pinned
    return SessionInfo(
        session_id=session.session_id,
        namespace=session.namespace,
        task=session.task if shown.task is None else shown.task,
        system_prompt=shown.system_prompt,
        budget_tokens=session.budget_tokens,
        keep_last=session.keep_last,
        memory_budget_tokens=memory_share(session.memory_budget_tokens, session.budget_tokens),
        remember_turns=session.remember_turns,
        labels=list(session.labels),
        created_at=rfc3339(session.created_at),
        turn_count=session.turn_count,
        created=created,
        latest_summary=None if summary is None else summary_ref(summary),
    )


def _turn_heading(role: str, seq: int, content: str) -> str:
    """A remembered turn's heading: who and when, and its opening words as the index line's
    pointer (short: a memory shown in full repeats nothing more of its content). Full-text
    search leaves out the "<role>, turn <seq>: " prefix (migration 0027 matches its shape)."""
    words = " ".join(content.split())
    opening = words if len(words) <= 60 else words[:59] + "…"
    return f"{role}, turn {seq}: {opening}"


@dataclass(frozen=True, slots=True)
class Sessions:
    pool: Pool
    writer: Writer
    discloser: Discloser
    tokenizer: Tokenizer
    clock: Clock
    new_id: IdFactory

    async def create(self, authorization: str | None, ask: SessionIn) -> SessionInfo:
        now = self.clock()
        async with unit_of_work(self.pool, authorization, writes=1) as (conn, principal):
            principal.require_role("agent", "admin")
            principal.require_namespace(ask.namespace)
            check_budget(self.tokenizer, ask.system_prompt, ask.task, ask.budget_tokens)
            if (
                ask.memory_budget_tokens is not None
                and ask.memory_budget_tokens > ask.budget_tokens
            ):
                message = f"exceeds budget_tokens ({ask.budget_tokens})"
                raise InvalidRequestError(
                    f"memory_budget_tokens: {message}",
                    (FieldError("memory_budget_tokens", message),),
                )
            labels = sorted(set(ask.labels))
            payload = {**msgspec.structs.asdict(ask), "labels": labels}
            request_sha256 = _sha256(payload)
            if ask.idempotency_key is not None:
                earlier = await self._earlier(
                    conn, principal, ask.namespace, ask.idempotency_key, request_sha256
                )
                if earlier is not None:
                    return earlier
            row = store.SessionRow(
                tenant_id=principal.tenant_id,
                session_id=self.new_id(now),
                namespace=ask.namespace,
                task=ask.task,
                system_prompt=ask.system_prompt,
                budget_tokens=ask.budget_tokens,
                keep_last=ask.keep_last,
                memory_budget_tokens=ask.memory_budget_tokens,
                remember_turns=ask.remember_turns,
                labels=labels,
                agent_id=principal.agent_id,
                created_by_key=principal.key_id,
                idempotency_key=ask.idempotency_key,
                request_sha256=request_sha256,
                created_at=now,
                turn_count=0,
                last_occurred_at=None,
            )
            inserted = await store.insert_session(conn, row)
            if inserted is None:  # a concurrent create with the same key won
                assert ask.idempotency_key is not None
                earlier = await self._earlier(
                    conn, principal, ask.namespace, ask.idempotency_key, request_sha256
                )
                assert earlier is not None
                return earlier
            return _info(inserted, None, created=True)

    async def _earlier(
        self,
        conn: Connection,
        principal: Principal,
        namespace: str,
        key: str,
        request_sha256: str,
    ) -> SessionInfo | None:
        earlier = await store.find_idempotent_session(conn, principal.tenant_id, namespace, key)
        if earlier is None:
            return None
        if earlier.request_sha256 != request_sha256:
            raise ConflictError(
                "idempotency_key was already used for a different session",
                code="idempotency_conflict",
            )
        summary = await summary_store.latest_summary(conn, principal.tenant_id, earlier.session_id)
        return _info(earlier, summary, created=False)

    async def _seen(
        self,
        conn: Connection,
        principal: Principal,
        session_id: str,
        *,
        purpose: str | None = None,
        lock: bool = False,
    ) -> Seen:
        return await seen_session(
            conn,
            principal,
            session_id,
            policies=self.discloser.policies,
            tokenizer=self.tokenizer,
            at=self.clock(),
            purpose=purpose,
            lock=lock,
        )

    async def get(self, authorization: str | None, session_id: str) -> SessionInfo:
        async with unit_of_work(self.pool, authorization) as (conn, principal):
            principal.require_role("agent", "admin")
            seen = await self._seen(conn, principal, session_id)
            summary = await summary_store.latest_summary(conn, principal.tenant_id, session_id)
        return _info(seen.row, summary, created=None, pinned=seen.pinned)

    async def append(self, authorization: str | None, session_id: str, ask: TurnsShape) -> Appended:
        writes = len(ask.turns)
        async with unit_of_work(self.pool, authorization, writes=writes) as (conn, principal):
            principal.require_role("agent", "admin")
            # The lock: appends to one session are serialized from here to the commit. The clock
            # is read under it, so a turn that defaults to now is never before the turn an
            # append that held the lock first recorded.
            session = (await self._seen(conn, principal, session_id, lock=True)).row
            now = self.clock()
            payload = [
                {
                    "role": t.role,
                    "content": t.content,
                    "name": t.name,
                    "occurred_at": None if t.occurred_at is None else rfc3339(t.occurred_at),
                }
                for t in ask.turns
            ]
            request_sha256 = _sha256(payload)
            tenant_id = principal.tenant_id
            if ask.idempotency_key is not None:
                earlier = await append_store.find_append(
                    conn, tenant_id, session_id, ask.idempotency_key
                )
                if earlier is not None:
                    return await self._repeat(conn, tenant_id, session_id, earlier, request_sha256)
            times = _occurred(ask.turns, session.last_occurred_at, now)
            first = session.turn_count + 1
            turns = [
                turn_store.NewTurn(
                    seq=first + i,
                    turn_id=self.new_id(now),
                    role=t.role,
                    name=t.name,
                    content=t.content,
                    content_sha256=hashlib.sha256(t.content.encode("utf-8")).hexdigest(),
                    tokens=self.tokenizer.count(t.content),
                    occurred_at=at,
                )
                for i, (t, at) in enumerate(zip(ask.turns, times, strict=True))
            ]
            last = first + len(turns) - 1
            await store.advance_head(conn, tenant_id, session_id, len(turns), times[-1])
            await turn_store.insert_turns(
                conn,
                tenant_id,
                session_id,
                turns,
                created_at=now,
                agent_id=principal.agent_id,
                written_by_key=principal.key_id,
            )
            if ask.idempotency_key is not None:
                record = append_store.AppendRecord(request_sha256, first, last)
                await append_store.insert_append(
                    conn, tenant_id, session_id, ask.idempotency_key, record, now
                )
            memory_ids = await self._remember(conn, principal, session, turns)
        return Appended(first, last, [t.turn_id for t in turns], True, memory_ids)

    async def _repeat(
        self,
        conn: Connection,
        tenant_id: str,
        session_id: str,
        earlier: append_store.AppendRecord,
        request_sha256: str,
    ) -> Appended:
        if earlier.request_sha256 != request_sha256:
            raise ConflictError(
                "idempotency_key was already used for different turns",
                code="idempotency_conflict",
            )
        count = earlier.last_seq - earlier.first_seq + 1
        rows = await turn_store.turns_page(
            conn, tenant_id, session_id, earlier.first_seq - 1, count
        )
        return Appended(earlier.first_seq, earlier.last_seq, [r.turn_id for r in rows], False, [])

    async def _remember(
        self,
        conn: Connection,
        principal: Principal,
        session: store.SessionRow,
        turns: Sequence[turn_store.NewTurn],
    ) -> list[str]:
        """Each turn as an episodic memory (source_type `turn`, source_ref its id), written by
        the one memory writer in the append's transaction."""
        if not session.remember_turns:
            return []
        drafts = [
            MemoryDraft(
                namespace=session.namespace,
                memory_type="episodic",
                heading=_turn_heading(t.role, t.seq, t.content),
                content=t.content,
                confidence=TURN_CONFIDENCE,
                labels=tuple(sorted(set(session.labels))),
                source_type="turn",
                source_ref=t.turn_id,
                # Said then, whenever written: an imported history's turn was true from its day.
                valid_from=t.occurred_at,
                idempotency_key=f"turn:{t.turn_id}",
            )
            for t in turns
        ]
        written = await self.writer.write(conn, principal, drafts)
        ids: list[str] = []
        for result in written:
            if isinstance(result, Exception):
                raise result
            ids.append(result.memory_id)
        return ids

    async def history(
        self,
        authorization: str | None,
        session_id: str,
        query: HistoryQuery,
    ) -> HistoryPage:
        """A page of the history as the policy shows it, receipted (kind `history`)."""
        after, limit, purpose = query.after, query.limit, query.purpose
        now = self.clock()
        async with unit_of_work(self.pool, authorization) as (conn, principal):
            principal.require_role("agent", "admin")
            session = (await self._seen(conn, principal, session_id, purpose=purpose)).row
            return await page_history(
                self.discloser, conn, principal, session, after, limit, purpose, now
            )


def _occurred(turns: Sequence[TurnIn], previous: datetime | None, now: datetime) -> list[datetime]:
    """Each turn's occurred_at (default now), or 422 naming every turn that goes back in time
    or lies in the future: a history is in the order things happened."""
    errors: list[FieldError] = []
    times: list[datetime] = []
    last = previous
    for index, turn in enumerate(turns):
        # A default is now, or the last instant recorded if a clock step put that ahead of now.
        at = turn.occurred_at or (now if last is None else max(now, last))
        field = f"turns/{index}/occurred_at"
        if at > now:
            errors.append(FieldError(field, f"{rfc3339(at)} is in the future"))
        elif last is not None and at < last:
            errors.append(
                FieldError(field, f"goes backwards: the turn before occurred at {rfc3339(last)}")
            )
        times.append(at)
        last = max(at, last) if last is not None else at
    if errors:
        raise InvalidRequestError(
            f"{len(errors)} turn(s) out of order: occurred_at is non-decreasing and not in the "
            "future",
            tuple(errors),
            code="occurred_at_invalid",
        )
    return times
