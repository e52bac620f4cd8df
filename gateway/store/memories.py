"""Memory versions: insert, retire (delete / supersede), read by id."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import psycopg
from pgvector import Vector
from psycopg.rows import class_row

from gateway.domain.memory import MemoryDraft, MemoryVersion

__all__ = [
    "IdempotentWrite",
    "NewVersion",
    "RetireState",
    "fetch_versions",
    "find_idempotent_write",
    "find_idempotent_writes",
    "insert_versions",
    "live_by_claim",
    "lock_for_retire",
    "retire",
]

Conn = psycopg.AsyncConnection[tuple[object, ...]]


@dataclass(frozen=True, slots=True)
class NewVersion:
    tenant_id: str
    memory_id: str
    draft: MemoryDraft
    agent_id: str | None
    written_by_key: str
    request_sha256: str
    created_at: datetime
    content_sha256: str
    heading_tokens: int
    tokens: int
    embedding: list[float]
    embedding_model: str
    embedding_dim: int


_INSERT = """
INSERT INTO memories (
    tenant_id, memory_id, namespace, memory_type, heading, content, confidence, labels,
    source_type, source_ref, claim_key, supersedes, agent_id, written_by_key, idempotency_key,
    request_sha256, created_at, expires_at, content_sha256, heading_tokens, tokens, embedding,
    embedding_model, embedding_dim, sources, extractor, valid_from, claim_value, claim_previous)
VALUES (
    %(tenant_id)s, %(memory_id)s, %(namespace)s, %(memory_type)s, %(heading)s, %(content)s,
    %(confidence)s, %(labels)s, %(source_type)s, %(source_ref)s, %(claim_key)s, %(supersedes)s,
    %(agent_id)s, %(written_by_key)s, %(idempotency_key)s, %(request_sha256)s, %(created_at)s,
    %(expires_at)s, %(content_sha256)s, %(heading_tokens)s, %(tokens)s, %(embedding)s::vector,
    %(embedding_model)s, %(embedding_dim)s, %(sources)s, %(extractor)s, %(valid_from)s,
    %(claim_value)s, %(claim_previous)s)
ON CONFLICT (tenant_id, idempotency_key, namespace) WHERE idempotency_key IS NOT NULL DO NOTHING
RETURNING memory_id
"""


def _insert_params(version: NewVersion) -> dict[str, object]:
    draft = version.draft
    return {
        "tenant_id": version.tenant_id,
        "memory_id": version.memory_id,
        "namespace": draft.namespace,
        "memory_type": draft.memory_type,
        "heading": draft.heading,
        "content": draft.content,
        "confidence": round(draft.confidence, 3),
        "labels": list(draft.labels),
        "source_type": draft.source_type,
        "source_ref": draft.source_ref,
        "claim_key": draft.claim_key,
        "supersedes": draft.supersedes,
        "agent_id": version.agent_id,
        "written_by_key": version.written_by_key,
        "idempotency_key": draft.idempotency_key,
        "request_sha256": version.request_sha256,
        "created_at": version.created_at,
        "expires_at": draft.expires_at,
        "content_sha256": version.content_sha256,
        "heading_tokens": version.heading_tokens,
        "tokens": version.tokens,
        # Sent binary (float4 as PostgreSQL stores it): formatting 384 floats as text was a tenth
        # of a batch write's CPU.
        "embedding": Vector(version.embedding),
        "embedding_model": version.embedding_model,
        "embedding_dim": version.embedding_dim,
        "sources": list(draft.sources),
        "extractor": draft.extractor,
        "valid_from": draft.valid_from,
        "claim_value": draft.claim_value,
        "claim_previous": draft.claim_previous,
    }


async def insert_versions(conn: Conn, versions: Sequence[NewVersion]) -> list[NewVersion]:
    """Insert versions in one pipelined round trip (one statement each, sent together); those
    skipped because their idempotency key was already used, which wrote nothing."""
    if not versions:
        return []
    async with conn.cursor() as cur:
        await cur.executemany(_INSERT, [_insert_params(v) for v in versions], returning=True)
        skipped = []
        for version in versions:
            if await cur.fetchone() is None:
                skipped.append(version)
            cur.nextset()
    return skipped


@dataclass(frozen=True, slots=True)
class IdempotentWrite:
    memory_id: str
    request_sha256: str


# An idempotency key answers for the writes made with it in one namespace (migration 0028): a
# key used in a namespace the writer may not read tells it nothing.
_FIND_IDEMPOTENT = """
SELECT memory_id, request_sha256 FROM memories
 WHERE tenant_id = %(tenant_id)s AND idempotency_key = %(key)s AND namespace = %(namespace)s
"""


_FIND_IDEMPOTENT_MANY = """
SELECT namespace, idempotency_key, memory_id, request_sha256 FROM memories
 WHERE tenant_id = %(tenant_id)s AND idempotency_key = ANY(%(keys)s)
   AND namespace = ANY(%(namespaces)s)
