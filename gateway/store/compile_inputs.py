"""What a compile reads (ARCHITECTURE §12): a session's or a namespace's episodes with the labels
what it derives from them inherits, the namespace's live claims, a session's live digest, which
of some memories have retired, and which of its sources were erased meanwhile."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from psycopg.rows import class_row

from gateway.store.database import Connection

__all__ = [
    "DigestRow",
    "EpisodeRow",
    "LiveClaim",
    "episodes_after",
    "erased_among",
    "live_claims",
    "live_digest",
    "namespace_episodes",
    "retired_among",
    "session_episodes",
]


@dataclass(frozen=True, slots=True)
class EpisodeRow:
    seq: int  # the turn's seq (session scope); 0 for a namespace's memories
    turn_id: str | None
    memory_id: str | None  # the turn's remembered copy (session scope), or the memory itself
    role: str
    content: str
    occurred_at: datetime
    # What a memory derived from the episode inherits (policy follows provenance): a turn's are
    # its session's, a memory's its own; an episode that is both has both (possibly repeated).
    labels: list[str]


# The remembered copy of a turn is found by its idempotency key (`turn:<turn_id>`) in the session's
# namespace, in a lateral subquery per turn kept apart by its LIMIT: the key's unique index makes
# that one index probe whatever the statistics say (a key another namespace reused sorts last and
# is no copy). As a join, on a conversation imported just before its compile (not yet analysed),
# the planner took the tenant's whole memories per turn: 0.8 s instead of 4 ms for 500 turns of
# 3,000; naming the namespace in the probe's condition made it walk the namespace's memories
# instead (30-340 ms).
_SESSION_EPISODES = """
SELECT t.seq, t.turn_id, r.memory_id, t.role, t.content, t.occurred_at,
       s.labels || coalesce(r.labels, '{}') AS labels
  FROM session_turns t
  JOIN sessions s ON s.tenant_id = t.tenant_id AND s.session_id = t.session_id
  LEFT JOIN LATERAL (
        SELECT m.memory_id, m.labels, m.namespace FROM memories m
         WHERE m.tenant_id = t.tenant_id AND m.idempotency_key = 'turn:' || t.turn_id
         ORDER BY m.namespace <> s.namespace
         LIMIT 1) r ON r.namespace = s.namespace
 WHERE t.tenant_id = %(tenant_id)s AND t.session_id = %(session_id)s AND t.seq > %(after)s
 ORDER BY t.seq
 LIMIT %(limit)s
"""


async def session_episodes(
    conn: Connection, tenant_id: str, session_id: str, after: int, limit: int
) -> list[EpisodeRow]:
    params = {"tenant_id": tenant_id, "session_id": session_id, "after": after, "limit": limit}
    async with conn.cursor(row_factory=class_row(EpisodeRow)) as cur:
        await cur.execute(_SESSION_EPISODES, params)
        return await cur.fetchall()


@dataclass(frozen=True, slots=True)
class LiveClaim:
    claim_key: str
    value: str


# The claims an update may refer to without naming them: every live memory of the namespace
# with a claim key and a stated value, oldest first (the newest of a key is the one that holds).
_LIVE_CLAIMS = """
SELECT claim_key, claim_value AS value FROM memories
 WHERE tenant_id = %(tenant_id)s AND namespace = %(namespace)s
   AND claim_key IS NOT NULL AND claim_value IS NOT NULL
   AND superseded_by IS NULL AND deleted_at IS NULL AND erased_at IS NULL
 ORDER BY coalesce(valid_from, created_at), created_at, memory_id
"""


async def live_claims(conn: Connection, tenant_id: str, namespace: str) -> list[LiveClaim]:
    params = {"tenant_id": tenant_id, "namespace": namespace}
    async with conn.cursor(row_factory=class_row(LiveClaim)) as cur:
        await cur.execute(_LIVE_CLAIMS, params)
        return await cur.fetchall()


# A namespace's episodes: its live episodic memories not written by a compile, in id (= time)
# order; a remembered turn keeps its turn's role and time, and its session's labels.
_NAMESPACE_EPISODES = """
SELECT 0::bigint AS seq, t.turn_id, m.memory_id, coalesce(t.role, 'user') AS role, m.content,
       coalesce(t.occurred_at, m.created_at) AS occurred_at,
       m.labels || coalesce(s.labels, '{}') AS labels
  FROM memories m
  LEFT JOIN session_turns t
    ON m.source_type = 'turn' AND t.tenant_id = m.tenant_id AND t.turn_id = m.source_ref
  LEFT JOIN sessions s ON s.tenant_id = t.tenant_id AND s.session_id = t.session_id
 WHERE m.tenant_id = %(tenant_id)s AND m.namespace = %(namespace)s
   AND m.memory_type = 'episodic' AND m.extractor IS NULL
   AND m.deleted_at IS NULL AND m.erased_at IS NULL
   AND m.memory_id > %(after)s
 ORDER BY m.memory_id
 LIMIT %(limit)s
