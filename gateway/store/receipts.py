"""The receipt log: append with a gapless per-tenant sequence, read, list, leaves, checkpoints.

Appending locks the tenant's log head (`receipt_logs`, `lock_head`) inside the caller's
transaction, the caller seals receipts for the positions after it, and `append_receipts` writes
them and advances the head in one statement (`gateway.usecases.receiptlog.group_commit` does this for a
batch of waiting requests at a time).
Different tenants lock different rows and never wait for each other.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg
from psycopg import sql
from psycopg.rows import class_row

from gateway.domain.receipt_filter import ReceiptFilter
from gateway.store.database import Connection
from gateway.store.errors import ReceiptWriteError
from receipts.dsse import b64encode

__all__ = [
    "CheckpointRow",
    "LogHead",
    "ReceiptRow",
    "SealedReceipt",
    "append_receipts",
    "find_receipt",
    "insert_checkpoint",
    "insert_tiles",
    "latest_checkpoint",
    "leaves",
    "leaves_between",
    "list_receipts",
    "lock_head",
    "log_size",
    "recent_receipts",
    "stored_envelope",
    "tenants_with_new_receipts",
    "tile_count",
    "tiles",
]


@dataclass(frozen=True, slots=True)
class LogHead:
    size: int
    head: bytes
    last_leaf: bytes | None = None  # the stored leaf of receipt `size`, which must be `head`


@dataclass(frozen=True, slots=True)
class ReceiptRow:
    tenant_id: str
    seq: int
    receipt_id: str
    kind: str
    agent_id: str | None
    key_id: str
    issued_at: datetime
    body: bytes
    envelope: dict[str, Any]  # the whole DSSE envelope, payload included (stored_envelope)
    leaf: bytes
    bundle_sha256: str | None
    policy_digest: str | None
    parent_receipt_id: str | None
    disclosed_ids: list[str]  # an index beside the body; `receipts_index_check` compares them

    def __post_init__(self) -> None:
        if "payload" not in self.envelope:  # stored without it: the payload is the body
            whole = {**self.envelope, "payload": b64encode(bytes(self.body))}
            object.__setattr__(self, "envelope", whole)


def stored_envelope(envelope: dict[str, Any], body: bytes) -> dict[str, Any]:
    """The DSSE envelope as stored: without its payload when the payload is the body, which is
    stored beside it (base64 inside the JSON would store every body a second time, a third
    larger, for PostgreSQL to parse on each insert). Rows read back carry the whole envelope
    again (`ReceiptRow`); rows written before this stored it whole, and read the same."""
    if envelope.get("payload") == b64encode(body):
        return {key: value for key, value in envelope.items() if key != "payload"}
    return envelope  # not the body: kept whole, for verification to report


# One statement creates the tenant's log on first use and locks its head row: an upsert that
# touches the row takes its lock (ON CONFLICT DO UPDATE), and RETURNING reads it under the lock.
# It also reads the leaf of the receipt the head names (a primary-key lookup in the same trip):
# the writer extends only a chain whose head it can verify.
_LOCK_HEAD = """
INSERT INTO receipt_logs (tenant_id) VALUES (%(tenant_id)s)
ON CONFLICT (tenant_id) DO UPDATE SET tenant_id = EXCLUDED.tenant_id
RETURNING size, head,
          (SELECT r.leaf FROM receipts r
            WHERE r.tenant_id = receipt_logs.tenant_id AND r.seq = receipt_logs.size) AS last_leaf
