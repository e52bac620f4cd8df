"""A session's history, paged and disclosed like any list (ARCHITECTURE §11): admitted by the
request stage, each turn judged (`turn.*`, `session.*` and the memory fields of the episode it
is), redacted, and receipted (kind `history`) through `gateway.usecases.disclosure.listing.disclose_list`.
"""

from __future__ import annotations

from datetime import datetime

import msgspec

from gateway.domain.principal import Principal
from gateway.responses.receipt_bodies import HistoryBody, HistoryRequestRecord, HistoryTurnRecord
from gateway.responses.sessions import HistoryPage, HistoryTurn
from gateway.store import sessions as store
from gateway.store import turns as turn_store
from gateway.store.database import Connection
from gateway.usecases.access.need_to_know import Account
from gateway.usecases.access.policy import request_view, shown_evaluation
from gateway.usecases.disclosure.listing import disclose_list, partition
from gateway.usecases.disclosure.pipeline import Discloser
from gateway.usecases.disclosure.records import excluded, exclusion_record
from gateway.usecases.receiptlog.kinds import HISTORY
from gateway.usecases.receiptlog.recorder import rfc3339
from gateway.usecases.sessions.conversation import turn_view

__all__ = ["page_history"]


class _Delivered(msgspec.Struct, frozen=True):
    """What of a turn the receipt's bundle hash covers: the turn as the agent read it."""

    seq: int
    turn_id: str
    role: str
    name: str | None
    content: str


async def page_history(
    discloser: Discloser,
    conn: Connection,
    principal: Principal,
    session: store.SessionRow,
    after: int,
    limit: int,
    purpose: str | None,
    now: datetime,
) -> HistoryPage:
    """Turns after `after` (at most `limit`) as the policy shows them: denied and capped turns
    withheld, redaction applied; the receipt hashes the RFC 8785 form of the list sent."""
    view = request_view(
        principal, purpose=purpose, namespaces=(session.namespace,), budget_tokens=None
    )
    request = HistoryRequestRecord(
        session_id=session.session_id,
        namespaces=[session.namespace],
        after=after,
        limit=limit,
        purpose=purpose,
    )
    admitted = await discloser.admit(
        conn,
        principal,
        view,
        disclosure=HISTORY,
        request=request,
        purpose=purpose,
        at=now,
        issued_at=now,
    )
    rows = await turn_store.turns_page(conn, principal.tenant_id, session.session_id, after, limit)
    judgement = admitted.judging.judge([turn_view(r, session) for r in rows])
    parts = partition(judgement)
    rewritten = judgement.texts(full=parts.shown)
    shown = [rows[m] for m in parts.shown]
    turns = [
        HistoryTurn(
            seq=r.seq,
            turn_id=r.turn_id,
            role=r.role,
            name=r.name,
            content=rewritten.get(m, ("", r.content))[1],
            content_sha256=r.content_sha256,
            tokens=r.tokens,
            occurred_at=rfc3339(r.occurred_at),
        )
        for m, r in zip(parts.shown, shown, strict=True)
    ]
    delivered = [_Delivered(t.seq, t.turn_id, t.role, t.name, t.content) for t in turns]
    record = admitted.policy.record(shown_evaluation(judgement, (), [r.turn_id for r in shown]))
    left_out = sorted(parts.excluded, key=lambda e: e.memory_id)
    more = len(rows) == limit and rows[-1].seq < session.turn_count
    body = HistoryBody(
        request=request,
        policy=record,
        included=[
            HistoryTurnRecord(
                turn_id=r.turn_id,
                seq=r.seq,
                content_sha256=r.content_sha256,
                rewritten=m in rewritten,
            )
            for m, r in zip(parts.shown, shown, strict=True)
        ],
        excluded=[exclusion_record(e) for e in left_out],
    )
    receipt_id, told = await disclose_list(
        discloser,
        conn,
        principal,
        kind=HISTORY,
        body=body,
        record=record,
        purpose=purpose,
        delivered=delivered,
        now=now,
        admitted=admitted,
        excluded=[excluded(e) for e in left_out],
        account=Account([r.turn_id for r in shown]),
    )
    next_after = rows[-1].seq if more else None
    return HistoryPage(turns, told.excluded, next_after, told.policy, receipt_id)
