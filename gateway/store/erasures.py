"""Erasure: blanking the text of a memory version, or of a turn and what was derived from it,
through the migrations' erase_memory() and erase_turn(), the only changes their guards admit.

An erasure and a compile of the same namespace never interleave (ARCHITECTURE §12, §14): each
takes the namespace's write lock (`supersessions.lock_namespaces`, the lock a write takes to
settle supersession there) before it locks or changes any row, and holds it to its commit. A
compile reads its episodes and extracts unlocked, then takes the lock, checks which of its
sources were erased meanwhile and writes nothing derived from them; an erasure that waited for
a compile's commit finds the compile's memories by their `sources` and erases them with the
rest. Taken first by both, the lock is never waited for while holding a row the other needs,
so neither deadlocks (a turn's erasure holds its session's row before it, which no compile
locks; several namespaces are locked in one order). What a memory's erasure reaches lies in its
namespace, since a compile writes into the namespace of the episodes it read; a turn's erasure
locks the namespaces of what it blanks first (`_NAMESPACES_OF_TURN`), and what is derived from
those lies in theirs.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

import psycopg

from gateway.store.database import Connection
from gateway.store.memories import RetireState, lock_for_retire
from gateway.store.supersessions import lock_namespaces

__all__ = ["ErasedKind", "erase_memory", "erase_turn", "lock_for_erasure"]

ErasedKind = Literal["turn", "summary", "memory"]

_NAMESPACE_OF_MEMORY = """
SELECT namespace FROM memories WHERE tenant_id = %(tenant_id)s AND memory_id = %(memory_id)s
"""
# What an erasure of a turn reaches, by the namespaces it lies in: the session's, and those of
# the memories erase_turn() blanks first, as it finds them (the copies of the turn and of the
# summaries covering it, by their stated source, and the memories naming the turn as a source);
# what is derived from those lies in their namespaces. (A memory may state any source: one
# claiming to copy the turn from another namespace is erased with it, so its namespace is locked
# too.)
_NAMESPACES_OF_TURN = """
WITH turn AS (
    SELECT turn_id FROM session_turns
     WHERE tenant_id = %(tenant_id)s AND session_id = %(session_id)s AND seq = %(seq)s)
SELECT namespace FROM sessions WHERE tenant_id = %(tenant_id)s AND session_id = %(session_id)s
UNION
SELECT namespace FROM memories
 WHERE tenant_id = %(tenant_id)s AND source_type = 'turn' AND source_ref = (TABLE turn)
UNION
SELECT namespace FROM memories
 WHERE tenant_id = %(tenant_id)s AND sources @> ARRAY[(TABLE turn)] AND sources <> '{}'
UNION
SELECT m.namespace FROM session_summaries u
  JOIN memories m ON m.tenant_id = u.tenant_id AND m.source_type = 'summary'
                 AND m.source_ref = u.summary_id
 WHERE u.tenant_id = %(tenant_id)s AND u.session_id = %(session_id)s AND u.to_seq >= %(seq)s
"""


async def lock_for_erasure(conn: Connection, tenant_id: str, memory_id: str) -> RetireState | None:
    """The namespace's write lock, then the version's row lock (`lock_for_retire`): what an
    erasure holds before it changes anything; None for an unknown memory. (A version's namespace
    never changes, so it is read unlocked.)"""
    cur = await conn.execute(_NAMESPACE_OF_MEMORY, {"tenant_id": tenant_id, "memory_id": memory_id})
    found = await cur.fetchone()
    if found is None:
        return None
    await lock_namespaces(conn, tenant_id, [str(found[0])])
    return await lock_for_retire(conn, tenant_id, memory_id)


async def erase_memory(
    conn: Connection, tenant_id: str, memory_id: str, reason: str, at: datetime
) -> list[str] | None:
    """Blank one version's heading, content and embedding, and the facts derived from it: every
    id erased, `memory_id` first; None when it has nothing left to erase. The caller holds the
    namespace's write lock (`lock_for_erasure`), so no compile interleaves."""
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
    turn left to erase. Under the write lock of every namespace it reaches (taken here, held to
    the commit), so no compile writes from what it erases."""
    params = {
        "tenant_id": tenant_id,
        "session_id": session_id,
        "seq": seq,
        "reason": reason,
        "at": at,
    }
    cur = await conn.execute(_NAMESPACES_OF_TURN, params)
    await lock_namespaces(
        conn, tenant_id, [str(namespace) for (namespace,) in await cur.fetchall()]
    )
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
