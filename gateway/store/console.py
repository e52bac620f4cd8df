"""The reads only the auditor's console makes: a memory's whole version chain, the tenant's
policy bundles and its activation history. Everything else the console shows comes through the
use cases the API uses."""

from __future__ import annotations

from datetime import datetime

from psycopg.rows import class_row

from gateway.domain.memory import MemoryVersion
from gateway.store.database import Connection
from gateway.store.policies import ActivationRow, BundleRow

__all__ = ["activation_history", "erasure_reason", "stored_bundles", "version_chain"]

# The versions linked to one by `supersedes` in either direction (an update is a new row naming
# the one it replaces). UNION, not UNION ALL: each version is reached once, so a cycle, which
# the write path cannot make, would still end. Bounded, as every list a page shows.
_CHAIN = """
WITH RECURSIVE chain(memory_id, supersedes, superseded_by) AS (
    SELECT memory_id, supersedes, superseded_by FROM memories
     WHERE tenant_id = %(tenant_id)s AND memory_id = %(memory_id)s
    UNION
    SELECT m.memory_id, m.supersedes, m.superseded_by FROM memories m, chain c
     WHERE m.tenant_id = %(tenant_id)s
       AND (m.memory_id = c.supersedes OR m.memory_id = c.superseded_by
            OR m.supersedes = c.memory_id)
)
SELECT m.memory_id, m.namespace, m.memory_type, m.heading, m.content,
       m.confidence::float8 AS confidence, m.labels, m.source_type, m.source_ref, m.claim_key,
       m.supersedes, m.superseded_by, m.agent_id, m.created_at, m.expires_at, m.deleted_at,
       m.deleted_reason, m.erased_at, m.content_sha256, m.heading_tokens, m.tokens,
       m.embedding_model
  FROM memories m JOIN (SELECT DISTINCT memory_id FROM chain) c USING (memory_id)
 WHERE m.tenant_id = %(tenant_id)s
 ORDER BY m.created_at, m.memory_id
 LIMIT %(limit)s
"""


async def version_chain(
    conn: Connection, tenant_id: str, memory_id: str, limit: int = 200
) -> list[MemoryVersion]:
    """Every version of the memory `memory_id` belongs to, oldest first; empty if unknown."""
    async with conn.cursor(row_factory=class_row(MemoryVersion)) as cur:
        await cur.execute(_CHAIN, {"tenant_id": tenant_id, "memory_id": memory_id, "limit": limit})
        return await cur.fetchall()


async def erasure_reason(conn: Connection, tenant_id: str, memory_id: str) -> str | None:
    cur = await conn.execute(
        "SELECT reason FROM erasures WHERE tenant_id = %(tenant_id)s AND memory_id = %(memory_id)s",
        {"tenant_id": tenant_id, "memory_id": memory_id},
    )
    row = await cur.fetchone()
    return str(row[0]) if row is not None else None


_BUNDLES = """
SELECT digest, canonical, source, name, revision, uploaded_at, uploaded_by FROM policy_bundles
 WHERE tenant_id = %(tenant_id)s ORDER BY uploaded_at DESC, digest LIMIT %(limit)s
"""


async def stored_bundles(conn: Connection, tenant_id: str, limit: int = 200) -> list[BundleRow]:
    """The tenant's stored bundles, newest upload first."""
    async with conn.cursor(row_factory=class_row(BundleRow)) as cur:
        await cur.execute(_BUNDLES, {"tenant_id": tenant_id, "limit": limit})
        return await cur.fetchall()


_ACTIVATIONS = """
SELECT digest, mode, activated_at, activated_by FROM policy_activations
 WHERE tenant_id = %(tenant_id)s AND activated_at <= %(at)s
 ORDER BY activation DESC LIMIT %(limit)s
"""


async def activation_history(
    conn: Connection, tenant_id: str, at: datetime, limit: int = 200
) -> list[ActivationRow]:
    """Who activated which bundle in which mode, when: the newest first, up to `at`."""
    async with conn.cursor(row_factory=class_row(ActivationRow)) as cur:
        await cur.execute(_ACTIVATIONS, {"tenant_id": tenant_id, "at": at, "limit": limit})
        return await cur.fetchall()
