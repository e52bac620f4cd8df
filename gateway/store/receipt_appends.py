"""Appending to the receipt log: a gapless per-tenant sequence under the log head's lock.

Appending locks the tenant's log head (`receipt_logs`, `lock_head`) inside the caller's
transaction, the caller places receipts at the positions after it (their bodies name `seq` and
`prev`), and `append_receipts` writes them and advances the head in one statement
(`gateway.usecases.receiptlog.group_commit` does this for a batch of waiting requests at a
time). What follows from a placed body is written after, by `store_signatures`: the receipts'
signatures and their rows by memory (migration 0030), in the same transaction or, for the group
commit, in the durable one after the log is released.
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

from gateway.store.database import Connection
from gateway.store.errors import ReceiptWriteError
from gateway.store.receipts import stored_envelope

__all__ = [
    "Appended",
    "LogHead",
    "PlacedReceipt",
    "SignedReceipt",
    "UnsignedReceipt",
    "append_receipts",
    "lock_head",
    "store_signatures",
    "unsigned_receipts",
]


@dataclass(frozen=True, slots=True)
class LogHead:
    size: int
    head: bytes
    locked_at: datetime  # the server's clock when the lock was granted
    last_leaf: bytes | None = None  # the stored leaf of receipt `size`, which must be `head`


# One statement creates the tenant's log on first use and locks its head row: an upsert that
# touches the row takes its lock (ON CONFLICT DO UPDATE), and RETURNING reads it under the lock.
# It also reads the leaf of the receipt the head names (a primary-key lookup in the same trip):
# the writer extends only a chain whose head it can verify.
_LOCK_HEAD = """
INSERT INTO receipt_logs (tenant_id) VALUES (%(tenant_id)s)
ON CONFLICT (tenant_id) DO UPDATE SET tenant_id = EXCLUDED.tenant_id
RETURNING size, head, clock_timestamp() AS locked_at,
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


_RECEIPT_COLUMNS = (
    "tenant_id",
    "seq",
    "receipt_id",
    "kind",
    "agent_id",
    "key_id",
    "issued_at",
    "body",
    "prev",
    "leaf",
    "bundle_sha256",
    "policy_digest",
    "parent_receipt_id",
    "disclosed_ids",
)


def _append_statement(count: int) -> sql.Composed:
    """`count` receipts and the head they advance the log to, in one statement (one round trip):
    the head becomes the last of them; it answers when it ended, by the server's clock. A
    statement per batch size, each prepared once."""
    row = sql.SQL("({})").format(sql.SQL(", ").join(sql.Placeholder() for _ in _RECEIPT_COLUMNS))
    return sql.SQL(
        """
        WITH appended AS (
            INSERT INTO receipts ({columns}) VALUES {rows} RETURNING seq, leaf
        )
        UPDATE receipt_logs SET size = last.seq, head = last.leaf
          FROM (SELECT seq, leaf FROM appended ORDER BY seq DESC LIMIT 1) last
         WHERE receipt_logs.tenant_id = {tenant_id}
        RETURNING clock_timestamp()
        """
    ).format(
        columns=sql.SQL(", ").join(map(sql.Identifier, _RECEIPT_COLUMNS)),
        rows=sql.SQL(", ").join(row for _ in range(count)),
        tenant_id=sql.Placeholder(),
    )


@dataclass(frozen=True, slots=True)
class PlacedReceipt:
    """A receipt at its log position: its body names `seq` and the head `prev` before it."""

    receipt_id: str
    kind: str
    agent_id: str | None
    key_id: str
    issued_at: datetime
    seq: int
    prev: bytes
    body: bytes
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
            self.prev,
            self.leaf,
            self.bundle_sha256,
            self.policy_digest,
            self.parent_receipt_id,
            sorted(set(self.disclosed_ids)),
        )


@dataclass(frozen=True, slots=True)
class Appended:
    """The answer of `append_receipts`, read once its pipeline has synced."""

    _cursor: psycopg.AsyncCursor[tuple[object, ...]]

    async def ended_at(self) -> datetime | None:
        """When the append statement ended, by the server's clock."""
        row = await self._cursor.fetchone()
        return row[0] if row is not None and isinstance(row[0], datetime) else None


