"""Receipts as stored: one by id, a filtered page of the log, the recent ones of some kinds.

A receipt's row carries its body; its DSSE envelope is stored beside it in `receipt_signatures`
(written after the log is released, migration 0030) without a payload that is the body
(`stored_envelope`), and read back whole (`whole_envelope`): without signatures for a receipt
whose writer's durable transaction never committed, until the checkpointer signs it (before a
checkpoint covers it).
Appending is `gateway.store.receipt_appends`'s; the log's leaves, tiles and checkpoints are
`gateway.store.log_tree`'s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg import sql
from psycopg.rows import class_row

from gateway.domain.receipt_filter import ReceiptFilter
from gateway.store.database import Connection
from receipts.dsse import PAYLOAD_TYPE, b64encode

__all__ = [
    "ReceiptRow",
    "find_receipt",
    "list_receipts",
    "recent_receipts",
    "stored_envelope",
    "whole_envelope",
]


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
    envelope: dict[str, Any]  # the whole DSSE envelope, payload included (whole_envelope)
    leaf: bytes
    bundle_sha256: str | None
    policy_digest: str | None
    parent_receipt_id: str | None
    disclosed_ids: list[str]  # an index beside the body; `receipts_index_check` compares them

    def __post_init__(self) -> None:
        object.__setattr__(self, "envelope", whole_envelope(self.envelope, bytes(self.body)))


def stored_envelope(envelope: dict[str, Any], body: bytes) -> dict[str, Any]:
    """The DSSE envelope as stored: without its payload when the payload is the body, which is
    stored beside it (base64 inside the JSON would store every body a second time, a third
    larger, for PostgreSQL to parse on each insert). Rows read back carry the whole envelope
    again (`ReceiptRow`); rows written before this stored it whole, and read the same."""
    if envelope.get("payload") == b64encode(body):
        return {key: value for key, value in envelope.items() if key != "payload"}
    return envelope  # not the body: kept whole, for verification to report


def whole_envelope(stored: Mapping[str, Any] | None, body: bytes) -> dict[str, Any]:
    """The DSSE envelope of a receipt as `stored_envelope` stored it, payload included; for a
    receipt not signed yet (`stored` None), an envelope without signatures: it verifies as
    unsigned, never as signed."""
    if stored is None:
        return {"payload": b64encode(body), "payloadType": PAYLOAD_TYPE, "signatures": []}
    if "payload" not in stored:  # stored without it: the payload is the body
        return {**stored, "payload": b64encode(body)}
    return dict(stored)


_COLUMNS = sql.SQL(
    "tenant_id, seq, receipt_id, kind, agent_id, key_id, issued_at, body, envelope, leaf, "
    "bundle_sha256, policy_digest, parent_receipt_id, disclosed_ids"
)
_SIGNED = sql.SQL("receipts LEFT JOIN receipt_signatures USING (tenant_id, seq)")


async def find_receipt(conn: Connection, tenant_id: str, receipt_id: str) -> ReceiptRow | None:
    query = sql.SQL(
        "SELECT {} FROM {} WHERE tenant_id = %(tenant_id)s AND receipt_id = %(receipt_id)s"
    ).format(_COLUMNS, _SIGNED)
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
    source: sql.Composable = _SIGNED
    if where.memory_id is not None:
        # The receipts that disclosed it, walked in log order (migration 0019): a page costs a
        # page of index reads whether one receipt disclosed the memory or every one did.
        source = sql.SQL("{} JOIN receipt_disclosures USING (tenant_id, seq)").format(_SIGNED)
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
            SELECT {} FROM {}
             WHERE tenant_id = %(tenant_id)s AND kind = ANY(%(kinds)s)
               AND (%(since)s::timestamptz IS NULL OR issued_at >= %(since)s)
               AND (%(until)s::timestamptz IS NULL OR issued_at < %(until)s)
             ORDER BY seq DESC LIMIT %(limit)s
        ) newest ORDER BY seq
        """
    ).format(_COLUMNS, _SIGNED)
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
