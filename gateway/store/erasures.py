"""Erasure: blanking the text of a memory version, or of a turn and what was derived from it,
through the migrations' erase_memory() and erase_turn(), the only changes their guards admit."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

import psycopg

from gateway.store.database import Connection

__all__ = ["ErasedKind", "erase_memory", "erase_turn"]

ErasedKind = Literal["turn", "summary", "memory"]


async def erase_memory(
    conn: Connection, tenant_id: str, memory_id: str, reason: str, at: datetime
) -> list[str] | None:
    """Blank one version's heading, content and embedding, and the facts derived from it: every
    id erased, `memory_id` first; None when it has nothing left to erase."""
    try:
        async with conn.transaction():  # a savepoint: the refusal leaves the request usable
            cur = await conn.execute(
                "SELECT * FROM erase_memory(%(tenant_id)s, %(memory_id)s, %(reason)s, %(at)s)",
                {"tenant_id": tenant_id, "memory_id": memory_id, "reason": reason, "at": at},
            )
            rows = await cur.fetchall()
    except psycopg.errors.NoDataFound:
        return None
    return [str(erased_id) for (erased_id,) in rows]


async def erase_turn(
    conn: Connection, tenant_id: str, session_id: str, seq: int, reason: str, at: datetime
) -> list[tuple[ErasedKind, str]] | None:
    """Blank one turn, the summaries covering it, the memories remembered from either and the
    facts derived from any of them: what was erased, the turn first; None when there is no such
    turn left to erase."""
    params = {
        "tenant_id": tenant_id,
        "session_id": session_id,
        "seq": seq,
        "reason": reason,
        "at": at,
    }
    try:
        async with conn.transaction():
            cur = await conn.execute(
                "SELECT erased_kind, erased_id FROM erase_turn(%(tenant_id)s, %(session_id)s,"
                " %(seq)s, %(reason)s, %(at)s)",
                params,
            )
            rows = await cur.fetchall()
    except psycopg.errors.NoDataFound:
        return None
    kinds: dict[str, ErasedKind] = {"turn": "turn", "summary": "summary", "memory": "memory"}
    return [(kinds[str(kind)], str(erased_id)) for kind, erased_id in rows]
