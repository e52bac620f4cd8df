"""Signed checkpoints of each tenant's receipt log (RFC 6962 tree head as an Ed25519 signed note).

Produced every few seconds while receipts are written (a background task of the app) and on
demand. The root is computed from the stored leaf hashes, so a checkpoint commits to exactly the
receipts in the database at its size. Each checkpoint also stores the tree's right edge (at most
log2 n hashes), so the next one reads and hashes only the receipts appended since: a checkpoint
costs O(new receipts + log n), not O(n). It also stores the roots of the log's tiles completed
since (256 receipts each), from which an inclusion proof is made without reading the whole log.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from gateway.store import log_tree as receipt_store
from gateway.store import receipt_appends as appends
from gateway.store.database import Connection
from gateway.store.pool import Pool
from gateway.store.transactions import transaction
from gateway.usecases.receiptlog.group_commit import sign
from receipts import MerkleFrontier, Signer, log_origin
from receipts.merkle import TILE_SIZE, tile_roots

__all__ = ["Checkpointer", "checkpoint_tenant", "store_tiles"]

_log = logging.getLogger(__name__)


async def checkpoint_tenant(
    conn: Connection, signer: Signer, tenant_id: str
) -> receipt_store.CheckpointRow | None:
    """Checkpoint the tenant's log if it grew since the last checkpoint; the latest checkpoint."""
    size = await receipt_store.log_size(conn, tenant_id)
    latest = await receipt_store.latest_checkpoint(conn, tenant_id)
    if size == 0 or (latest is not None and latest.size >= size):
        return latest
    await _sign_unsigned(conn, signer, tenant_id, latest.size if latest else 0, size)
    frontier = await _frontier(conn, tenant_id, latest, size)
    tree_root = frontier.root()
    note = signer.sign_checkpoint(log_origin(tenant_id), size, tree_root)
    # Two processes may checkpoint the same size at once: same root, first insert wins.
    await receipt_store.insert_checkpoint(conn, tenant_id, size, tree_root, note, frontier.edge)
    await store_tiles(conn, tenant_id, size)
    return await receipt_store.latest_checkpoint(conn, tenant_id)


async def _sign_unsigned(
    conn: Connection, signer: Signer, tenant_id: str, after: int, through: int
) -> None:
    """Sign the receipts a checkpoint is about to cover that have no signature stored: those
    whose writer is still storing it (the same bytes: signing is deterministic, and the first
    insert wins), and those whose writer's durable transaction never committed (a crash or a
    lost connection after the log was released; no request was answered for them). So every
    receipt a checkpoint covers verifies, and has its rows by memory."""
    unsigned = await appends.unsigned_receipts(conn, tenant_id, after, through)
    if unsigned:
        await appends.store_signatures(conn, tenant_id, sign(signer, tenant_id, unsigned))


async def store_tiles(conn: Connection, tenant_id: str, size: int) -> None:
    """Store the roots of the complete tiles among the tenant's first `size` receipts that are
    not stored yet (`receipts.tile_roots`); proofs read them (`gateway.usecases.audit.verification.prove`).
    Tiles are written in order, from the leaves after the last one stored."""
    count = size // TILE_SIZE
    stored = await receipt_store.tile_count(conn, tenant_id)
    if stored >= count:
        return
    leaves = await receipt_store.leaves_between(
        conn, tenant_id, stored * TILE_SIZE + 1, count * TILE_SIZE
    )
    await receipt_store.insert_tiles(
        conn, tenant_id, stored, tile_roots(leaves, stored * TILE_SIZE)
    )


async def _frontier(
    conn: Connection, tenant_id: str, latest: receipt_store.CheckpointRow | None, size: int
) -> MerkleFrontier:
    """The tree's right edge at ``size``: the latest checkpoint's edge and the leaves appended
    since, or (no stored edge, or one that does not give its checkpoint's root) all leaves."""
    if latest is not None and latest.frontier is not None:
        try:
            frontier = MerkleFrontier.resume(latest.size, bytes(latest.frontier))
        except ValueError:
            frontier = None
        if frontier is not None and frontier.root() == bytes(latest.root):
            for leaf in await receipt_store.leaves_between(conn, tenant_id, latest.size + 1, size):
                frontier.append(leaf)
            return frontier
        _log.warning(
            "checkpoint %s/%d holds a tree edge that does not give its root; rebuilding",
            tenant_id,
            latest.size,
        )
    return MerkleFrontier.from_leaves(await receipt_store.leaves(conn, tenant_id, size))


@dataclass
class Checkpointer:
    """Checkpoints every tenant whose log grew, every `interval` seconds, until cancelled."""

    pool: Pool
    signer: Signer
    interval: float

    async def run_once(self) -> int:
        async with transaction(self.pool) as conn:
            grown = await receipt_store.tenants_with_new_receipts(conn)
        for tenant_id, _ in grown:
            async with transaction(self.pool, tenant_id) as conn:
                await checkpoint_tenant(conn, self.signer, tenant_id)
        return len(grown)

    async def run(self, sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        while True:
            try:
                await self.run_once()
            except Exception:  # noqa: BLE001  the loop outlives any one failure; logged in full
                _log.exception("checkpointing failed; retrying in %.1fs", self.interval)
            await sleep(self.interval)