"""


async def find_idempotent_writes(
    conn: Conn, tenant_id: str, keys: Sequence[tuple[str, str]]
) -> dict[tuple[str, str], IdempotentWrite]:
    """The earlier writes under any of `keys` (namespace, idempotency key), by that pair (one
    round trip; none when no key)."""
    if not keys:
        return {}
    params = {
        "tenant_id": tenant_id,
        "keys": sorted({key for _, key in keys}),
        "namespaces": sorted({namespace for namespace, _ in keys}),
    }
    cur = await conn.execute(_FIND_IDEMPOTENT_MANY, params)
    wanted = set(keys)
    return {
        (str(namespace), str(key)): IdempotentWrite(str(memory_id), str(sha))
        for namespace, key, memory_id, sha in await cur.fetchall()
        if (namespace, key) in wanted
    }


async def find_idempotent_write(
    conn: Conn, tenant_id: str, namespace: str, key: str
) -> IdempotentWrite | None:
    async with conn.cursor(row_factory=class_row(IdempotentWrite)) as cur:
        params = {"tenant_id": tenant_id, "namespace": namespace, "key": key}
        await cur.execute(_FIND_IDEMPOTENT, params)
        return await cur.fetchone()


@dataclass(frozen=True, slots=True)
class RetireState:
    memory_id: str
    namespace: str
    deleted_at: datetime | None
    superseded_by: str | None


_LOCK = """
SELECT memory_id, namespace, deleted_at, superseded_by FROM memories
 WHERE tenant_id = %(tenant_id)s AND memory_id = %(memory_id)s
   FOR UPDATE
"""


async def lock_for_retire(conn: Conn, tenant_id: str, memory_id: str) -> RetireState | None:
    """Lock one version against concurrent retirement (two supersedes of it cannot both win)."""
    async with conn.cursor(row_factory=class_row(RetireState)) as cur:
        await cur.execute(_LOCK, {"tenant_id": tenant_id, "memory_id": memory_id})
        return await cur.fetchone()


_RETIRE = """
UPDATE memories
   SET deleted_at = %(at)s, deleted_reason = %(reason)s, superseded_by = %(superseded_by)s,
       superseded_decision = %(decision)s
 WHERE tenant_id = %(tenant_id)s AND memory_id = %(memory_id)s AND deleted_at IS NULL
"""


async def retire(
    conn: Conn,
    tenant_id: str,
    memory_id: str,
    *,
    at: datetime,
    reason: str,
    superseded_by: str | None = None,
    decision: str | None = None,
) -> bool:
    """Retire one live version; False when it was already retired (nothing changed)."""
    cur = await conn.execute(
        _RETIRE,
        {
            "tenant_id": tenant_id,
            "memory_id": memory_id,
            "at": at,
            "reason": reason,
            "superseded_by": superseded_by,
            "decision": decision,
        },
    )
    return cur.rowcount == 1


_FETCH = """
SELECT memory_id, namespace, memory_type, heading, content, confidence::float8 AS confidence,
       labels, source_type, source_ref, claim_key, supersedes, superseded_by, agent_id, created_at,
       expires_at, deleted_at, deleted_reason, erased_at, content_sha256, heading_tokens, tokens,
       embedding_model, sources, extractor, valid_from, superseded_decision, written_by_key
  FROM memories
 WHERE tenant_id = %(tenant_id)s AND memory_id = ANY(%(ids)s)
 ORDER BY memory_id
"""


async def fetch_versions(conn: Conn, tenant_id: str, ids: Sequence[str]) -> list[MemoryVersion]:
    async with conn.cursor(row_factory=class_row(MemoryVersion)) as cur:
        await cur.execute(_FETCH, {"tenant_id": tenant_id, "ids": list(ids)})
        return await cur.fetchall()


# The claims' partial index (migration 0009) holds exactly the versions not retired.
_LIVE_BY_CLAIM = """
SELECT memory_id FROM memories
 WHERE tenant_id = %(tenant_id)s AND namespace = %(namespace)s
   AND claim_key = ANY(%(claim_keys)s) AND claim_key IS NOT NULL AND deleted_at IS NULL
 ORDER BY claim_key, created_at DESC, memory_id DESC
"""


async def live_by_claim(
    conn: Conn, tenant_id: str, namespace: str, claim_keys: Sequence[str]
) -> list[str]:
    """The ids of the versions of `namespace` holding any of `claim_keys` that are not retired
    (deleted or superseded), by claim key, newest first. Expiry is not judged here: the
    disclosure that reads them withholds an expired one with its reason."""
    params = {"tenant_id": tenant_id, "namespace": namespace, "claim_keys": list(claim_keys)}
    cur = await conn.execute(_LIVE_BY_CLAIM, params)
    return [str(memory_id) for (memory_id,) in await cur.fetchall()]
