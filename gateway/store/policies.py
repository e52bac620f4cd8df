"""Policy bundles (content-addressed, kept forever) and their activations."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from psycopg.rows import class_row

from gateway.store.database import Connection

__all__ = [
    "ActivationRow",
    "BundleRow",
    "PolicyState",
    "find_bundle",
    "insert_activation",
    "insert_bundle",
    "policy_state",
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


@dataclass(frozen=True, slots=True)
class PolicyState:
    """A tenant's policy at an instant, as one query sees it."""

    activation: ActivationRow | None  # None: never activated, the shipped default applies
    default_stored: bool  # whether the tenant's store holds the shipped default's digest


# One row always: the activation (NULLs when none) beside whether the shipped default is stored.
# Asking the store each time, in the request's own transaction, costs no round trip and, unlike a
# process-local note, cannot outlive a transaction that rolled back.
_STATE = """
SELECT a.digest, a.mode, a.activated_at, a.activated_by,
       EXISTS (SELECT 1 FROM policy_bundles
                WHERE tenant_id = %(tenant_id)s AND digest = %(default_digest)s) AS default_stored
  FROM (SELECT 1) AS one
  LEFT JOIN LATERAL (
        SELECT digest, mode, activated_at, activated_by FROM policy_activations
         WHERE tenant_id = %(tenant_id)s AND activated_at <= %(at)s
         ORDER BY activation DESC LIMIT 1) AS a ON true
"""


@dataclass(frozen=True, slots=True)
class _StateRow:
    digest: str | None
    mode: str | None
    activated_at: datetime | None
    activated_by: str | None
    default_stored: bool


async def policy_state(
    conn: Connection, tenant_id: str, at: datetime, default_digest: str
) -> PolicyState:
    """The activation in force at `at` (the latest one made before it), if any, and whether the
    bundle `default_digest` is stored for the tenant."""
    async with conn.cursor(row_factory=class_row(_StateRow)) as cur:
        await cur.execute(
            _STATE, {"tenant_id": tenant_id, "at": at, "default_digest": default_digest}
        )
        row = await cur.fetchone()
    assert row is not None  # the query returns exactly one row
    activation = None
    if row.digest is not None:
        assert row.mode is not None and row.activated_at is not None and row.activated_by
        activation = ActivationRow(row.digest, row.mode, row.activated_at, row.activated_by)
    return PolicyState(activation, row.default_stored)
