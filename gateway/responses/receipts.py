"""The receipt log as auditors read it: receipts, listings, verification, inclusion proofs."""

from __future__ import annotations

from typing import Any

import msgspec

from gateway.responses.timestamps import Timestamp

__all__ = [
    "Check",
    "EnvelopeSignature",
    "InclusionProof",
    "ReceiptDetail",
    "ReceiptEnvelope",
    "ReceiptPage",
    "ReceiptSummary",
    "Verification",
]


class ReceiptSummary(msgspec.Struct, frozen=True):
    """A receipt's row: where it sits in the log and what it commits to."""

    receipt_id: str
    seq: int
    kind: str
    agent_id: str | None
    issued_at: Timestamp
    bundle_sha256: str | None
    policy_digest: str | None
    parent_receipt_id: str | None


class ReceiptPage(msgspec.Struct, frozen=True):
    """GET /v1/receipts: one page; `next_cursor` is null on the last."""

    receipts: list[ReceiptSummary]
    next_cursor: str | None


# Members in the order the envelope's JSON has always been sent in (the order PostgreSQL's jsonb
# keeps them in), so that responses do not change bytes.
class EnvelopeSignature(msgspec.Struct, frozen=True):
    sig: str
    keyid: str


class ReceiptEnvelope(msgspec.Struct, frozen=True):
    """The DSSE envelope: `payload` is the body's exact bytes, base64."""

    signatures: list[EnvelopeSignature]
    payloadType: str  # noqa: N815 - DSSE's own spelling
    payload: str


class ReceiptDetail(ReceiptSummary, frozen=True):
    """GET /v1/receipts/{id}: the row, the decoded body and the envelope that signs it. The
    owning agent reads the row alone (`body` and `envelope` null): the body is the auditor's
    whole ledger, naming what the policy withheld from that agent (need to know, §14)."""

    body: dict[str, Any] | None  # the signed document (ARCHITECTURE §8); its shape is the kind's
    envelope: ReceiptEnvelope | None


class Check(msgspec.Struct, frozen=True):
    """One verification step; `code` is the stable code of its failure (`receipts.errors`)."""

    name: str
    ok: bool
    code: str | None = None
    detail: str = ""


class Verification(msgspec.Struct, frozen=True):
    """GET /v1/receipts/{id}/verify: every check, never stopping at the first failure."""

    receipt_id: str
    valid: bool
    checks: list[Check]


class InclusionProof(msgspec.Struct, frozen=True):
    """GET /v1/receipts/{id}/proof: RFC 6962 inclusion of the leaf in the checkpoint's tree."""

    receipt_id: str
    seq: int
    leaf: str
    leaf_index: int
    tree_size: int
    hashes: list[str]
    root: str
    checkpoint: str  # the signed note the root comes from
