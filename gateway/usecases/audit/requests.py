"""The requests auditors make of the receipt log, each one unit of work from the raw
`Authorization` header to a response: a receipt, a listing, its verification, its inclusion
proof, the latest checkpoint, the export. The checks themselves are `gateway.usecases.audit.verification`'s.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import msgspec

from gateway.domain.errors import NotFoundError
from gateway.domain.principal import Role
from gateway.domain.receipt_filter import ReceiptFilter
from gateway.responses.receipts import (
    Check,
    InclusionProof,
    ReceiptDetail,
    ReceiptEnvelope,
    ReceiptPage,
    ReceiptSummary,
    Verification,
)
from gateway.store.pool import Pool
from gateway.store.receipts import ReceiptRow, list_receipts
from gateway.usecases.access.work import reading_unit_of_work, unit_of_work
from gateway.usecases.audit.exporting import export_lines
from gateway.usecases.audit.verification import (
    NOT_COVERED,
    checked_rows,
    find_visible,
    prove,
    verify_stored,
)
from gateway.usecases.receiptlog.checkpoints import checkpoint_tenant
from gateway.usecases.receiptlog.recorder import rfc3339
from receipts import Signer, decode_body

__all__ = [
    "export_receipts",
    "latest_checkpoint",
    "page_of_receipts",
    "prove_receipt",
    "read_receipt",
    "verify_receipt",
]

AUDITORS: tuple[Role, ...] = ("auditor", "admin")


def _summary(row: ReceiptRow) -> ReceiptSummary:
    return ReceiptSummary(
        receipt_id=row.receipt_id,
        seq=row.seq,
        kind=row.kind,
        agent_id=row.agent_id,
        issued_at=rfc3339(row.issued_at),
        bundle_sha256=row.bundle_sha256,
        policy_digest=row.policy_digest,
        parent_receipt_id=row.parent_receipt_id,
    )


async def read_receipt(
    pool: Pool, replica: Pool | None, authorization: str | None, receipt_id: str
) -> ReceiptDetail:
    """A receipt the caller may read (auditors and admins their tenant's, agents their own):
    its row, and for auditors and admins its decoded body and its envelope. Read from the
    `replica` when there is one (`reading_unit_of_work`)."""
    async with reading_unit_of_work(pool, replica, authorization) as (conn, principal):
        row = await find_visible(conn, principal, receipt_id)
    summary = msgspec.structs.asdict(_summary(row))
    if principal.role == "agent":
        return ReceiptDetail(**summary, body=None, envelope=None)
    return ReceiptDetail(
        **summary,
        body=decode_body(bytes(row.body)),
        envelope=msgspec.convert(row.envelope, ReceiptEnvelope),
    )


async def page_of_receipts(
    pool: Pool, replica: Pool | None, authorization: str | None, where: ReceiptFilter
) -> ReceiptPage:
    """One page of the tenant's receipts in log order; a full page names the next cursor. Read
    from the `replica` when there is one."""
    async with reading_unit_of_work(pool, replica, authorization) as (conn, principal):
        principal.require_role(*AUDITORS)
        rows = checked_rows(await list_receipts(conn, principal.tenant_id, where))
    return ReceiptPage(
        receipts=[_summary(r) for r in rows],
        next_cursor=str(rows[-1].seq) if len(rows) == where.limit else None,
    )


async def verify_receipt(
    pool: Pool, replica: Pool | None, signer: Signer, authorization: str | None, receipt_id: str
) -> Verification:
    """Every check of a stored receipt, each with its stable code. On the `replica` when there
    is one and a checkpoint it has replayed covers the receipt (no checkpoint is signed there, no
    tile stored); else on the primary, which signs one when none covers it yet."""
    if replica is not None:
        async with reading_unit_of_work(pool, replica, authorization) as (conn, principal):
            principal.require_role(*AUDITORS)
            row = await find_visible(conn, principal, receipt_id)
            checks = await verify_stored(conn, row, signer, writes=False)
        if not any(c.detail == NOT_COVERED for c in checks):
            return _verification(receipt_id, checks)
    async with unit_of_work(pool, authorization) as (conn, principal):
        principal.require_role(*AUDITORS)
        row = await find_visible(conn, principal, receipt_id)
        checks = await verify_stored(conn, row, signer)
    return _verification(receipt_id, checks)


def _verification(receipt_id: str, checks: list[Check]) -> Verification:
    return Verification(receipt_id=receipt_id, valid=all(c.ok for c in checks), checks=checks)


async def prove_receipt(
    pool: Pool, signer: Signer, authorization: str | None, receipt_id: str
) -> InclusionProof:
    """The receipt's RFC 6962 inclusion proof to the latest checkpoint (made now if none
    covers it yet)."""
    async with unit_of_work(pool, authorization) as (conn, principal):
        principal.require_role(*AUDITORS)
        row = await find_visible(conn, principal, receipt_id)
        found = await prove(conn, row, signer)
    assert found is not None  # with a signer, a covering checkpoint is made on demand
    return InclusionProof(
        receipt_id=receipt_id,
        seq=row.seq,
        leaf=bytes(row.leaf).hex(),
        leaf_index=found.leaf_index,
        tree_size=found.tree_size,
        hashes=[h.hex() for h in found.hashes],
        root=found.root.hex(),
        checkpoint=found.checkpoint,
    )


async def latest_checkpoint(pool: Pool, signer: Signer, authorization: str | None) -> str:
    """The latest signed checkpoint of the tenant's log (signed-note text), made now if the log
    grew since; 404 `log_empty` before the first receipt."""
    async with unit_of_work(pool, authorization) as (conn, principal):
        principal.require_role(*AUDITORS)
        latest = await checkpoint_tenant(conn, signer, principal.tenant_id)
    if latest is None:
        raise NotFoundError("the log is empty: no receipt has been written yet", code="log_empty")
    return latest.note


async def export_receipts(
    pool: Pool,
    replica: Pool | None,
    signer: Signer,
    authorization: str | None,
    where: ReceiptFilter,
) -> AsyncIterator[bytes]:
    """The tenant's log as JSONL lines, verifiable offline (`receipts.export`). The caller is
    authenticated before the first line; the lines are read page by page as they are sent,
    from the `replica` when there is one and it has caught up (`export_lines`)."""
    async with unit_of_work(pool, authorization) as (_, principal):
        principal.require_role(*AUDITORS)
    return _encoded(await export_lines(pool, signer, principal.tenant_id, where, replica))


async def _encoded(lines: AsyncIterator[str]) -> AsyncIterator[bytes]:
    async for line in lines:
        yield line.encode("utf-8")