"""


_SESSION_COUNT = """
SELECT count(*) FROM session_turns
 WHERE tenant_id = %(tenant_id)s AND session_id = %(session_id)s AND seq > %(after)s
"""
_NAMESPACE_COUNT = """
SELECT count(*) FROM memories m
 WHERE m.tenant_id = %(tenant_id)s AND m.namespace = %(namespace)s
   AND m.memory_type = 'episodic' AND m.extractor IS NULL
   AND m.deleted_at IS NULL AND m.erased_at IS NULL
   AND m.memory_id > %(after)s
"""


async def episodes_after(
    conn: Connection,
    tenant_id: str,
    *,
    session_id: str | None,
    namespace: str,
    after_seq: int,
    after_memory: str,
) -> int:
    """How many episodes `session_episodes` (a session's scope) or `namespace_episodes` would
    read past the watermark, counted as they select them."""
    if session_id is not None:
        params: dict[str, object] = {
            "tenant_id": tenant_id,
            "session_id": session_id,
            "after": after_seq,
        }
        cur = await conn.execute(_SESSION_COUNT, params)
    else:
        params = {"tenant_id": tenant_id, "namespace": namespace, "after": after_memory}
        cur = await conn.execute(_NAMESPACE_COUNT, params)
    row = await cur.fetchone()
    return int(row[0]) if row else 0  # type: ignore[call-overload]


async def namespace_episodes(
    conn: Connection, tenant_id: str, namespace: str, after: str, limit: int
) -> list[EpisodeRow]:
    params = {"tenant_id": tenant_id, "namespace": namespace, "after": after, "limit": limit}
    async with conn.cursor(row_factory=class_row(EpisodeRow)) as cur:
        await cur.execute(_NAMESPACE_EPISODES, params)
        return await cur.fetchall()


@dataclass(frozen=True, slots=True)
class DigestRow:
    memory_id: str
    content: str
    valid_from: datetime | None
    labels: list[str]


_LIVE_DIGEST = """
SELECT memory_id, content, valid_from, labels FROM memories
 WHERE tenant_id = %(tenant_id)s AND namespace = %(namespace)s AND source_type = 'compile'
   AND memory_type = 'episodic' AND source_ref = %(session_id)s AND extractor = %(extractor)s
   AND superseded_by IS NULL AND deleted_at IS NULL AND erased_at IS NULL
 ORDER BY memory_id DESC
 LIMIT 1
"""


async def live_digest(
    conn: Connection, tenant_id: str, namespace: str, session_id: str, extractor: str
) -> DigestRow | None:
    """The live digest of a session by one digest version (the newest, should there be two)."""
    params = {
        "tenant_id": tenant_id,
        "namespace": namespace,
        "session_id": session_id,
        "extractor": extractor,
    }
    async with conn.cursor(row_factory=class_row(DigestRow)) as cur:
        await cur.execute(_LIVE_DIGEST, params)
        return await cur.fetchone()


_RETIRED_AMONG = """
SELECT memory_id FROM memories
 WHERE tenant_id = %(tenant_id)s AND memory_id = ANY(%(ids)s)
   AND (superseded_by IS NOT NULL OR deleted_at IS NOT NULL OR erased_at IS NOT NULL)
"""


async def retired_among(conn: Connection, tenant_id: str, ids: Sequence[str]) -> set[str]:
    """Those of `ids` that are no longer live (superseded, deleted or erased)."""
    if not ids:
        return set()
    cur = await conn.execute(_RETIRED_AMONG, {"tenant_id": tenant_id, "ids": list(ids)})
    return {str(row[0]) for row in await cur.fetchall()}


# Both kinds of source a compiled memory names: memory versions and session turns (each by its
# tenant's unique index).
_ERASED_AMONG = """
SELECT memory_id FROM memories
 WHERE tenant_id = %(tenant_id)s AND memory_id = ANY(%(ids)s) AND erased_at IS NOT NULL
UNION ALL
SELECT turn_id FROM session_turns
 WHERE tenant_id = %(tenant_id)s AND turn_id = ANY(%(ids)s) AND erased_at IS NOT NULL
"""


async def erased_among(conn: Connection, tenant_id: str, ids: Sequence[str]) -> set[str]:
    """Those of `ids` (memory or turn ids) that were erased, as committed when asked."""
    if not ids:
        return set()
    cur = await conn.execute(_ERASED_AMONG, {"tenant_id": tenant_id, "ids": list(ids)})
    return {str(row[0]) for row in await cur.fetchall()}
