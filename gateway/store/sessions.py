"""Sessions: the row that holds a session's settings and the head of its history.

Turns are numbered under the session row's lock (`find_session(..., lock=True)`, then
`advance_head`): concurrent appends to one session are serialized, so seqs are gapless and never
given twice (`gateway.store.turns` writes them).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import psycopg
from psycopg.rows import class_row

__all__ = [
    "SessionRow",
    "advance_head",
    "find_idempotent_session",
    "find_session",
    "insert_session",
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
ON CONFLICT (tenant_id, idempotency_key, namespace) DO NOTHING
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
 WHERE tenant_id = %(tenant_id)s AND idempotency_key = %(key)s AND namespace = %(namespace)s
"""


async def find_idempotent_session(
    conn: Conn, tenant_id: str, namespace: str, key: str
) -> SessionRow | None:
    """The session created with idempotency key `key` in `namespace` (keys are scoped by
    namespace, migration 0028)."""
    params = {"tenant_id": tenant_id, "namespace": namespace, "key": key}
    async with conn.cursor(row_factory=class_row(SessionRow)) as cur:
        await cur.execute(_FIND_IDEMPOTENT_SESSION, params)
        return await cur.fetchone()


_ADVANCE = """
UPDATE sessions
   SET turn_count = turn_count + %(count)s, last_occurred_at = %(last_occurred_at)s
 WHERE tenant_id = %(tenant_id)s AND session_id = %(session_id)s
"""


async def advance_head(
    conn: Conn, tenant_id: str, session_id: str, count: int, last_occurred_at: datetime
) -> None:
    """Move the head by `count` turns; the caller holds the row's lock (`find_session(..., lock=True)`), taken
    before it numbered the turns from the head it read."""
    params = {
        "tenant_id": tenant_id,
        "session_id": session_id,
        "count": count,
        "last_occurred_at": last_occurred_at,
    }
    await conn.execute(_ADVANCE, params)
