"""Tenants and API keys."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg
from psycopg.rows import class_row

from gateway.store.database import Connection
from gateway.store.transactions import ENTER_TENANT, begin_after, in_tenant

__all__ = [
    "BURST_SECONDS",
    "KeyFound",
    "KeyRow",
    "ensure_tenant",
    "find_key",
    "find_key_then_begin",
    "insert_key",
    "list_keys",
    "revoke_key",
    "tenant_created_at",
]


@dataclass(frozen=True, slots=True)
class KeyRow:
    tenant_id: str
    key_id: str
    secret_sha256: bytes
    role: str
    agent_id: str | None
    namespaces: list[str]
    purposes: list[str] | None
    created_at: datetime
    revoked_at: datetime | None


_ENSURE_TENANT = """
INSERT INTO tenants (tenant_id) VALUES (%(tenant_id)s) ON CONFLICT (tenant_id) DO NOTHING
"""


def ensure_tenant(conn: psycopg.Connection[tuple[object, ...]], tenant_id: str) -> bool:
    """Enter the tenant's wall for the rest of the transaction and create the tenant if it is
    new; True when it was created."""
    conn.execute(ENTER_TENANT, {"tenant_id": tenant_id})
    return conn.execute(_ENSURE_TENANT, {"tenant_id": tenant_id}).rowcount == 1


_INSERT_KEY = """
INSERT INTO api_keys (tenant_id, key_id, secret_sha256, role, agent_id, namespaces, purposes,
                      requests_per_second, writes_per_second)
VALUES (%(tenant_id)s, %(key_id)s, %(secret_sha256)s, %(role)s, %(agent_id)s, %(namespaces)s,
        %(purposes)s, %(requests_per_second)s, %(writes_per_second)s)
"""


def insert_key(
    conn: psycopg.Connection[tuple[object, ...]],
    *,
    tenant_id: str,
    key_id: str,
    secret_sha256: bytes,
    role: str,
    agent_id: str | None,
    namespaces: list[str],
    purposes: list[str] | None,
    requests_per_second: float | None,
    writes_per_second: float | None,
) -> None:
    conn.execute(
        _INSERT_KEY,
        {
            "tenant_id": tenant_id,
            "key_id": key_id,
            "secret_sha256": secret_sha256,
            "role": role,
            "agent_id": agent_id,
            "namespaces": namespaces,
            "purposes": purposes,
            "requests_per_second": requests_per_second,
            "writes_per_second": writes_per_second,
        },
    )


# A bucket holds this many seconds of its rate: the burst a key may spend at once.
BURST_SECONDS = 2.0


@dataclass(frozen=True, slots=True)
class KeyFound:
    """A key and what its rate limits said to this request: `limited` names the bucket that
    refused it (None: granted), `retry_after_seconds` when that bucket has enough again."""

    key: KeyRow
    limited: str | None
    limit_per_second: float | None
    retry_after_seconds: float


# One statement, run outside the request's transaction: the key, and its buckets charged (for
# a key that exists, is not revoked and whose secret matches: a stranger who knows a key id
# cannot drain its owner's buckets). Comparing the digests here leaks nothing worth timing: an
# attacker learns about sha256(secret), not the secret; the caller compares in constant time
# all the same. A bucket is charged only when it holds enough (one that refuses is not charged).
_FIND_KEY = """
WITH key AS (
    SELECT tenant_id, key_id, secret_sha256, role, agent_id, namespaces, purposes, created_at,
           revoked_at, requests_per_second, writes_per_second
      FROM api_keys WHERE tenant_id = %(tenant_id)s AND key_id = %(key_id)s
), asked (bucket, rate, cost) AS (
    SELECT 'requests', key.requests_per_second::float8, %(requests)s::float8 FROM key
    UNION ALL
    SELECT 'writes', key.writes_per_second::float8, %(writes)s::float8 FROM key
), charged AS (
    INSERT INTO rate_buckets AS b
           (tenant_id, key_id, bucket, rate, capacity, asked, granted, tokens, charged_at)
    SELECT key.tenant_id, key.key_id, asked.bucket, asked.rate,
           asked.rate * %(burst)s, least(asked.cost, asked.rate * %(burst)s), true,
           asked.rate * %(burst)s - least(asked.cost, asked.rate * %(burst)s), clock_timestamp()
      FROM key, asked
     WHERE asked.rate IS NOT NULL AND asked.cost > 0
       AND key.revoked_at IS NULL AND key.secret_sha256 = %(secret_sha256)s
    ON CONFLICT (tenant_id, key_id, bucket) DO UPDATE SET
        rate = EXCLUDED.rate,
        capacity = EXCLUDED.capacity,
        asked = EXCLUDED.asked,
        granted = bucket_level(b.tokens, b.charged_at, EXCLUDED.charged_at, EXCLUDED.rate,
                               EXCLUDED.capacity) >= EXCLUDED.asked,
        tokens = bucket_level(b.tokens, b.charged_at, EXCLUDED.charged_at, EXCLUDED.rate,
                              EXCLUDED.capacity)
                 - CASE WHEN bucket_level(b.tokens, b.charged_at, EXCLUDED.charged_at,
                                          EXCLUDED.rate, EXCLUDED.capacity) >= EXCLUDED.asked
                        THEN EXCLUDED.asked ELSE 0 END,
        charged_at = EXCLUDED.charged_at
    RETURNING b.bucket, b.rate, b.asked, b.granted, b.tokens
), refused AS (
    SELECT bucket, rate, (asked - tokens) / rate AS wait
      FROM charged WHERE NOT granted ORDER BY wait DESC LIMIT 1
)
SELECT key.tenant_id, key.key_id, key.secret_sha256, key.role, key.agent_id, key.namespaces,
       key.purposes, key.created_at, key.revoked_at,
       refused.bucket, refused.rate, coalesce(refused.wait, 0)
  FROM key LEFT JOIN refused ON true
