"""Checking the receipt log: which receipts a caller may see, verification and inclusion proofs
(the export is `gateway.usecases.audit.exporting`; the requests auditors make of them are
`gateway.usecases.audit.requests`).

Server-side verification re-runs the same checks an offline verifier runs (the `receipts`
package), against the stored bytes: it tells an auditor whether the database still holds what
was signed, without asking them to trust the server's word for it (the export does that).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from gateway.domain.errors import ConflictError, NotFoundError
from gateway.domain.principal import Principal
from gateway.responses.receipts import Check
from gateway.store import log_tree
from gateway.store import receipts as receipt_store
from gateway.store.database import Connection
from gateway.usecases.receiptlog.checkpoints import checkpoint_tenant, store_tiles
from receipts import (
    ChainBreakError,
    Envelope,
    IndexMismatchError,
    MalformedError,
    ProofInvalidError,
    SignatureMismatchError,
    Signer,
    VerificationError,
    decode_body,
    inclusion_proof,
    leaf_hash,
    read_header,
    verify_checkpoint,
    verify_envelope,
    verify_inclusion,
)
from receipts.merkle import TILE_SIZE, TiledTree

_log = logging.getLogger(__name__)

__all__ = [
    "NOT_COVERED",
    "LogTiles",
    "Proof",
    "checked_rows",
    "find_visible",
    "inconsistent",
    "prove",
    "verify_stored",
]

# The inclusion check's detail when no stored checkpoint covers the receipt yet.
NOT_COVERED = "no checkpoint covers it yet"


async def find_visible(
    conn: Connection, principal: Principal, receipt_id: str
) -> receipt_store.ReceiptRow:
    """A receipt the caller may read: auditors and admins their tenant's, agents their own."""
    row = await receipt_store.find_receipt(conn, principal.tenant_id, receipt_id)
    if row is None:
        raise NotFoundError(f"receipt {receipt_id} not found")
    if principal.role == "agent" and not (
        row.key_id == principal.key_id
        or (principal.agent_id is not None and row.agent_id == principal.agent_id)
    ):
        raise NotFoundError(f"receipt {receipt_id} not found")
    return row


def check_index(row: receipt_store.ReceiptRow) -> None:
    """The row's index columns (`agent_id`, `disclosed_ids`), which filtered lists and exports
    select by, against what the signed body says; `IndexMismatchError` when they disagree (a
    changed column would quietly drop a receipt from a filtered answer). Every body signs its
    `disclosed_ids`, so one without them disagrees with any row."""
    body = decode_body(bytes(row.body))
    subject = body.get("subject")
    agent = subject.get("agent_id") if isinstance(subject, dict) else None
    if row.agent_id != agent:
        raise IndexMismatchError("the stored agent_id is not the signed subject's", seq=row.seq)
    signed = body.get("disclosed_ids")
    if signed is None or sorted(set(row.disclosed_ids)) != signed:
        raise IndexMismatchError("the stored disclosed_ids are not the signed ones", seq=row.seq)


def checked_rows(rows: list[receipt_store.ReceiptRow]) -> list[receipt_store.ReceiptRow]:
    """Rows whose index columns agree with their bodies; else 409 `ledger_inconsistent`."""
    for row in rows:
        try:
            check_index(row)
        except IndexMismatchError as exc:
            _log.error("receipt %s/%d: %s", row.tenant_id, row.seq, exc)
            raise ConflictError(
                f"receipt seq {row.seq}: {exc.message}", code="ledger_inconsistent"
            ) from exc
    return rows


async def verify_stored(  # noqa: C901  every check in report order, none stops the rest
    conn: Connection, row: receipt_store.ReceiptRow, signer: Signer, *, writes: bool = True
) -> list[Check]:
    """Every check, each reported with its stable code; never stops at the first failure.
    Without `writes` (a replica's read-only transaction) no checkpoint is signed and no tile
    stored: a receipt no stored checkpoint covers yet fails `inclusion` as not covered."""
    checks: list[Check] = []

    def run(name: str, check: Any) -> None:
        try:
            check()
        except VerificationError as exc:
            checks.append(Check(name, False, exc.code, exc.message))
        else:
            checks.append(Check(name, True))

    body = bytes(row.body)
    envelope = Envelope.from_json(row.envelope)
    keyring = signer.keyring

    def canonical() -> None:
        header = read_header(decode_body(body))
        if (header.tenant_id, header.seq, header.receipt_id) != (
            row.tenant_id,
            row.seq,
            row.receipt_id,
        ):
            raise MalformedError("the body names another tenant, seq or id")

    def signature() -> None:
        if envelope.payload != body:
            raise SignatureMismatchError("the envelope does not carry the stored body")
        verify_envelope(envelope, row.tenant_id, keyring)

    def leaf() -> None:
        if leaf_hash(body) != bytes(row.leaf):
            raise ProofInvalidError("stored leaf is not SHA-256(0x00 || body)")

    run("canonical", canonical)
    run("signature", signature)
    run("leaf", leaf)
    run("index", lambda: check_index(row))
    previous = (
        await log_tree.leaves_between(conn, row.tenant_id, row.seq - 1, row.seq - 1)
        if row.seq > 1
        else [bytes(32)]
    )

    def chain() -> None:
        header = read_header(decode_body(body))
        expected = previous[0].hex() if previous else None  # None: the previous row is gone
        if header.prev != expected:
            raise ChainBreakError("log.prev is not the leaf of the previous receipt")

    run("chain", chain)
    try:
        proof = await prove(conn, row, signer if writes else None, store_tiles=writes)
    except ConflictError as exc:  # the stored log disagrees with its checkpoint
        checks.append(Check("inclusion", False, exc.code, exc.detail))
        return checks
    if proof is None:
        checks.append(Check("inclusion", False, "proof_invalid", NOT_COVERED))
    else:

        def included() -> None:
            checkpoint = verify_checkpoint(proof.checkpoint, keyring.checkpoint_keys())
            verify_inclusion(
                bytes(row.leaf), row.seq - 1, checkpoint.size, list(proof.hashes), checkpoint.root
            )

        run("inclusion", included)
    return checks


