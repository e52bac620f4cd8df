"""A session's history: its turns, appended in order under the session's lock
(`gateway.store.sessions`) and read by page, by id, or as the content hashes a summary covers."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import psycopg
from psycopg.rows import class_row

__all__ = [
    "NewTurn",
    "TurnRow",
    "content_hashes",
    "insert_turns",
    "turns_after",
    "turns_by_id",
    "turns_page",
]

Conn = psycopg.AsyncConnection[tuple[object, ...]]


@dataclass(frozen=True, slots=True)
class NewTurn:
    seq: int
    turn_id: str
    role: str
    name: str | None
    content: str
    content_sha256: str
    tokens: int
    occurred_at: datetime


_INSERT_TURN = """
INSERT INTO session_turns (tenant_id, session_id, seq, turn_id, role, name, content,
    content_sha256, tokens, occurred_at, created_at, agent_id, written_by_key)
VALUES (%(tenant_id)s, %(session_id)s, %(seq)s, %(turn_id)s, %(role)s, %(name)s, %(content)s,
    %(content_sha256)s, %(tokens)s, %(occurred_at)s, %(created_at)s, %(agent_id)s,
    %(written_by_key)s)
"""


async def insert_turns(
    conn: Conn,
    tenant_id: str,
    session_id: str,
    turns: Sequence[NewTurn],
    *,
    created_at: datetime,
    agent_id: str | None,
    written_by_key: str,
) -> None:
    common = {
        "tenant_id": tenant_id,
        "session_id": session_id,
        "created_at": created_at,
        "agent_id": agent_id,
        "written_by_key": written_by_key,
    }
    async with conn.cursor() as cur:
        await cur.executemany(
            _INSERT_TURN,
            [
                {
                    **common,
                    "seq": t.seq,
                    "turn_id": t.turn_id,
                    "role": t.role,
                    "name": t.name,
                    "content": t.content,
                    "content_sha256": t.content_sha256,
                    "tokens": t.tokens,
                    "occurred_at": t.occurred_at,
                }
                for t in turns
            ],
        )


@dataclass(frozen=True, slots=True)
class TurnRow:
    seq: int
    turn_id: str
    role: str
    name: str | None
    content: str
    content_sha256: str
    tokens: int
    occurred_at: datetime
    created_at: datetime
    agent_id: str | None


_TURNS_PAGE = """
SELECT seq, turn_id, role, name, content, content_sha256, tokens, occurred_at,
       created_at, agent_id FROM session_turns
 WHERE tenant_id = %(tenant_id)s AND session_id = %(session_id)s AND seq > %(after)s
 ORDER BY seq
 LIMIT %(limit)s
"""


async def turns_page(
    conn: Conn, tenant_id: str, session_id: str, after: int, limit: int
) -> list[TurnRow]:
    params = {"tenant_id": tenant_id, "session_id": session_id, "after": after, "limit": limit}
    async with conn.cursor(row_factory=class_row(TurnRow)) as cur:
        await cur.execute(_TURNS_PAGE, params)
        return await cur.fetchall()


async def turns_after(conn: Conn, tenant_id: str, session_id: str, after: int) -> list[TurnRow]:
    """Every turn after seq `after`, in order (the history a summary does not cover yet)."""
    return await turns_page(conn, tenant_id, session_id, after, 2**62)


_TURNS_BY_ID = """
SELECT seq, turn_id, role, name, content, content_sha256, tokens, occurred_at,
       created_at, agent_id FROM session_turns
 WHERE tenant_id = %(tenant_id)s AND session_id = %(session_id)s AND turn_id = ANY(%(ids)s)
 ORDER BY seq
"""


async def turns_by_id(
    conn: Conn, tenant_id: str, session_id: str, ids: Sequence[str]
) -> list[TurnRow]:
    params = {"tenant_id": tenant_id, "session_id": session_id, "ids": list(ids)}
    async with conn.cursor(row_factory=class_row(TurnRow)) as cur:
        await cur.execute(_TURNS_BY_ID, params)
        return await cur.fetchall()


_CONTENT_HASHES = """
SELECT content_sha256 FROM session_turns
 WHERE tenant_id = %(tenant_id)s AND session_id = %(session_id)s AND seq <= %(to_seq)s
 ORDER BY seq
"""


async def content_hashes(conn: Conn, tenant_id: str, session_id: str, to_seq: int) -> list[str]:
    """The content hashes of turns 1..to_seq, in order (what a summary's covered_sha256 is
    computed over)."""
    params = {"tenant_id": tenant_id, "session_id": session_id, "to_seq": to_seq}
    cur = await conn.execute(_CONTENT_HASHES, params)
    return [str(row[0]) for row in await cur.fetchall()]