"""


async def find_key(
    conn: psycopg.AsyncConnection[tuple[object, ...]],
    tenant_id: str,
    key_id: str,
    *,
    secret_sha256: bytes,
    requests: int,
    writes: int,
) -> KeyFound | None:
    """The key, its request bucket charged `requests` tokens and its write bucket `writes` (capped at
    the bucket's burst, so that a batch larger than the burst can still pass when it is full).
    Run on a connection outside any transaction: the buckets' row locks last one statement."""
    # Inside the tenant's wall (row-level security, migration 0010), in the same round trip.
    params = _find_params(tenant_id, key_id, secret_sha256, requests, writes)
    cur = await in_tenant(conn, tenant_id, _FIND_KEY, params)
    return _found(await cur.fetchone())


@asynccontextmanager
async def find_key_then_begin(
    conn: psycopg.AsyncConnection[tuple[object, ...]],
    tenant_id: str,
    key_id: str,
    *,
    secret_sha256: bytes,
    requests: int,
    writes: int,
) -> AsyncIterator[KeyFound | None]:
    """As `find_key` (charged and committed on its own, so the buckets' row locks still last
    one statement), then a transaction opened in the tenant's wall, all in one round trip; the
    transaction ends with the block (`gateway.store.transactions.begin_after`)."""
    params = _find_params(tenant_id, key_id, secret_sha256, requests, writes)
    async with begin_after(conn, tenant_id, _FIND_KEY, params) as cur:
        yield _found(await cur.fetchone())


def _find_params(
    tenant_id: str, key_id: str, secret_sha256: bytes, requests: int, writes: int
) -> dict[str, Any]:
    return {
        "tenant_id": tenant_id,
        "key_id": key_id,
        "secret_sha256": secret_sha256,
        "requests": requests,
        "writes": writes,
        "burst": BURST_SECONDS,
    }


def _found(row: tuple[object, ...] | None) -> KeyFound | None:
    if row is None:
        return None
    *key, limited, per_second, wait = row
    return KeyFound(KeyRow(*key), limited, per_second, wait)  # type: ignore[arg-type]


_LIST_KEYS = """
SELECT tenant_id, key_id, secret_sha256, role, agent_id, namespaces, purposes, created_at,
       revoked_at
  FROM api_keys WHERE (%(tenant_id)s::text IS NULL OR tenant_id = %(tenant_id)s)
 ORDER BY tenant_id, key_id
"""


def list_keys(conn: psycopg.Connection[tuple[object, ...]], tenant_id: str | None) -> list[KeyRow]:
    with conn.cursor(row_factory=class_row(KeyRow)) as cur:
        cur.execute(_LIST_KEYS, {"tenant_id": tenant_id})
        return cur.fetchall()


_REVOKE_KEY = """
UPDATE api_keys SET revoked_at = now()
 WHERE key_id = %(key_id)s AND revoked_at IS NULL
"""


def revoke_key(conn: psycopg.Connection[tuple[object, ...]], key_id: str) -> bool:
    return conn.execute(_REVOKE_KEY, {"key_id": key_id}).rowcount == 1


async def tenant_created_at(conn: Connection, tenant_id: str) -> datetime | None:
    cur = await conn.execute(
        "SELECT created_at FROM tenants WHERE tenant_id = %(tenant_id)s", {"tenant_id": tenant_id}
    )
    row = await cur.fetchone()
    return row[0] if row else None  # type: ignore[return-value]