@dataclass(frozen=True, slots=True)
class Proof:
    leaf_index: int
    tree_size: int
    hashes: tuple[bytes, ...]
    checkpoint: str
    root: bytes


async def prove(
    conn: Connection,
    row: receipt_store.ReceiptRow,
    signer: Signer | None,
    *,
    store_tiles: bool = True,
) -> Proof | None:
    """An RFC 6962 inclusion proof of the receipt in the latest checkpoint; with a `signer`, a
    fresh checkpoint is made when none covers the receipt yet; without `store_tiles`, tiles a
    log older than them lacks are not stored (the proof is then made from the leaves)."""
    latest = await log_tree.latest_checkpoint(conn, row.tenant_id)
    if (latest is None or latest.size < row.seq) and signer is not None:
        latest = await checkpoint_tenant(conn, signer, row.tenant_id)
    if latest is None or latest.size < row.seq:
        return None
    hashes = await _tiled_proof(conn, row, latest, store=store_tiles)
    if hashes is None:  # tiles that do not prove the receipt: never trusted, rebuilt from leaves
        leaves = await log_tree.leaves(conn, row.tenant_id, latest.size)
        hashes = inclusion_proof(row.seq - 1, leaves)
    return Proof(
        leaf_index=row.seq - 1,
        tree_size=latest.size,
        hashes=tuple(hashes),
        checkpoint=latest.note,
        root=bytes(latest.root),
    )


async def _tiled_proof(
    conn: Connection,
    row: receipt_store.ReceiptRow,
    checkpoint: log_tree.CheckpointRow,
    *,
    store: bool = True,
) -> list[bytes] | None:
    """The receipt's inclusion proof from the log's tiles and two tiles of leaves (the one
    holding it, the incomplete last one): O(n / 256) hashes read, not O(n). None when the stored
    tiles do not give a proof that verifies against the checkpoint's root."""
    size, index = checkpoint.size, row.seq - 1
    log = await LogTiles.load(conn, row.tenant_id, size, store=store)
    if log is None:
        return None
    await log.read(conn, {index // TILE_SIZE})
    hashes = log.inclusion_proof(index)
    try:
        verify_inclusion(bytes(row.leaf), index, size, hashes, bytes(checkpoint.root))
    except ProofInvalidError:
        _log.warning(
            "stored tiles of %s do not prove receipt %d; proving from leaves",
            row.tenant_id,
            row.seq,
        )
        return None
    return hashes


class LogTiles:
    """The tenant's log at a checkpoint as a `TiledTree`: the tile roots, and the leaves of the
    tiles the proofs asked for so far (`read` them first, in the caller's transaction)."""

    def __init__(self, tenant_id: str, size: int, tiles: list[bytes]) -> None:
        self.tenant_id = tenant_id
        self.leaves: dict[int, list[bytes]] = {}
        self.tree = TiledTree(size, tiles, lambda lo, hi: self.leaves[lo // TILE_SIZE])

    @classmethod
    async def load(
        cls, conn: Connection, tenant_id: str, size: int, *, store: bool = True
    ) -> LogTiles | None:
        """The log's first `size` receipts by their tiles (stored first, unless not to `store`,
        where a log older than its tiles lacks them) and the leaves of the incomplete last one,
        which the root and every proof need; None when the stored tiles are not all there."""
        if store:
            await store_tiles(conn, tenant_id, size)
        tiles = await log_tree.tiles(conn, tenant_id, size // TILE_SIZE)
        if len(tiles) != size // TILE_SIZE:
            return None
        log = cls(tenant_id, size, tiles)
        if size % TILE_SIZE:
            await log.read(conn, {size // TILE_SIZE})
        return log

    async def read(self, conn: Connection, tiles: set[int]) -> None:
        size = self.tree.size
        for tile in sorted(tiles - self.leaves.keys()):
            first, last = tile * TILE_SIZE, min((tile + 1) * TILE_SIZE, size)
            leaves = await log_tree.leaves_between(conn, self.tenant_id, first + 1, last)
            if len(leaves) != last - first:
                _log.error(
                    "receipts %d..%d of %s are not all there", first + 1, last, self.tenant_id
                )
                raise inconsistent(size)
            self.leaves[tile] = leaves

    def inclusion_proof(self, index: int) -> list[bytes]:
        return self.tree.inclusion_proof(index)


def inconsistent(size: int) -> ConflictError:
    return ConflictError(
        f"the stored receipt log disagrees with its signed checkpoint of size {size}",
        code="ledger_inconsistent",
    )