"""


_LEAF_AT = "SELECT leaf FROM receipts WHERE tenant_id = %(tenant_id)s AND seq = %(seq)s"


async def lock_head(conn: Connection, tenant_id: str) -> LogHead:
    """The tenant's log head, locked until the transaction ends (one round trip; two after
    waiting for a concurrent writer), and checked against the log's last stored leaf."""
    try:
        async with conn.cursor(row_factory=class_row(LogHead)) as cur:
            await cur.execute(_LOCK_HEAD, {"tenant_id": tenant_id})
            head = await cur.fetchone()
    except psycopg.Error as exc:
        raise ReceiptWriteError(f"the receipt log could not be locked: {exc}") from exc
    assert head is not None
    last_leaf = head.last_leaf
    if head.size > 0 and last_leaf is None:
        # After waiting for the lock, the upsert returns the head a concurrent writer committed,
        # but its subquery still reads the snapshot from before: look again, now the head is ours.
        again = await conn.execute(_LEAF_AT, {"tenant_id": tenant_id, "seq": head.size})
        found = await again.fetchone()
        last_leaf = None if found is None else bytes(found[0])  # type: ignore[call-overload]
    if head.size > 0 and (last_leaf is None or bytes(last_leaf) != bytes(head.head)):
        # The stored log no longer ends where its head says (a receipt row gone or changed):
        # a receipt chained to it would vouch for a log that cannot be verified.
        raise ReceiptWriteError(
            f"the receipt log of {tenant_id} does not end at its head (seq {head.size}); "
            "refusing to extend a chain whose head cannot be verified"
        )
    return head


async def log_size(conn: Connection, tenant_id: str) -> int:
    """The committed size of the tenant's log (no lock: committed leaves never change)."""
    cur = await conn.execute(
        "SELECT size FROM receipt_logs WHERE tenant_id = %(tenant_id)s", {"tenant_id": tenant_id}
    )
    row = await cur.fetchone()
    return int(row[0]) if row else 0  # type: ignore[call-overload]


_RECEIPT_COLUMNS = (
    "tenant_id",
    "seq",
    "receipt_id",
    "kind",
    "agent_id",
    "key_id",
    "issued_at",
    "body",
    "envelope",
    "prev",
    "leaf",
    "bundle_sha256",
    "policy_digest",
    "parent_receipt_id",
    "disclosed_ids",
)


def _append_statement(count: int) -> sql.Composed:
    """`count` receipts and the head they advance the log to, in one statement (one round trip):
    the head becomes the last of them. A statement per batch size, each prepared once."""
    row = sql.SQL("({})").format(sql.SQL(", ").join(sql.Placeholder() for _ in _RECEIPT_COLUMNS))
    return sql.SQL(
        """
        WITH appended AS (
            INSERT INTO receipts ({columns}) VALUES {rows} RETURNING seq, leaf
        )
        UPDATE receipt_logs SET size = last.seq, head = last.leaf
          FROM (SELECT seq, leaf FROM appended ORDER BY seq DESC LIMIT 1) last
         WHERE receipt_logs.tenant_id = {tenant_id}
        """
    ).format(
        columns=sql.SQL(", ").join(map(sql.Identifier, _RECEIPT_COLUMNS)),
        rows=sql.SQL(", ").join(row for _ in range(count)),
        tenant_id=sql.Placeholder(),
    )


@dataclass(frozen=True, slots=True)
class SealedReceipt:
    """A receipt signed for its log position (`seq`, after the head `prev`)."""

    receipt_id: str
    kind: str
    agent_id: str | None
    key_id: str
    issued_at: datetime
    seq: int
    prev: bytes
    body: bytes
    envelope: dict[str, Any]
    leaf: bytes
    bundle_sha256: str | None
    policy_digest: str | None
    parent_receipt_id: str | None
    disclosed_ids: Sequence[str]

    def row(self, tenant_id: str) -> tuple[object, ...]:
        """The values of `_RECEIPT_COLUMNS`, in order."""
        return (
            tenant_id,
            self.seq,
            self.receipt_id,
            self.kind,
            self.agent_id,
            self.key_id,
            self.issued_at,
            self.body,
            json.dumps(stored_envelope(self.envelope, self.body)),
            self.prev,
            self.leaf,
            self.bundle_sha256,
            self.policy_digest,
            self.parent_receipt_id,
            sorted(set(self.disclosed_ids)),
        )


async def append_receipts(
    conn: Connection, tenant_id: str, receipts: Sequence[SealedReceipt]
) -> None:
    """Append receipts sealed in order for the head `lock_head` returned in this transaction
    (which holds the log lock until it ends). Sent without waiting for its answer: in a
    pipeline, the COMMIT that follows goes in the same round trip, and a failure of either
    raises there and rolls both back."""
    if not receipts:
        return
    params = [value for receipt in receipts for value in receipt.row(tenant_id)]
    try:
        await conn.execute(_append_statement(len(receipts)), [*params, tenant_id])
    except psycopg.Error as exc:
        raise ReceiptWriteError(f"the receipts could not be written: {exc}") from exc


