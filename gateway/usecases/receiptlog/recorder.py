"""Writing receipts: every disclosure's account, signed and appended to the tenant's log.

The body is RFC 8785 canonical JSON without floats (ARCHITECTURE §8); the gateway supplies the
kind-specific members, this module adds the header (schema, ids, log position, subject, time,
bundle hash), makes it canonical but for its log position, and hands it to the log's group
commit (`gateway.usecases.receiptlog.group_commit`), which seals it (position, DSSE envelope with HMAC per
tenant + Ed25519, leaf hash) and appends it, durably, before `record` returns.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TypeVar

import msgspec

from gateway.core.instants import rfc3339
from gateway.domain.clock import IdFactory
from gateway.domain.principal import Principal
from gateway.store.database import Connection
from gateway.usecases.access.request_record import note_receipt
from gateway.usecases.receiptlog.group_commit import GroupCommit, PendingReceipt
from gateway.usecases.receiptlog.kinds import Kind
from gateway.usecases.tracing import KIND, RECEIPT_ID, TENANT, stage
from receipts import RECEIPT_SCHEMA, Signer, bundle_field
from receipts.canonical import CanonicalTemplate

__all__ = ["Recorder", "rfc3339"]

Body = TypeVar("Body", bound=msgspec.Struct)


@dataclass(frozen=True, slots=True)
class Recorder:
    log: GroupCommit
    new_id: IdFactory

    @property
    def signer(self) -> Signer:
        """Who signs this gateway's receipts (verification reads its keyring)."""
        return self.log.signer

    async def record(
        self,
        conn: Connection,
        principal: Principal,
        *,
        kind: Kind[Body],
        issued_at: datetime,
        purpose: str | None,
        delivered: bytes | None,
        members: Body,
        disclosed_ids: Sequence[str],
        policy_digest: str | None,
        parent_receipt_id: str | None = None,
        with_writes: bool = False,
    ) -> str:
        """Append the receipt of one disclosure; its id, once the receipt is durable. `conn`
        is the disclosure's transaction, which the receipt joins only `with_writes` (the
        disclosure wrote what the receipt names, so both commit or neither); otherwise the log's
        group commit writes it on its own connection and it commits first
        (`gateway.usecases.receiptlog.group_commit`).

        `delivered` None: nothing reached the caller (a refusal). The body's `bundle` is then the
        empty delivery and the row's `bundle_sha256` is NULL, so no bundle is ever looked up."""
        receipt_id = self.new_id(issued_at)
        tenant_id = principal.tenant_id
        bundle = bundle_field(delivered or b"")
        body = {
            **msgspec.to_builtins(members),
            "schema": RECEIPT_SCHEMA,
            "receipt_id": receipt_id,
            "kind": kind.name,
            "tenant_id": tenant_id,
            "issued_at": rfc3339(issued_at),
            "subject": {
                "agent_id": principal.agent_id,
                "key_id": principal.key_id,
                "role": principal.role,
                "purpose": purpose,
            },
            "bundle": bundle,
            "parent_receipt_id": parent_receipt_id,
            # Signed, so the row's disclosed_ids (the index that answers "which receipts
            # disclosed memory X") can be checked against it (`gateway.usecases.audit.verification`).
            "disclosed_ids": sorted(set(disclosed_ids)),
        }
        # Everything but the log position is canonical before the tenant's log is locked; under
        # the lock only the position is filled in, the body signed and appended.
        pending = PendingReceipt(
            template=CanonicalTemplate(body, "log"),
            receipt_id=receipt_id,
            kind=kind.name,
            agent_id=principal.agent_id,
            key_id=principal.key_id,
            issued_at=issued_at,
            bundle_sha256=None if delivered is None else str(bundle["sha256"]),
            policy_digest=policy_digest,
            parent_receipt_id=parent_receipt_id,
            disclosed_ids=disclosed_ids,
        )
        with stage("ctxgw.receipt.write") as span:
            span.label(RECEIPT_ID, receipt_id)
            span.label(TENANT, tenant_id)
            span.label(KIND, kind.name)
            if with_writes:
                await self.log.append_within(conn, tenant_id, pending)
            else:
                await self.log.append(tenant_id, pending)
        note_receipt(receipt_id)
        return receipt_id
