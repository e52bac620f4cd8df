"""Policy bundles (content-addressed, kept forever) and their activations."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from psycopg.rows import class_row

from gateway.store.database import Connection

__all__ = [
    "ActivationRow",
    "BundleRow",
    "active_policy",
    "find_bundle",
    "insert_activation",
    "insert_bundle",
]


@dataclass(frozen=True, slots=True)
class BundleRow:
    digest: str
    canonical: bytes
    source: str
    name: str
    revision: str | None
    uploaded_at: datetime
    uploaded_by: str


@dataclass(frozen=True, slots=True)
class ActivationRow:
    digest: str
    mode: str
    activated_at: datetime
    activated_by: str


_INSERT_BUNDLE = """
INSERT INTO policy_bundles (tenant_id, digest, canonical, source, name, revision, uploaded_by)
VALUES (%(tenant_id)s, %(digest)s, %(canonical)s, %(source)s, %(name)s, %(revision)s, %(by)s)
ON CONFLICT (tenant_id, digest) DO NOTHING
RETURNING 1
"""


async def insert_bundle(
    conn: Connection,
    tenant_id: str,
    *,
    digest: str,
    canonical: bytes,
    source: str,
    name: str,
    revision: str | None,
    uploaded_by: str,
) -> bool:
    """Store a bundle; False when the same digest was already stored (content-addressed). The
    answer is read from RETURNING, not rowcount, which pipeline mode knows only once synced."""
    cur = await conn.execute(
        _INSERT_BUNDLE,
        {
            "tenant_id": tenant_id,
            "digest": digest,
            "canonical": canonical,
            "source": source,
            "name": name,
            "revision": revision,
            "by": uploaded_by,
        },
    )
    return await cur.fetchone() is not None


_FIND_BUNDLE = """
SELECT digest, canonical, source, name, revision, uploaded_at, uploaded_by
  FROM policy_bundles WHERE tenant_id = %(tenant_id)s AND digest = %(digest)s
"""


async def find_bundle(conn: Connection, tenant_id: str, digest: str) -> BundleRow | None:
    async with conn.cursor(row_factory=class_row(BundleRow)) as cur:
        await cur.execute(_FIND_BUNDLE, {"tenant_id": tenant_id, "digest": digest})
        return await cur.fetchone()


_INSERT_ACTIVATION = """
INSERT INTO policy_activations (tenant_id, digest, mode, activated_by, activated_at)
VALUES (%(tenant_id)s, %(digest)s, %(mode)s, %(by)s, %(at)s)
"""


async def insert_activation(
    conn: Connection, tenant_id: str, digest: str, mode: str, by: str, at: datetime
) -> None:
    await conn.execute(
        _INSERT_ACTIVATION,
        {"tenant_id": tenant_id, "digest": digest, "mode": mode, "by": by, "at": at},
    )


_ACTIVE = """
SELECT digest, mode, activated_at, activated_by FROM policy_activations
 WHERE tenant_id = %(tenant_id)s AND activated_at <= %(at)s
 ORDER BY activation DESC LIMIT 1
"""


async def active_policy(conn: Connection, tenant_id: str, at: datetime) -> ActivationRow | None:
    """The activation in force at `at` (the latest one made before it), or None."""
    async with conn.cursor(row_factory=class_row(ActivationRow)) as cur:
        await cur.execute(_ACTIVE, {"tenant_id": tenant_id, "at": at})
        return await cur.fetchone()
