"""Writing receipts: every disclosure's account, signed and appended to the tenant's log.

The body is RFC 8785 canonical JSON without floats (ARCHITECTURE §8); the gateway supplies the
kind-specific members, this module adds the header (schema, ids, log position, subject, time,
bundle hash) and seals it: canonical bytes, DSSE envelope (HMAC per tenant + Ed25519), leaf hash.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from gateway.clock import IdFactory
from gateway.core.instants import rfc3339
from gateway.principal import Principal
from gateway.request_record import note_receipt
from gateway.store import receipts as receipt_store
from gateway.store.database import Connection
from receipts import RECEIPT_SCHEMA, Signer, bundle_field, leaf_hash
from receipts.canonical import CanonicalTemplate

__all__ = ["Recorder", "float_text", "rfc3339"]


def float_text(value: float | None) -> str | None:
    """A float as the shortest decimal that reads back to the same float (Python's repr); receipt
    bodies carry no JSON floats, and replay needs the exact value back."""
    return None if value is None else repr(float(value))


@dataclass(frozen=True, slots=True)
class Recorder:
    signer: Signer
    new_id: IdFactory

    async def record(
        self,
        conn: Connection,
        principal: Principal,
        *,
        kind: str,
        issued_at: datetime,
        purpose: str | None,
        delivered: bytes | None,
        members: Mapping[str, Any],
        disclosed_ids: Sequence[str],
        policy_digest: str | None,
        parent_receipt_id: str | None = None,
    ) -> str:
        """Append the receipt of one disclosure inside the caller's transaction; its id.

        `delivered` None: nothing reached the caller (a refusal). The body's `bundle` is then the
        empty delivery and the row's `bundle_sha256` is NULL, so no bundle is ever looked up."""
        receipt_id = self.new_id(issued_at)
        tenant_id = principal.tenant_id
        bundle = bundle_field(delivered or b"")
        members = {
            **members,
            "schema": RECEIPT_SCHEMA,
            "receipt_id": receipt_id,
            "kind": kind,
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
        }
        # Everything but the log position is canonical before the tenant's log is locked; under
        # the lock only the position is filled in, the body signed and appended.
        template = CanonicalTemplate(members, "log")
        head = await receipt_store.lock_head(conn, tenant_id)
        seq = head.size + 1
        body = template.fill({"seq": seq, "prev": head.head.hex()})
        envelope = self.signer.sign(body, tenant_id)
        await receipt_store.append_receipt(
            conn,
            tenant_id,
            receipt_store.SealedReceipt(
                receipt_id=receipt_id,
                kind=kind,
                agent_id=principal.agent_id,
                key_id=principal.key_id,
                issued_at=issued_at,
                seq=seq,
                prev=head.head,
                body=body,
                envelope=envelope.to_json(),
                leaf=leaf_hash(body),
                bundle_sha256=None if delivered is None else str(bundle["sha256"]),
                policy_digest=policy_digest,
                parent_receipt_id=parent_receipt_id,
                disclosed_ids=disclosed_ids,
            ),
        )
        note_receipt(receipt_id)
        return receipt_id
