"""Sessions, their history (turns) and their state (summaries): insert and read.

Turns are numbered under the session row's lock (`lock_session`, then `advance_head`): concurrent
appends to one session are serialized, so seqs are gapless and never given twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import psycopg
from psycopg.rows import class_row

__all__ = [
    "AppendRecord",
    "NewTurn",
    "SessionRow",
    "SummaryRow",
    "TurnRow",
    "advance_head",
    "content_hashes",
    "find_append",
    "find_idempotent_session",
    "find_session",
    "find_summary",
    "insert_append",
    "insert_session",
    "insert_summary",
    "insert_turns",
    "latest_summary",
    "turns_after",
    "turns_by_id",
    "turns_page",
]

Conn = psycopg.AsyncConnection[tuple[object, ...]]


@dataclass(frozen=True, slots=True)
class SessionRow:
    tenant_id: str
    session_id: str
    namespace: str
    task: str
    system_prompt: str | None
    budget_tokens: int
    keep_last: int
    memory_budget_tokens: int | None
    remember_turns: bool
    labels: list[str]
    agent_id: str | None
    created_by_key: str
    idempotency_key: str | None
    request_sha256: str
    created_at: datetime
    turn_count: int
    last_occurred_at: datetime | None


_INSERT_SESSION = """
INSERT INTO sessions (tenant_id, session_id, namespace, task, system_prompt, budget_tokens,
    keep_last, memory_budget_tokens, remember_turns, labels, agent_id, created_by_key,
    idempotency_key, request_sha256, created_at)
VALUES (%(tenant_id)s, %(session_id)s, %(namespace)s, %(task)s, %(system_prompt)s,
    %(budget_tokens)s, %(keep_last)s, %(memory_budget_tokens)s, %(remember_turns)s, %(labels)s,
    %(agent_id)s, %(created_by_key)s, %(idempotency_key)s, %(request_sha256)s, %(created_at)s)
ON CONFLICT (tenant_id, idempotency_key) DO NOTHING
RETURNING tenant_id, session_id, namespace, task, system_prompt, budget_tokens, keep_last,
       memory_budget_tokens, remember_turns, labels, agent_id, created_by_key, idempotency_key,
       request_sha256, created_at, turn_count, last_occurred_at
"""


async def insert_session(conn: Conn, row: SessionRow) -> SessionRow | None:
    """Insert a session; None when its idempotency key was already used (nothing written)."""
    params = {
        "tenant_id": row.tenant_id,
        "session_id": row.session_id,
        "namespace": row.namespace,
        "task": row.task,
        "system_prompt": row.system_prompt,
        "budget_tokens": row.budget_tokens,
        "keep_last": row.keep_last,
        "memory_budget_tokens": row.memory_budget_tokens,
        "remember_turns": row.remember_turns,
        "labels": list(row.labels),
        "agent_id": row.agent_id,
        "created_by_key": row.created_by_key,
        "idempotency_key": row.idempotency_key,
        "request_sha256": row.request_sha256,
        "created_at": row.created_at,
    }
    async with conn.cursor(row_factory=class_row(SessionRow)) as cur:
        await cur.execute(_INSERT_SESSION, params)
        return await cur.fetchone()


_FIND_SESSION = """
SELECT tenant_id, session_id, namespace, task, system_prompt, budget_tokens, keep_last,
       memory_budget_tokens, remember_turns, labels, agent_id, created_by_key, idempotency_key,
       request_sha256, created_at, turn_count, last_occurred_at FROM sessions
 WHERE tenant_id = %(tenant_id)s AND session_id = %(session_id)s
"""

_FIND_SESSION_LOCKED = """
SELECT tenant_id, session_id, namespace, task, system_prompt, budget_tokens, keep_last,
       memory_budget_tokens, remember_turns, labels, agent_id, created_by_key, idempotency_key,
       request_sha256, created_at, turn_count, last_occurred_at FROM sessions
 WHERE tenant_id = %(tenant_id)s AND session_id = %(session_id)s
   FOR UPDATE
"""


async def find_session(
    conn: Conn, tenant_id: str, session_id: str, *, lock: bool = False
) -> SessionRow | None:
    query = _FIND_SESSION_LOCKED if lock else _FIND_SESSION
    async with conn.cursor(row_factory=class_row(SessionRow)) as cur:
        await cur.execute(query, {"tenant_id": tenant_id, "session_id": session_id})
        return await cur.fetchone()


_FIND_IDEMPOTENT_SESSION = """
SELECT tenant_id, session_id, namespace, task, system_prompt, budget_tokens, keep_last,
       memory_budget_tokens, remember_turns, labels, agent_id, created_by_key, idempotency_key,
       request_sha256, created_at, turn_count, last_occurred_at FROM sessions
 WHERE tenant_id = %(tenant_id)s AND idempotency_key = %(key)s
