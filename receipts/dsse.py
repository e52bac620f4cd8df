"""DSSE v1 envelopes around receipt bodies (https://github.com/secure-systems-lab/dsse).

Signatures cover PAE(payloadType, payload), never the payload alone, so a signature cannot be
replayed under another type:

    PAE(type, body) = "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body

with LEN the byte length as ASCII decimal without leading zeros and SP one space (DSSE
protocol.md). The JSON form is the standard DSSE envelope::

    {"payload": "<base64 body>",
     "payloadType": "application/vnd.ctxgw.receipt.v1+json",
     "signatures": [{"keyid": "hmac-sha256:k1", "sig": "<base64>"}, ...]}

Base64 is the standard alphabet with padding when written; the URL-safe alphabet is accepted on
read, as the DSSE spec allows. The ``keyid`` is a name, not an instruction: the keyring resolves
it to one entry and that entry fixes the algorithm (see `receipts.keyring`).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from receipts.errors import MalformedError

__all__ = ["PAYLOAD_TYPE", "Envelope", "Signature", "b64decode", "b64encode", "pae"]

PAYLOAD_TYPE: Final = "application/vnd.ctxgw.receipt.v1+json"
_URLSAFE_TO_STANDARD: Final = str.maketrans("-_", "+/")


def pae(payload_type: str, payload: bytes) -> bytes:
    """The DSSE v1 Pre-Authentication Encoding: the exact bytes every signature covers."""
    type_bytes = payload_type.encode("utf-8")
    return b"DSSEv1 %d %b %d %b" % (len(type_bytes), type_bytes, len(payload), payload)


@dataclass(frozen=True, slots=True)
class Signature:
    keyid: str
    sig: bytes


@dataclass(frozen=True, slots=True)
class Envelope:
    """A DSSE envelope. ``payload`` is the raw body bytes (base64 only in JSON)."""

    payload: bytes
    payload_type: str
    signatures: tuple[Signature, ...]

    def to_json(self) -> dict[str, object]:
        """The standard DSSE JSON object (serialize it with `receipts.canonical.canonicalize`)."""
        return {
            "payload": b64encode(self.payload),
            "payloadType": self.payload_type,
            "signatures": [{"keyid": s.keyid, "sig": b64encode(s.sig)} for s in self.signatures],
        }

    @classmethod
    def from_json(cls, obj: object) -> Envelope:
        """Parse a DSSE JSON object; raises `MalformedError` on any deviation from the shape."""
        if not isinstance(obj, Mapping):
            raise MalformedError("envelope is not a JSON object")
        _exact_keys(obj, {"payload", "payloadType", "signatures"}, "envelope")
        payload_type = obj["payloadType"]
        if not isinstance(payload_type, str):
            raise MalformedError("envelope payloadType is not a string")
        raw_signatures = obj["signatures"]
        if not isinstance(raw_signatures, list):
            raise MalformedError("envelope signatures is not a list")
        signatures: list[Signature] = []
        for raw in raw_signatures:
            if not isinstance(raw, Mapping):
                raise MalformedError("envelope signature is not a JSON object")
            _exact_keys(raw, {"keyid", "sig"}, "signature")
            keyid = raw["keyid"]
            if not isinstance(keyid, str):
                raise MalformedError("signature keyid is not a string")
            signatures.append(Signature(keyid=keyid, sig=b64decode(raw["sig"], "signature sig")))
        return cls(
            payload=b64decode(obj["payload"], "envelope payload"),
            payload_type=payload_type,
            signatures=tuple(signatures),
        )


def b64encode(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def b64decode(text: object, what: str) -> bytes:
    """Decode standard or URL-safe base64; raises `MalformedError` naming ``what``."""
    if not isinstance(text, str):
        raise MalformedError(f"{what} is not a base64 string")
    try:
        return base64.b64decode(text.translate(_URLSAFE_TO_STANDARD).encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError) as exc:
        raise MalformedError(f"{what} is not valid base64") from exc


def _exact_keys(obj: Mapping[object, object], expected: set[str], what: str) -> None:
    keys = set(obj)
    if keys != expected:
        missing = sorted(expected - keys)
        extra = sorted(str(k) for k in keys - expected)
        raise MalformedError(f"{what} keys: missing {missing}, unexpected {extra}")
