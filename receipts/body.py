"""The receipt body: the fields this package relies on to chain, hash and check receipts.

A body (ARCHITECTURE §8) is a JSON object in canonical form (`receipts.canonical`). The gateway
fills in what was disclosed and why; verification needs only the header fields below, which
every receipt carries::

    {
      "schema": "ctxgw.receipt/v1",
      "receipt_id": "<string>",
      "tenant_id": "<string>",
      "log": {"seq": <int >= 1>, "prev": "<64 lowercase hex>"},
      "bundle": {"sha256": "<64 lowercase hex>", "bytes": <int >= 0>},
      ...                       # kind, issued_at, subject, request, policy, candidates, ...
    }

``log.seq`` counts the tenant's receipts from 1 without gaps. ``log.prev`` is the hex leaf hash
(`receipts.merkle.leaf_hash`) of the receipt with ``seq - 1``, or `GENESIS_PREV` for seq 1, so
the log is a hash chain as well as a Merkle tree. ``bundle`` describes the exact bytes delivered
to the agent (`bundle_field`).

One kind is checked further: a **refusal** (``"kind": "refusal"``) is the receipt of a request
that policy refused before anything was read. It delivered nothing, so its ``bundle`` is the
empty delivery (``bytes`` 0, ``sha256`` of the empty string), and it names what refused it::

    "refused": {"rule_id": "<non-empty string>", "reason": "<string>"}

A refusal that claims delivered bytes, or names no rule, is ``malformed``. Other kinds are not
read past the header, so receipts written before refusals existed verify unchanged.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from receipts.errors import BundleMismatchError, MalformedError

__all__ = [
    "EMPTY_BUNDLE_SHA256",
    "GENESIS_PREV",
    "RECEIPT_SCHEMA",
    "REFUSAL_KIND",
    "ReceiptHeader",
    "bundle_field",
    "check_bundle",
    "read_header",
]

RECEIPT_SCHEMA: Final = "ctxgw.receipt/v1"
GENESIS_PREV: Final = "0" * 64
REFUSAL_KIND: Final = "refusal"
EMPTY_BUNDLE_SHA256: Final = hashlib.sha256(b"").hexdigest()
_HEX_DIGEST: Final = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True, slots=True)
class ReceiptHeader:
    receipt_id: str
    tenant_id: str
    seq: int
    prev: str
    bundle_sha256: str
    bundle_bytes: int


def read_header(body: Mapping[str, Any]) -> ReceiptHeader:
    """Extract and type-check the header of a decoded body; raises `MalformedError`."""
    if body.get("schema") != RECEIPT_SCHEMA:
        raise MalformedError(f"body schema is not {RECEIPT_SCHEMA!r}")
    receipt_id = _text(body, "receipt_id")
    tenant_id = _text(body, "tenant_id")
    if any(ch < " " or ch == "\x7f" for ch in tenant_id):
        raise MalformedError("tenant_id contains control characters", receipt_id=receipt_id)
    log = _object(body, "log")
    bundle = _object(body, "bundle")
    seq = _integer(log, "seq", "log.seq", minimum=1)
    prev = log.get("prev")
    if not isinstance(prev, str) or not _HEX_DIGEST.fullmatch(prev):
        raise MalformedError("log.prev is not 64 lowercase hex digits", receipt_id=receipt_id)
    sha256 = bundle.get("sha256")
    if not isinstance(sha256, str) or not _HEX_DIGEST.fullmatch(sha256):
        raise MalformedError("bundle.sha256 is not 64 lowercase hex digits", receipt_id=receipt_id)
    size = _integer(bundle, "bytes", "bundle.bytes", minimum=0)
    if body.get("kind") == REFUSAL_KIND:
        _check_refusal(body, receipt_id, sha256, size)
    return ReceiptHeader(receipt_id, tenant_id, seq, prev, sha256, size)


def _check_refusal(body: Mapping[str, Any], receipt_id: str, sha256: str, size: int) -> None:
    if size != 0 or sha256 != EMPTY_BUNDLE_SHA256:
        raise MalformedError(
            "a refusal delivered nothing: its bundle must be the empty delivery",
            receipt_id=receipt_id,
        )
    refused = body.get("refused")
    rule_id = refused.get("rule_id") if isinstance(refused, dict) else None
    reason = refused.get("reason") if isinstance(refused, dict) else None
    if not isinstance(rule_id, str) or not rule_id or not isinstance(reason, str):
        raise MalformedError(
            "a refusal must name the rule that refused it (refused.rule_id, refused.reason)",
            receipt_id=receipt_id,
        )


def bundle_field(delivered: bytes) -> dict[str, object]:
    """The ``bundle`` member for the exact bytes delivered (UTF-8 of the rendered string)."""
    return {"sha256": hashlib.sha256(delivered).hexdigest(), "bytes": len(delivered)}


def check_bundle(header: ReceiptHeader, delivered: bytes) -> None:
    """Check delivered bytes against the receipt; raises `BundleMismatchError`."""
    digest = hashlib.sha256(delivered).hexdigest()
    if digest != header.bundle_sha256 or len(delivered) != header.bundle_bytes:
        raise BundleMismatchError(
            f"bundle has sha256 {digest} ({len(delivered)} bytes); the receipt records "
            f"{header.bundle_sha256} ({header.bundle_bytes} bytes)",
            receipt_id=header.receipt_id,
        )


def _text(body: Mapping[str, Any], name: str) -> str:
    value = body.get(name)
    if not isinstance(value, str) or not value:
        raise MalformedError(f"body {name} is not a non-empty string")
    return value


def _object(body: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    value = body.get(name)
    if not isinstance(value, dict):
        raise MalformedError(f"body {name} is not an object")
    return value


def _integer(obj: Mapping[str, Any], name: str, label: str, *, minimum: int) -> int:
    value = obj.get(name)
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise MalformedError(f"{label} is not an integer >= {minimum}")
    return value
