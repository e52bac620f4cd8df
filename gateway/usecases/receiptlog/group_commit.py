"""Group commit of the receipt log: the receipts of concurrent requests appended in one
transaction, each request answered only once its receipt is durable.

Why. A tenant's log is a chain (each body names its `seq` and the previous leaf), so appends to
one tenant's log are serial: the head row is locked from reading the head until COMMIT. Locked
inside each request's own transaction, the lock was held across that request's turns of the
event loop, which under load wait behind other requests' Python work; at 16 clients most
connections waited on that one row. Here one writer per process takes every receipt waiting
for a tenant, and holds the lock for one round trip per batch: BEGIN and the head lock go in one
trip; the batch's insert, the head's advance and COMMIT in the next (a libpq pipeline), and the
bodies are canonical before they are queued (`CanonicalTemplate`), so under the lock only their
log positions are filled in and their leaves hashed (`place`).

The log is the serial section of a tenant, so what it holds is the ceiling of the tenant's
receipted throughput (`held_seconds` over `sealed`: `python -m bench log`). So nothing that
follows from a placed body waits in it. That COMMIT does not wait for the disk, and releases the
lock at once; then the batch is signed (`sign`: deterministic, so whoever signs a position
signs the same bytes) and its signatures and rows by memory are stored in a second, durable
transaction on the same connection, whose WAL flush (and a synchronous standby's confirmation)
covers the first: only then are the batch's requests answered. The writers of N processes used
to queue behind each other's flushes and signing; now they queue only behind placing and
inserting.

Fail closed. A request waits for its own receipt's durable commit; if the batch fails, every
request in it gets the `ReceiptWriteError` (or `DatabaseUnavailableError`) and answers nothing.
A batch that failed after its first COMMIT may stay in the chain unsigned: it was never
acknowledged, reads as an envelope without signatures, and is signed and indexed by the
checkpointer before a checkpoint covers it (`gateway.usecases.receiptlog.checkpoints`). The writer
has its own connection, so requests that hold the pool's connections while they wait cannot
starve it. A receipt is written on that connection, not in the request's transaction, and
commits just before it: nearly every receipt accounts for a read that writes nothing. A
disclosure that also writes what its receipt names (a session step's new summary) appends with
`append_within` instead, in its own transaction, so both commit or neither; the log stays locked
until that transaction ends, which only such steps pay.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from gateway.store import receipt_appends as receipt_store
from gateway.store.database import Connection
from gateway.store.errors import DatabaseUnavailableError, ReceiptWriteError
from gateway.store.pool import Pool
from gateway.store.transactions import log_pipeline, queued_transaction
from receipts import Signer, leaf_hash
from receipts.canonical import CanonicalTemplate

__all__ = ["GroupCommit", "PendingReceipt", "place", "sign"]

_log = logging.getLogger(__name__)

# Receipts in one transaction at most: bounds the statement's size (15 parameters a receipt) and
# how long one batch keeps the tenants after it waiting.
MAX_BATCH = 64


@dataclass(frozen=True, slots=True)
class PendingReceipt:
    """A receipt canonical but for its log position (the template's `log` member)."""

    template: CanonicalTemplate
    receipt_id: str
    kind: str
    agent_id: str | None
    key_id: str
    issued_at: datetime
    bundle_sha256: str | None
    policy_digest: str | None
    parent_receipt_id: str | None
    disclosed_ids: Sequence[str]


def place(
    head: receipt_store.LogHead, pending: Sequence[PendingReceipt]
) -> list[receipt_store.PlacedReceipt]:
    """The receipts at the positions after `head`, in order, each chained to the one before:
    their log positions filled in and their leaves hashed, nothing more (this is what the log's
    lock is held for)."""
    placed = []
    size, prev = head.size, head.head
    for receipt in pending:
        size += 1
        body = receipt.template.fill({"seq": size, "prev": prev.hex()})
        leaf = leaf_hash(body)
        placed.append(
            receipt_store.PlacedReceipt(
                receipt_id=receipt.receipt_id,
                kind=receipt.kind,
                agent_id=receipt.agent_id,
                key_id=receipt.key_id,
                issued_at=receipt.issued_at,
                seq=size,
                prev=prev,
                body=body,
                leaf=leaf,
                bundle_sha256=receipt.bundle_sha256,
                policy_digest=receipt.policy_digest,
                parent_receipt_id=receipt.parent_receipt_id,
                disclosed_ids=receipt.disclosed_ids,
            )
        )
        prev = leaf
    return placed


class Positioned(Protocol):
    """A receipt's body at its log position."""

    @property
    def seq(self) -> int: ...
    @property
    def body(self) -> bytes: ...


def sign(
    signer: Signer, tenant_id: str, placed: Sequence[Positioned]
) -> list[receipt_store.SignedReceipt]:
    """The signatures of placed receipts: deterministic (Ed25519, HMAC-SHA256), so the same for
    whoever signs a position (the writer, or the checkpointer repairing what a crash left)."""
    return [
        receipt_store.SignedReceipt(p.seq, p.body, signer.sign(p.body, tenant_id).to_json())
        for p in placed
    ]


_Waiting = list[tuple[PendingReceipt, "asyncio.Future[None]"]]


class GroupCommit:
    """One writer per process for every tenant's log; `append` returns once the receipt is
    committed. Tenants take turns, a batch each."""

    def __init__(self, pool: Pool, signer: Signer) -> None:
        self._pool = pool  # its own: see the module docstring
        self.signer = signer
        self._waiting: dict[str, _Waiting] = {}
        self._writer: asyncio.Task[None] | None = None
        # How long this writer held tenants' logs (the serial section, by the server's clock),
        # and the receipts it sealed meanwhile: `ctxgw_receipt_log_held_seconds_total` and
        # `ctxgw_receipts_sealed_total`.
        self.held_seconds = 0.0
        self.sealed = 0

    async def append(self, tenant_id: str, receipt: PendingReceipt) -> None:
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.setdefault(tenant_id, []).append((receipt, done))
        if self._writer is None or self._writer.done():
            self._writer = asyncio.create_task(self._drain(), name="ctxgw-receipt-writer")
        # Shielded: a request that goes away still has its receipt written or failed as one
        # of its batch, and the writer never sets the result of a cancelled future.
        await asyncio.shield(done)

    async def append_within(
        self, conn: Connection, tenant_id: str, receipt: PendingReceipt
    ) -> None:
        """Append in `conn`'s transaction, which commits or rolls back the receipt with the
        writes it names; the tenant's log stays locked until then."""
        head = await receipt_store.lock_head(conn, tenant_id)
        placed = place(head, [receipt])
        await receipt_store.append_receipts(conn, tenant_id, placed)
        await receipt_store.store_signatures(conn, tenant_id, sign(self.signer, tenant_id, placed))

    async def _drain(self) -> None:
        while self._waiting:
            tenant_id, waiting = next(iter(self._waiting.items()))
            del self._waiting[tenant_id]
            batch, rest = waiting[:MAX_BATCH], waiting[MAX_BATCH:]
            if rest:  # to the back of the line, after the other tenants
                self._waiting.setdefault(tenant_id, []).extend(rest)
            try:
                await self._write(tenant_id, [receipt for receipt, _ in batch])
            except _NotLockedError as exc:
                _fail(batch, exc.cause)
            except (ReceiptWriteError, DatabaseUnavailableError) as exc:
                _fail(batch, exc)
            except Exception as exc:  # noqa: BLE001  fail closed whatever went wrong
                _log.exception("a batch of %d receipts was not written", len(batch))
                _fail(batch, ReceiptWriteError(f"the receipts could not be written: {exc}"))
            else:
                for _, done in batch:
                    done.set_result(None)

    async def _write(self, tenant_id: str, batch: Sequence[PendingReceipt]) -> None:
        try:
            await self._write_once(tenant_id, batch)
        except _NotLockedError:
            # The connection failed before the log was locked (a restarted server, a dropped
            # link: the writer learns of it only now), so nothing was written and a fresh
            # connection may try once more. After the lock a failure is final: whether COMMIT
            # took effect is unknown, and the batch fails closed.
            await self._write_once(tenant_id, batch)

    async def _write_once(self, tenant_id: str, batch: Sequence[PendingReceipt]) -> None:
        locked = False
        try:
            async with log_pipeline(self._pool) as conn:
                # BEGIN and the lock go in one round trip (reading the head waits for it); the
                # insert and a COMMIT that does not wait for the disk are sent at once, and the
                # server releases the log when it reaches that COMMIT. Meanwhile the batch is
                # signed, and its signatures and rows by memory follow in a durable transaction:
                # the pipeline's end, one round trip after the lock, awaits them all.
                async with queued_transaction(conn, tenant_id, durable=False):
                    head = await receipt_store.lock_head(conn, tenant_id)
                    locked = True
                    placed = place(head, batch)
                    appended = await receipt_store.append_receipts(conn, tenant_id, placed)
                signed = sign(self.signer, tenant_id, placed)
                async with queued_transaction(conn, tenant_id):
                    await receipt_store.store_signatures(conn, tenant_id, signed)
            ended = await appended.ended_at()
            if ended is not None:
                self.held_seconds += (ended - head.locked_at).total_seconds()
            self.sealed += len(batch)
        except (ReceiptWriteError, DatabaseUnavailableError) as exc:
            if not locked:
                raise _NotLockedError(exc) from exc
            raise


class _NotLockedError(Exception):
    """The batch failed before its log was locked, for `cause`."""

    def __init__(self, cause: ReceiptWriteError | DatabaseUnavailableError) -> None:
        super().__init__(str(cause))
        self.cause = cause


def _fail(batch: _Waiting, error: Exception) -> None:
    for _, done in batch:
        done.set_exception(error)
