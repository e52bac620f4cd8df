"""Appending to the receipt log: a gapless per-tenant sequence under the log head's lock.

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

from gateway.store.database import Connection
from gateway.store.errors import ReceiptWriteError
from gateway.store.receipts import stored_envelope

__all__ = ["LogHead", "SealedReceipt", "append_receipts", "lock_head"]


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
