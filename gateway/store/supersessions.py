"""Supersession decisions and conflicts (ARCHITECTURE §12): the competitors of a new fact, the
decision rows, the conflict rows."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from psycopg.rows import class_row

from gateway.store.database import Connection

__all__ = [
    "ConflictRow",
    "DecisionRow",
    "LiveVersion",
    "OpenConflictRow",
    "claim_competitors",
    "conflict",
    "conflicts_page",
    "decisions_about",
    "insert_conflict",
    "insert_decision",
    "lock_namespaces",
    "open_conflicts_among",
    "resolve_conflict",
    "similar_competitors",
    "sources_of",
    "turns_stating",
]


@dataclass(frozen=True, slots=True)
class LiveVersion:
    """A live version competing with a new one for a claim (the rules' `Claimant`)."""

    memory_id: str
    memory_type: str
    text: str
    claim_key: str | None
    valid_from: datetime | None
    created_at: datetime
    content_sha256: str
    value: str | None
    previous: str | None


_LOCK = "SELECT pg_advisory_xact_lock(hashtextextended('ctxgw/supersede/' || %(key)s, 0))"


async def lock_namespaces(conn: Connection, tenant_id: str, namespaces: Sequence[str]) -> None:
    """Serialize supersession per namespace for the rest of the transaction: two writers of one
    claim cannot both see the other missing. Taken in sorted order, so never a deadlock."""
    for namespace in sorted(set(namespaces)):
        await conn.execute(_LOCK, {"key": f"{tenant_id}/{namespace}"})


_CLAIM = """
SELECT memory_id, memory_type, heading || E'\n' || content AS text, claim_key, valid_from,
       created_at, content_sha256, claim_value AS value, claim_previous AS previous
  FROM memories
 WHERE tenant_id = %(tenant_id)s AND namespace = %(namespace)s AND claim_key = %(claim_key)s
   AND deleted_at IS NULL AND erased_at IS NULL AND memory_id <> %(memory_id)s
"""


async def claim_competitors(
    conn: Connection, tenant_id: str, namespace: str, claim_key: str, memory_id: str
) -> list[LiveVersion]:
    params = {
        "tenant_id": tenant_id,
        "namespace": namespace,
        "claim_key": claim_key,
        "memory_id": memory_id,
    }
    async with conn.cursor(row_factory=class_row(LiveVersion)) as cur:
        await cur.execute(_CLAIM, params)
        return await cur.fetchall()


# Full-text prefilter: a fact at least 60% alike shares words with the new one, so the few best
# by text rank are the only ones worth measuring (bounded work however many facts exist).
_SIMILAR = """
SELECT memory_id, memory_type, heading || E'\n' || content AS text, claim_key, valid_from,
       created_at, content_sha256, claim_value AS value, claim_previous AS previous
  FROM memories
 WHERE tenant_id = %(tenant_id)s AND namespace = %(namespace)s AND memory_type = %(memory_type)s
   AND extractor IS NOT NULL AND claim_key IS NULL
   AND deleted_at IS NULL AND erased_at IS NULL AND memory_id <> %(memory_id)s
   AND tsv @@ to_tsquery('english', %(query)s)
 ORDER BY ts_rank(tsv, to_tsquery('english', %(query)s)) DESC, memory_id
 LIMIT 20
"""
_TERM = re.compile(r"[a-z0-9]+")


async def similar_competitors(
    conn: Connection, tenant_id: str, namespace: str, new: LiveVersion
) -> list[LiveVersion]:
    terms = sorted(set(_TERM.findall(new.text.casefold())))
    if not terms:
        return []
    params = {
        "tenant_id": tenant_id,
        "namespace": namespace,
        "memory_type": new.memory_type,
        "memory_id": new.memory_id,
        "query": " | ".join(terms[:64]),
    }
    async with conn.cursor(row_factory=class_row(LiveVersion)) as cur:
        await cur.execute(_SIMILAR, params)
        return await cur.fetchall()


# The live raw turns (and session digests, which retell turns) of a namespace that state a
# value, up to an instant (a turn's own time, a digest's start):
# the full-text index finds the candidates (a value of stop words only is looked for by ILIKE
# alone), ILIKE narrows, the caller checks whole words (gateway.core.supersession.mentions).
_STATING = r"""
SELECT m.memory_id, m.content FROM memories m
  LEFT JOIN session_turns t
    ON t.tenant_id = m.tenant_id AND t.turn_id = m.source_ref
 WHERE m.tenant_id = %(tenant_id)s AND m.namespace = %(namespace)s
   AND (m.source_type = 'turn' OR (m.source_type = 'compile' AND m.memory_type = 'episodic'))
   AND m.superseded_by IS NULL AND m.deleted_at IS NULL AND m.erased_at IS NULL
   AND (m.tsv @@ phraseto_tsquery('english', %(value)s)
        OR numnode(phraseto_tsquery('english', %(value)s)) = 0)
   AND m.content ILIKE %(like)s ESCAPE '\'
   AND coalesce(t.occurred_at, m.valid_from, m.created_at) <= %(until)s
 ORDER BY m.memory_id
"""


async def turns_stating(
    conn: Connection, tenant_id: str, namespace: str, value: str, until: datetime
) -> list[tuple[str, str]]:
    """(memory_id, content) of live remembered turns containing `value`, said by `until`."""
    escaped = value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    params = {
        "tenant_id": tenant_id,
        "namespace": namespace,
        "value": value,
        # A space or hyphen between words matches either (`mentions` then checks words).
        "like": "%" + re.sub(r"[ -]+", "_", escaped) + "%",
        "until": until,
    }
    cur = await conn.execute(_STATING, params)
    return [(str(row[0]), str(row[1])) for row in await cur.fetchall()]


_SOURCES = """
SELECT sources FROM memories WHERE tenant_id = %(tenant_id)s AND memory_id = %(memory_id)s
"""


async def sources_of(conn: Connection, tenant_id: str, memory_id: str) -> list[str]:
    cur = await conn.execute(_SOURCES, {"tenant_id": tenant_id, "memory_id": memory_id})
    row = await cur.fetchone()
    return [] if row is None else list(row[0])  # type: ignore[call-overload]


@dataclass(frozen=True, slots=True)
class DecisionRow:
    decision_id: str
    namespace: str
    older: str
    newer: str
    rule: str
    score: float | None
    threshold: float | None
    claim_key: str | None
    job_id: str | None
    decided_at: datetime


_INSERT_DECISION = """
INSERT INTO supersessions (tenant_id, decision_id, namespace, older, newer, rule, score,
                           threshold, claim_key, job_id, decided_at)
VALUES (%(tenant_id)s, %(decision_id)s, %(namespace)s, %(older)s, %(newer)s, %(rule)s,
        %(score)s, %(threshold)s, %(claim_key)s, %(job_id)s, %(decided_at)s)
"""


async def insert_decision(conn: Connection, tenant_id: str, row: DecisionRow) -> None:
    await conn.execute(
        _INSERT_DECISION,
        {
            "tenant_id": tenant_id,
            "decision_id": row.decision_id,
            "namespace": row.namespace,
            "older": row.older,
            "newer": row.newer,
            "rule": row.rule,
            "score": row.score,
            "threshold": row.threshold,
            "claim_key": row.claim_key,
            "job_id": row.job_id,
            "decided_at": row.decided_at,
        },
    )


_DECISIONS = """
SELECT decision_id, namespace, older, newer, rule, score::float8 AS score,
       threshold::float8 AS threshold, claim_key, job_id, decided_at
  FROM supersessions
 WHERE tenant_id = %(tenant_id)s AND (older = ANY(%(ids)s) OR newer = ANY(%(ids)s))
 ORDER BY decided_at, decision_id
"""


async def decisions_about(
    conn: Connection, tenant_id: str, ids: Sequence[str]
) -> list[DecisionRow]:
    """Every decision that retired one of `ids` or was won by one of them."""
    async with conn.cursor(row_factory=class_row(DecisionRow)) as cur:
        await cur.execute(_DECISIONS, {"tenant_id": tenant_id, "ids": list(ids)})
        return await cur.fetchall()


@dataclass(frozen=True, slots=True)
class ConflictRow:
    conflict_id: str
    namespace: str
    claim_key: str
    first_id: str
    second_id: str
    opened_at: datetime
    job_id: str | None
    resolved_at: datetime | None
    winner: str | None
    reason: str | None
    decision_id: str | None


_INSERT_CONFLICT = """
INSERT INTO conflicts (tenant_id, conflict_id, namespace, claim_key, first_id, second_id,
                       opened_at, job_id)
VALUES (%(tenant_id)s, %(conflict_id)s, %(namespace)s, %(claim_key)s, %(first_id)s,
        %(second_id)s, %(opened_at)s, %(job_id)s)
ON CONFLICT (tenant_id, first_id, second_id) DO NOTHING
RETURNING conflict_id
"""


async def insert_conflict(conn: Connection, tenant_id: str, row: ConflictRow) -> bool:
    """Open a conflict; False when this pair already has one."""
    cur = await conn.execute(
        _INSERT_CONFLICT,
        {
            "tenant_id": tenant_id,
            "conflict_id": row.conflict_id,
            "namespace": row.namespace,
            "claim_key": row.claim_key,
            "first_id": row.first_id,
            "second_id": row.second_id,
            "opened_at": row.opened_at,
            "job_id": row.job_id,
        },
    )
    return await cur.fetchone() is not None


_CONFLICT = """
SELECT conflict_id, namespace, claim_key, first_id, second_id, opened_at, job_id, resolved_at,
       winner, reason, decision_id
  FROM conflicts
 WHERE tenant_id = %(tenant_id)s AND conflict_id = %(conflict_id)s
   FOR UPDATE
"""


async def conflict(conn: Connection, tenant_id: str, conflict_id: str) -> ConflictRow | None:
    """One conflict, locked against a concurrent resolution."""
    async with conn.cursor(row_factory=class_row(ConflictRow)) as cur:
        await cur.execute(_CONFLICT, {"tenant_id": tenant_id, "conflict_id": conflict_id})
        return await cur.fetchone()


_CONFLICTS = """
SELECT conflict_id, namespace, claim_key, first_id, second_id, opened_at, job_id, resolved_at,
       winner, reason, decision_id
  FROM conflicts
 WHERE tenant_id = %(tenant_id)s
   AND (%(namespaces)s::text[] IS NULL OR namespace = ANY(%(namespaces)s))
   AND (%(open_only)s IS FALSE OR resolved_at IS NULL)
   AND conflict_id > %(after)s
 ORDER BY conflict_id
 LIMIT %(limit)s
"""


async def conflicts_page(
    conn: Connection,
    tenant_id: str,
    namespaces: Sequence[str] | None,
    *,
    open_only: bool,
    after: str,
    limit: int,
) -> list[ConflictRow]:
    """Conflicts in id order after `after`, in `namespaces` (None: all)."""
    params = {
        "tenant_id": tenant_id,
        "namespaces": None if namespaces is None else list(namespaces),
        "open_only": open_only,
        "after": after,
        "limit": limit,
    }
    async with conn.cursor(row_factory=class_row(ConflictRow)) as cur:
        await cur.execute(_CONFLICTS, params)
        return await cur.fetchall()


_RESOLVE = """
UPDATE conflicts
   SET resolved_at = %(at)s, winner = %(winner)s, reason = %(reason)s,
       decision_id = %(decision_id)s, resolved_by = %(by)s
 WHERE tenant_id = %(tenant_id)s AND conflict_id = %(conflict_id)s AND resolved_at IS NULL
"""


async def resolve_conflict(
    conn: Connection,
    tenant_id: str,
    conflict_id: str,
    *,
    at: datetime,
    winner: str,
    reason: str,
    decision_id: str | None,
    by: str,
) -> None:
    await conn.execute(
        _RESOLVE,
        {
            "tenant_id": tenant_id,
            "conflict_id": conflict_id,
            "at": at,
            "winner": winner,
            "reason": reason,
            "decision_id": decision_id,
            "by": by,
        },
    )


@dataclass(frozen=True, slots=True)
class OpenConflictRow:
    """An open conflict with each side's writer and the instant it became true."""

    claim_key: str
    first_id: str
    first_agent_id: str | None
    first_key_id: str
    first_at: datetime
    second_id: str
    second_agent_id: str | None
    second_key_id: str
    second_at: datetime


_OPEN_AMONG = """
SELECT c.claim_key,
       c.first_id, f.agent_id AS first_agent_id, f.written_by_key AS first_key_id,
       coalesce(f.valid_from, f.created_at) AS first_at,
       c.second_id, s.agent_id AS second_agent_id, s.written_by_key AS second_key_id,
       coalesce(s.valid_from, s.created_at) AS second_at
  FROM conflicts c
  JOIN memories f ON f.tenant_id = c.tenant_id AND f.memory_id = c.first_id
  JOIN memories s ON s.tenant_id = c.tenant_id AND s.memory_id = c.second_id
 WHERE c.tenant_id = %(tenant_id)s
   AND (c.first_id = ANY(%(ids)s) OR c.second_id = ANY(%(ids)s))
   AND c.opened_at <= %(at)s AND (c.resolved_at IS NULL OR c.resolved_at > %(at)s)
 ORDER BY c.first_id, c.second_id
"""


async def open_conflicts_among(
    conn: Connection, tenant_id: str, ids: Sequence[str], at: datetime
) -> list[OpenConflictRow]:
    """The conflicts open at `at` with a side among `ids`, in id order."""
    async with conn.cursor(row_factory=class_row(OpenConflictRow)) as cur:
        await cur.execute(_OPEN_AMONG, {"tenant_id": tenant_id, "ids": list(ids), "at": at})
        return await cur.fetchall()
