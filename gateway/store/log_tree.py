"""The receipt log's tree as stored: its size, its leaves, the roots of its complete tiles, and
its checkpoints (signed tree heads), which proofs and checkpointing are built from."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from psycopg.rows import class_row

from gateway.store.database import Connection

__all__ = [
    "CheckpointRow",
    "insert_checkpoint",
    "insert_tiles",
    "latest_checkpoint",
    "leaves",
    "leaves_between",
    "log_size",
    "tenants_with_new_receipts",
    "tile_count",
    "tiles",
]


async def log_size(conn: Connection, tenant_id: str) -> int:
    """The committed size of the tenant's log (no lock: committed leaves never change)."""
    cur = await conn.execute(
        "SELECT size FROM receipt_logs WHERE tenant_id = %(tenant_id)s", {"tenant_id": tenant_id}
    )
    row = await cur.fetchone()
    return int(row[0]) if row else 0  # type: ignore[call-overload]


async def leaves(conn: Connection, tenant_id: str, size: int) -> list[bytes]:
    """The first `size` leaf hashes of the tenant's log, in order."""
    cur = await conn.execute(
        "SELECT leaf FROM receipts WHERE tenant_id = %(tenant_id)s AND seq <= %(size)s ORDER BY seq",
        {"tenant_id": tenant_id, "size": size},
    )
    return [bytes(row[0]) for row in await cur.fetchall()]  # type: ignore[call-overload]


async def leaves_between(conn: Connection, tenant_id: str, first: int, last: int) -> list[bytes]:
    cur = await conn.execute(
        "SELECT leaf FROM receipts WHERE tenant_id = %(tenant_id)s"
        " AND seq BETWEEN %(first)s AND %(last)s ORDER BY seq",
        {"tenant_id": tenant_id, "first": first, "last": last},
    )
    return [bytes(row[0]) for row in await cur.fetchall()]  # type: ignore[call-overload]


async def tiles(conn: Connection, tenant_id: str, count: int) -> list[bytes]:
    """The stored roots of the tenant's first `count` log tiles, in order; fewer when they are
    not all stored yet (tiles are written in order, so those stored are a prefix)."""
    cur = await conn.execute(
        "SELECT hash FROM receipt_tiles WHERE tenant_id = %(tenant_id)s AND tile < %(count)s"
        " ORDER BY tile",
        {"tenant_id": tenant_id, "count": count},
    )
    return [bytes(row[0]) for row in await cur.fetchall()]  # type: ignore[call-overload]


async def tile_count(conn: Connection, tenant_id: str) -> int:
    """How many of the tenant's log tiles are stored (a prefix: they are written in order)."""
    cur = await conn.execute(
        "SELECT COALESCE(max(tile) + 1, 0) FROM receipt_tiles WHERE tenant_id = %(tenant_id)s",
        {"tenant_id": tenant_id},
    )
    row = await cur.fetchone()
    return int(row[0]) if row is not None else 0  # type: ignore[call-overload]


async def insert_tiles(conn: Connection, tenant_id: str, first: int, roots: list[bytes]) -> None:
    """Store tile roots `first`, `first + 1`, ...; one already stored is left as it is (two
    writers compute the same root from the same leaves)."""
    if not roots:
        return
    await conn.execute(
        "INSERT INTO receipt_tiles (tenant_id, tile, hash)"
        " SELECT %(tenant_id)s, %(first)s + n - 1, h"
        " FROM unnest(%(roots)s::bytea[]) WITH ORDINALITY AS t(h, n)"
        " ON CONFLICT DO NOTHING",
        {"tenant_id": tenant_id, "first": first, "roots": roots},
    )


@dataclass(frozen=True, slots=True)
class CheckpointRow:
    tenant_id: str
    size: int
    root: bytes
    note: str
    created_at: datetime
    frontier: bytes | None  # the tree's right edge (receipts.MerkleFrontier.edge); older: None


async def latest_checkpoint(
    conn: Connection, tenant_id: str, at_most: int | None = None
) -> CheckpointRow | None:
    query = """
        SELECT tenant_id, size, root, note, created_at, frontier FROM checkpoints
         WHERE tenant_id = %(tenant_id)s AND (%(at_most)s::bigint IS NULL OR size <= %(at_most)s)
         ORDER BY size DESC LIMIT 1
    """
    async with conn.cursor(row_factory=class_row(CheckpointRow)) as cur:
        await cur.execute(query, {"tenant_id": tenant_id, "at_most": at_most})
        return await cur.fetchone()


async def insert_checkpoint(
    conn: Connection, tenant_id: str, size: int, root: bytes, note: str, frontier: bytes
) -> None:
    await conn.execute(
        "INSERT INTO checkpoints (tenant_id, size, root, note, frontier) VALUES"
        " (%(tenant_id)s, %(size)s, %(root)s, %(note)s, %(frontier)s) ON CONFLICT DO NOTHING",
        {"tenant_id": tenant_id, "size": size, "root": root, "note": note, "frontier": frontier},
    )


async def tenants_with_new_receipts(conn: Connection) -> list[tuple[str, int]]:
    """(tenant, log size) for every tenant whose log grew past its latest checkpoint: across
    tenants, so through ledger_growth() (migration 0010), the one path past the tenant wall."""
    cur = await conn.execute("SELECT tenant_id, size FROM ledger_growth()")
    return [(str(row[0]), int(row[1])) for row in await cur.fetchall()]  # type: ignore[call-overload]
