"""A session's history, paged and disclosed like any list (ARCHITECTURE §11): admitted by the
request stage, each turn judged (`turn.*`, `session.*` and the memory fields of the episode it
is), redacted, and receipted (kind `history`) through `gateway.usecases.disclosure.listing.disclose_list`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from gateway.domain.principal import Principal
from gateway.responses.sessions import HistoryPage, HistoryTurn
from gateway.store import sessions as store
from gateway.store import turns as turn_store
from gateway.store.database import Connection
from gateway.usecases.access.need_to_know import Account
from gateway.usecases.access.policy import request_view, shown_evaluation
from gateway.usecases.disclosure.listing import disclose_list, partition
from gateway.usecases.disclosure.pipeline import Discloser
from gateway.usecases.disclosure.records import exclusion
from gateway.usecases.receiptlog.recorder import rfc3339
from gateway.usecases.sessions.conversation import turn_view

__all__ = ["page_history"]


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
    request: dict[str, Any] = {
        "session_id": session.session_id,
        "namespaces": [session.namespace],
        "after": after,
        "limit": limit,
        "purpose": purpose,
    }
    admitted = await discloser.admit(
        conn, principal, view, disclosure="history", request=request, at=now, issued_at=now
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
    delivered = [
        {
            "seq": t.seq,
            "turn_id": t.turn_id,
            "role": t.role,
            "name": t.name,
            "content": t.content,
        }
        for t in turns
    ]
    evaluation = shown_evaluation(judgement, (), [r.turn_id for r in shown])
    excluded = [exclusion(e) for e in sorted(parts.excluded, key=lambda e: e.memory_id)]
    more = len(rows) == limit and rows[-1].seq < session.turn_count
    return await disclose_list(
        discloser,
        conn,
        principal,
        kind="history",
        shape=HistoryPage,
        now=now,
        purpose=purpose,
        admitted=admitted,
        evaluation=evaluation,
        delivered=delivered,
        request=request,
        members={
            "included": [
                {
                    "turn_id": r.turn_id,
                    "seq": r.seq,
                    "content_sha256": r.content_sha256,
                    "rewritten": m in rewritten,
                }
                for m, r in zip(parts.shown, shown, strict=True)
            ],
            "excluded": excluded,
        },
        disclosed_ids=[r.turn_id for r in shown],
        payload={
            "turns": [_turn_json(t) for t in turns],
            "excluded": excluded,
            "next_after": rows[-1].seq if more else None,
        },
        account=Account("excluded", [r.turn_id for r in shown]),
    )


def _turn_json(turn: HistoryTurn) -> dict[str, Any]:
    return {f: getattr(turn, f) for f in turn.__struct_fields__}