_COLUMNS = sql.SQL(
    "tenant_id, seq, receipt_id, kind, agent_id, key_id, issued_at, body, envelope, leaf, "
    "bundle_sha256, policy_digest, parent_receipt_id, disclosed_ids"
)


async def find_receipt(conn: Connection, tenant_id: str, receipt_id: str) -> ReceiptRow | None:
    query = sql.SQL(
        "SELECT {} FROM receipts WHERE tenant_id = %(tenant_id)s AND receipt_id = %(receipt_id)s"
    ).format(_COLUMNS)
    async with conn.cursor(row_factory=class_row(ReceiptRow)) as cur:
        await cur.execute(query, {"tenant_id": tenant_id, "receipt_id": receipt_id})
        return await cur.fetchone()


async def list_receipts(conn: Connection, tenant_id: str, where: ReceiptFilter) -> list[ReceiptRow]:
    """Receipts in log order after `after_seq` (the cursor), filtered; newest first below
    `before_seq` when the filter asks for that order."""
    clauses = [sql.SQL("tenant_id = %(tenant_id)s"), sql.SQL("seq > %(after_seq)s")]
    if where.newest_first and where.before_seq is not None:
        clauses.append(sql.SQL("seq < %(before_seq)s"))
    if where.policy_digest is not None:
        clauses.append(sql.SQL("policy_digest = %(policy_digest)s"))
    if where.agent_id is not None:
        clauses.append(sql.SQL("agent_id = %(agent_id)s"))
    if where.kind is not None:
        clauses.append(sql.SQL("kind = %(kind)s"))
    if where.since is not None:
        clauses.append(sql.SQL("issued_at >= %(since)s"))
    if where.until is not None:
        clauses.append(sql.SQL("issued_at < %(until)s"))
    order = sql.SQL("seq DESC" if where.newest_first else "seq")
    source = sql.SQL("receipts")
    if where.memory_id is not None:
        # The receipts that disclosed it, walked in log order (migration 0019): a page costs a
        # page of index reads whether one receipt disclosed the memory or every one did.
        source = sql.SQL("receipts JOIN receipt_disclosures USING (tenant_id, seq)")
        clauses.append(sql.SQL("memory_id = %(memory_id)s"))
    query = sql.SQL("SELECT {} FROM {} WHERE {} ORDER BY {} LIMIT %(limit)s").format(
        _COLUMNS, source, sql.SQL(" AND ").join(clauses), order
    )
    params = {
        "tenant_id": tenant_id,
        "after_seq": where.after_seq,
        "agent_id": where.agent_id,
        "kind": where.kind,
        "since": where.since,
        "until": where.until,
        "memory_id": where.memory_id,
        "policy_digest": where.policy_digest,
        "before_seq": where.before_seq,
        "limit": where.limit,
    }
    async with conn.cursor(row_factory=class_row(ReceiptRow)) as cur:
        await cur.execute(query, params)
        return await cur.fetchall()


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


async def recent_receipts(
    conn: Connection,
    tenant_id: str,
    kinds: Sequence[str],
    *,
    since: datetime | None,
    until: datetime | None,
    limit: int,
) -> list[ReceiptRow]:
    """The newest `limit` receipts of the given kinds in a time window, oldest first."""
    query = sql.SQL(
        """
        SELECT * FROM (
            SELECT {} FROM receipts
             WHERE tenant_id = %(tenant_id)s AND kind = ANY(%(kinds)s)
               AND (%(since)s::timestamptz IS NULL OR issued_at >= %(since)s)
               AND (%(until)s::timestamptz IS NULL OR issued_at < %(until)s)
             ORDER BY seq DESC LIMIT %(limit)s
        ) newest ORDER BY seq
        """
    ).format(_COLUMNS)
    params = {
        "tenant_id": tenant_id,
        "kinds": list(kinds),
        "since": since,
        "until": until,
        "limit": limit,
    }
    async with conn.cursor(row_factory=class_row(ReceiptRow)) as cur:
        await cur.execute(query, params)
        return await cur.fetchall()