async def append_receipts(
    conn: Connection, tenant_id: str, receipts: Sequence[PlacedReceipt]
) -> Appended:
    """Append receipts placed in order after the head `lock_head` returned in this transaction
    (which holds the log lock until it ends). Sent without waiting for its answer: in a
    pipeline, the COMMIT that follows goes in the same round trip, and a failure of either
    raises there and rolls both back."""
    if not receipts:
        raise ValueError("nothing to append")
    params = [value for receipt in receipts for value in receipt.row(tenant_id)]
    try:
        cursor = await conn.execute(_append_statement(len(receipts)), [*params, tenant_id])
    except psycopg.Error as exc:
        raise ReceiptWriteError(f"the receipts could not be written: {exc}") from exc
    return Appended(cursor)


# The signatures of appended receipts, and their rows by memory from each receipt's own stored
# `disclosed_ids`, for the receipts this statement signed: a receipt signed before (by the
# checkpointer's repair, or the writer whose durable transaction raced it) was indexed with its
# signature. Signatures are deterministic, so whoever stores one stores the same bytes.
_STORE_SIGNATURES = """
WITH signed AS (
    INSERT INTO receipt_signatures (tenant_id, seq, envelope)
    SELECT %(tenant_id)s, s.seq, s.envelope
      FROM unnest(%(seqs)s::bigint[], %(envelopes)s::jsonb[]) AS s(seq, envelope)
    ON CONFLICT DO NOTHING
    RETURNING seq
)
INSERT INTO receipt_disclosures (tenant_id, memory_id, seq)
SELECT r.tenant_id, m, r.seq
  FROM receipts r, unnest(r.disclosed_ids) AS m
 WHERE r.tenant_id = %(tenant_id)s AND r.seq IN (SELECT seq FROM signed)
ON CONFLICT DO NOTHING
"""


@dataclass(frozen=True, slots=True)
class SignedReceipt:
    """The signatures of the appended receipt at `seq`: its DSSE envelope over `body`."""

    seq: int
    body: bytes
    envelope: dict[str, Any]


async def store_signatures(
    conn: Connection, tenant_id: str, signed: Sequence[SignedReceipt]
) -> None:
    """Store the signatures of appended receipts (each envelope as `stored_envelope` keeps it)
    with their rows by memory. Never prepared: in the group commit it goes in a pipeline that
    may be cut short (see `gateway.store.transactions.log_pipeline`)."""
    if not signed:
        return
    params = {
        "tenant_id": tenant_id,
        "seqs": [s.seq for s in signed],
        "envelopes": [json.dumps(stored_envelope(s.envelope, s.body)) for s in signed],
    }
    try:
        await conn.execute(_STORE_SIGNATURES, params, prepare=False)
    except psycopg.Error as exc:
        raise ReceiptWriteError(f"the receipts' signatures could not be stored: {exc}") from exc


@dataclass(frozen=True, slots=True)
class UnsignedReceipt:
    seq: int
    body: bytes


_UNSIGNED = """
SELECT r.seq, r.body FROM receipts r
 WHERE r.tenant_id = %(tenant_id)s AND r.seq > %(after)s AND r.seq <= %(through)s
   AND NOT EXISTS (SELECT 1 FROM receipt_signatures s
                    WHERE s.tenant_id = r.tenant_id AND s.seq = r.seq)
 ORDER BY r.seq
"""


async def unsigned_receipts(
    conn: Connection, tenant_id: str, after: int, through: int
) -> list[UnsignedReceipt]:
    """The receipts in positions (`after`, `through`] without a stored signature: appended, but
    their writer's durable transaction did not commit (a crash, a lost connection)."""
    async with conn.cursor(row_factory=class_row(UnsignedReceipt)) as cur:
        await cur.execute(_UNSIGNED, {"tenant_id": tenant_id, "after": after, "through": through})
        return await cur.fetchall()