"""


async def find_idempotent_session(conn: Conn, tenant_id: str, key: str) -> SessionRow | None:
    async with conn.cursor(row_factory=class_row(SessionRow)) as cur:
        await cur.execute(_FIND_IDEMPOTENT_SESSION, {"tenant_id": tenant_id, "key": key})
        return await cur.fetchone()


_ADVANCE = """
UPDATE sessions
   SET turn_count = turn_count + %(count)s, last_occurred_at = %(last_occurred_at)s
 WHERE tenant_id = %(tenant_id)s AND session_id = %(session_id)s
"""


async def advance_head(
    conn: Conn, tenant_id: str, session_id: str, count: int, last_occurred_at: datetime
) -> None:
    """Move the head by `count` turns; the caller holds the row's lock (`lock_session`), taken
    before it numbered the turns from the head it read."""
    params = {
        "tenant_id": tenant_id,
        "session_id": session_id,
        "count": count,
        "last_occurred_at": last_occurred_at,
    }
    await conn.execute(_ADVANCE, params)


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
class AppendRecord:
    request_sha256: str
    first_seq: int
    last_seq: int


_FIND_APPEND = """
SELECT request_sha256, first_seq, last_seq FROM session_appends
 WHERE tenant_id = %(tenant_id)s AND session_id = %(session_id)s AND idempotency_key = %(key)s
"""


async def find_append(conn: Conn, tenant_id: str, session_id: str, key: str) -> AppendRecord | None:
    async with conn.cursor(row_factory=class_row(AppendRecord)) as cur:
        await cur.execute(
            _FIND_APPEND, {"tenant_id": tenant_id, "session_id": session_id, "key": key}
        )
        return await cur.fetchone()


_INSERT_APPEND = """
INSERT INTO session_appends (tenant_id, session_id, idempotency_key, request_sha256, first_seq,
    last_seq, created_at)
VALUES (%(tenant_id)s, %(session_id)s, %(key)s, %(request_sha256)s, %(first_seq)s, %(last_seq)s,
    %(created_at)s)
"""


async def insert_append(
    conn: Conn,
    tenant_id: str,
    session_id: str,
    key: str,
    record: AppendRecord,
    created_at: datetime,
) -> None:
    await conn.execute(
        _INSERT_APPEND,
        {
            "tenant_id": tenant_id,
            "session_id": session_id,
            "key": key,
            "request_sha256": record.request_sha256,
            "first_seq": record.first_seq,
            "last_seq": record.last_seq,
            "created_at": created_at,
        },
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


@dataclass(frozen=True, slots=True)
class SummaryRow:
    summary_id: str
    to_seq: int
    covered_sha256: str
    text: str
    tokens: int
    summarizer: str
    summarizer_version: str
    previous_summary_id: str | None
    created_at: datetime


_LATEST_SUMMARY = """
SELECT summary_id, to_seq, covered_sha256, text, tokens, summarizer,
       summarizer_version, previous_summary_id, created_at FROM session_summaries
 WHERE tenant_id = %(tenant_id)s AND session_id = %(session_id)s
 ORDER BY to_seq DESC, summary_id DESC
 LIMIT 1
"""


async def latest_summary(conn: Conn, tenant_id: str, session_id: str) -> SummaryRow | None:
    async with conn.cursor(row_factory=class_row(SummaryRow)) as cur:
        await cur.execute(_LATEST_SUMMARY, {"tenant_id": tenant_id, "session_id": session_id})
        return await cur.fetchone()


_FIND_SUMMARY = """
SELECT summary_id, to_seq, covered_sha256, text, tokens, summarizer,
       summarizer_version, previous_summary_id, created_at FROM session_summaries
 WHERE tenant_id = %(tenant_id)s AND session_id = %(session_id)s AND summary_id = %(summary_id)s
"""


async def find_summary(
    conn: Conn, tenant_id: str, session_id: str, summary_id: str
) -> SummaryRow | None:
    params = {"tenant_id": tenant_id, "session_id": session_id, "summary_id": summary_id}
    async with conn.cursor(row_factory=class_row(SummaryRow)) as cur:
        await cur.execute(_FIND_SUMMARY, params)
        return await cur.fetchone()


_INSERT_SUMMARY = """
INSERT INTO session_summaries (tenant_id, summary_id, session_id, to_seq, covered_sha256, text,
    tokens, summarizer, summarizer_version, previous_summary_id, created_at)
VALUES (%(tenant_id)s, %(summary_id)s, %(session_id)s, %(to_seq)s, %(covered_sha256)s,
    %(text)s, %(tokens)s, %(summarizer)s, %(summarizer_version)s, %(previous_summary_id)s,
    %(created_at)s)
"""


async def insert_summary(conn: Conn, tenant_id: str, session_id: str, s: SummaryRow) -> None:
    await conn.execute(
        _INSERT_SUMMARY,
        {
            "tenant_id": tenant_id,
            "session_id": session_id,
            "summary_id": s.summary_id,
            "to_seq": s.to_seq,
            "covered_sha256": s.covered_sha256,
            "text": s.text,
            "tokens": s.tokens,
            "summarizer": s.summarizer,
            "summarizer_version": s.summarizer_version,
            "previous_summary_id": s.previous_summary_id,
            "created_at": s.created_at,
        },
    )
