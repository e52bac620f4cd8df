"""Tenants and API keys."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import psycopg
from psycopg.rows import class_row

from gateway.store.database import Connection

__all__ = [
    "KeyRow",
    "ensure_tenant",
    "find_key",
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
    """Create the tenant if it is new; True when it was created."""
    return conn.execute(_ENSURE_TENANT, {"tenant_id": tenant_id}).rowcount == 1


_INSERT_KEY = """
INSERT INTO api_keys (tenant_id, key_id, secret_sha256, role, agent_id, namespaces, purposes)
VALUES (%(tenant_id)s, %(key_id)s, %(secret_sha256)s, %(role)s, %(agent_id)s, %(namespaces)s,
        %(purposes)s)
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
        },
    )


_FIND_KEY = """
SELECT tenant_id, key_id, secret_sha256, role, agent_id, namespaces, purposes, created_at,
       revoked_at
  FROM api_keys WHERE tenant_id = %(tenant_id)s AND key_id = %(key_id)s
"""


async def find_key(
    conn: psycopg.AsyncConnection[tuple[object, ...]], tenant_id: str, key_id: str
) -> KeyRow | None:
    async with conn.cursor(row_factory=class_row(KeyRow)) as cur:
        await cur.execute(_FIND_KEY, {"tenant_id": tenant_id, "key_id": key_id})
        return await cur.fetchone()


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
