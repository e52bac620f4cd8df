"""The export of a tenant's receipt log (`receipts.export`): JSON lines anchored in a signed
checkpoint, read a page at a time, from a replica once it has replayed that checkpoint."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator

from gateway.domain.receipt_filter import ReceiptFilter
from gateway.store import log_tree
from gateway.store import receipts as receipt_store
from gateway.store.database import Connection
from gateway.store.pool import Pool, connection
from gateway.store.replicas import has_replayed, read_replica_lag, wal_position
from gateway.store.transactions import transaction
from gateway.usecases.access.request_record import note_replica_lag
from gateway.usecases.audit.verification import LogTiles, checked_rows, inconsistent
from gateway.usecases.receiptlog.checkpoints import checkpoint_tenant
from receipts import Envelope, MerkleTree, Signer, checkpoint_line, export_line, log_origin
from receipts.merkle import EMPTY_ROOT, TILE_SIZE

_log = logging.getLogger(__name__)

__all__ = ["EXPORT_PAGE", "REPLAY_WAIT_SECONDS", "export_lines"]

# How long an export waits for a replica to replay the checkpoint it is anchored in.
REPLAY_WAIT_SECONDS = 5.0
EXPORT_PAGE = 500


async def export_lines(
    pool: Pool,
    signer: Signer,
    tenant_id: str,
    where: ReceiptFilter,
    replica: Pool | None = None,
) -> AsyncIterator[str]:
    """The tenant's log as JSONL (`receipts.export`), ending with the end line: its signed
    checkpoint and the number of receipt lines.

    Unfiltered, the export is the whole log up to a fresh checkpoint, so a verifier recomputes
    the root itself. Filtered, every line carries its inclusion proof to that checkpoint. The
    anchor (checkpoint and proving tree) is settled here, before the first line is sent, so that
    a log that disagrees with itself is a 409 `ledger_inconsistent`, not a cut-off stream.

    With a `replica`, the anchor is still settled on the primary (it may sign a checkpoint),
    and the pages, the bulk of an export, are read from the replica once it has replayed that
    checkpoint; one that does not within `REPLAY_WAIT_SECONDS` leaves them to the primary."""
    async with transaction(pool, tenant_id) as conn:
        checkpoint = await checkpoint_tenant(conn, signer, tenant_id)  # stores the tiles too
        if checkpoint is None:  # an empty log: anchored by the signed empty tree all the same
            note = signer.sign_checkpoint(log_origin(tenant_id), 0, EMPTY_ROOT)
            return _end_only(note)
        tree = await _proving_tree(conn, tenant_id, checkpoint)
    reader = pool if replica is None else await _caught_up(pool, replica)
    return _export_pages(reader, tenant_id, where, checkpoint, tree)


async def _caught_up(pool: Pool, replica: Pool) -> Pool:
    """The replica once it has replayed what the primary has written so far (noting its lag
    for the response), or the primary when it does not within `REPLAY_WAIT_SECONDS`."""
    async with connection(pool) as conn:
        position = await wal_position(conn)
    deadline = time.monotonic() + REPLAY_WAIT_SECONDS
    async with connection(replica) as conn:
        while not await has_replayed(conn, position):
            if time.monotonic() > deadline:
                return pool
            await asyncio.sleep(0.05)
        lag = await read_replica_lag(conn)
    note_replica_lag(0.0 if lag is None else lag.seconds)
    return replica


async def _end_only(note: str) -> AsyncIterator[str]:
    yield checkpoint_line(note, 0)


async def _export_pages(
    pool: Pool,
    tenant_id: str,
    where: ReceiptFilter,
    checkpoint: log_tree.CheckpointRow,
    tree: LogTiles | MerkleTree,
) -> AsyncIterator[str]:
    filtered = where != ReceiptFilter(limit=where.limit)
    cursor = exported = 0
    while True:
        page_filter = ReceiptFilter(
            agent_id=where.agent_id,
            kind=where.kind,
            since=where.since,
            until=where.until,
            memory_id=where.memory_id,
            after_seq=cursor,
            limit=EXPORT_PAGE,
        )
        async with transaction(pool, tenant_id) as conn:
            rows = await receipt_store.list_receipts(conn, tenant_id, page_filter)
            rows = checked_rows([r for r in rows if r.seq <= checkpoint.size])
            if filtered and isinstance(tree, LogTiles):
                await tree.read(conn, {(r.seq - 1) // TILE_SIZE for r in rows})
        for r in rows:
            proof = tree.inclusion_proof(r.seq - 1) if filtered else None
            yield export_line(
                Envelope.from_json(r.envelope),
                r.seq,
                bytes(r.leaf),
                proof,
                tree_size=checkpoint.size if filtered else None,
            )
        exported += len(rows)
        if len(rows) < EXPORT_PAGE:
            break
        cursor = rows[-1].seq
    yield checkpoint_line(checkpoint.note, exported)


async def _proving_tree(
    conn: Connection, tenant_id: str, checkpoint: log_tree.CheckpointRow
) -> LogTiles | MerkleTree:
    """What an export's proofs come from: the log's tiles, when they give the checkpoint's root;
    else every leaf, hashed once."""
    size = checkpoint.size
    log = await LogTiles.load(conn, tenant_id, size)
    if log is not None:
        if log.tree.root() == bytes(checkpoint.root):
            return log
        _log.warning("stored tiles of %s do not give checkpoint %d's root", tenant_id, size)
    tree = MerkleTree(await log_tree.leaves(conn, tenant_id, size))
    if tree.size != size or tree.root() != bytes(checkpoint.root):
        _log.error("the stored log of %s disagrees with its checkpoint %d", tenant_id, size)
        raise inconsistent(size)
    return tree
