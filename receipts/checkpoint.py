"""Checkpoints: the signed (origin, size, root) of a tenant's log, as a signed note.

The format is the transparency-log checkpoint (C2SP tlog-checkpoint) inside a signed note
(C2SP signed-note, Go's golang.org/x/mod/sumdb/note)::

    ctxgw/acme                                  origin: which log
    42                                          tree size, ASCII decimal, no leading zeros
    <base64 root hash>                          RFC 6962 root over the first 42 leaves
                                                blank line ends the signed text
    — k1 <base64(key hash ‖ Ed25519 signature)>  one line per signature

The signed message is the text up to and including the newline before the blank line. The
key hash is the first 4 bytes of SHA-256(name ‖ "\\n" ‖ 0x01 ‖ raw public key), 0x01 being the
note algorithm byte for Ed25519. "—" is U+2014 EM DASH. Extension lines after the root are not
produced and not accepted.

Verification follows the note rules: signatures by names the verifier does not know are
ignored, a known name whose signature fails is an error, and at least one known signature is
required. Errors: ``checkpoint_invalid`` (format, bad signature, wrong origin), ``unknown_key``
(no signature by a known key) and ``consistency_invalid`` (see `verify_checkpoint_consistency`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from receipts.dsse import b64decode, b64encode
from receipts.errors import (
    CheckpointInvalidError,
    ConsistencyInvalidError,
    MalformedError,
    UnknownKeyError,
)
from receipts.merkle import HASH_SIZE
from receipts.proof_verification import verify_consistency

__all__ = [
    "Checkpoint",
    "log_origin",
    "open_note",
    "parse_checkpoint",
    "sign_checkpoint",
    "sign_note",
    "verify_checkpoint",
    "verify_checkpoint_consistency",
]

_ED25519_ALG: Final = b"\x01"  # signed-note algorithm identifier for Ed25519
_SIG_PREFIX: Final = "\u2014 "
_SIZE: Final = re.compile(r"0|[1-9][0-9]{0,18}")
_KEY_NAME: Final = re.compile(r"[^\s+]+")
_MAX_SIZE: Final = 2**63 - 1


@dataclass(frozen=True, slots=True)
class Checkpoint:
    origin: str
    size: int
    root: bytes


def log_origin(tenant_id: str, prefix: str = "ctxgw") -> str:
    """The origin line of a tenant's log, e.g. ``ctxgw/acme``."""
    origin = f"{prefix}/{tenant_id}"
    _check_origin(origin)
    return origin


def sign_checkpoint(
    origin: str, size: int, root: bytes, private_key: Ed25519PrivateKey, key_name: str
) -> str:
    """The signed-note text of a checkpoint. Ed25519 is deterministic: same input, same text."""
    _check_origin(origin)
    if not 0 <= size <= _MAX_SIZE:
        raise ValueError(f"tree size {size} out of range")
    if len(root) != HASH_SIZE:
        raise ValueError("root hash must be 32 bytes")
    return sign_note(f"{origin}\n{size}\n{b64encode(root)}\n", private_key, key_name)


def sign_note(text: str, private_key: Ed25519PrivateKey, key_name: str) -> str:
    """A signed note of ``text`` (non-empty lines, ending in a newline) with one signature."""
    if not _KEY_NAME.fullmatch(key_name):
        raise ValueError(f"invalid note key name {key_name!r}")
    if not text.endswith("\n") or "\n\n" in text or _has_controls(text):
        raise ValueError("note text must be non-empty lines, each ending in a newline")
    signature = private_key.sign(text.encode("utf-8"))
    line = b64encode(_key_hash(key_name, private_key.public_key()) + signature)
    return f"{text}\n{_SIG_PREFIX}{key_name} {line}\n"


def open_note(note: str, public_keys: Mapping[str, Ed25519PublicKey]) -> str:
    """Verify a signed note and return its text; raises `CheckpointInvalidError`/`UnknownKeyError`.

    Signatures by names not in ``public_keys`` (or with another key hash) are ignored; a known
    key whose signature fails is an error; at least one known signature must verify.
    """
    text, signatures = _split_note(note)
    message = text.encode("utf-8")
    verified = 0
    for name, key_hash, signature in signatures:
        public_key = public_keys.get(name)
        if public_key is None or _key_hash(name, public_key) != key_hash:
            continue  # a signer this verifier does not know: ignored, as in the note spec
        try:
            public_key.verify(signature, message)
        except InvalidSignature:
            raise CheckpointInvalidError("note signature does not verify", key_name=name) from None
        verified += 1
    if not verified:
        raise UnknownKeyError("note carries no signature by a known key")
    return text


def parse_checkpoint(text: str) -> Checkpoint:
    """Parse a checkpoint note WITHOUT checking signatures. Raises `CheckpointInvalidError`."""
    body, _ = _split_note(text)
    return _parse_body(body)


def verify_checkpoint(
    text: str, public_keys: Mapping[str, Ed25519PublicKey], *, origin: str | None = None
) -> Checkpoint:
    """Verify a checkpoint note against ``public_keys`` (note key name -> key) and parse it.

    With ``origin`` the checkpoint must belong to that log. Raises `CheckpointInvalidError` or
    `UnknownKeyError`.
    """
    checkpoint = _parse_body(open_note(text, public_keys))
    if origin is not None and checkpoint.origin != origin:
        raise CheckpointInvalidError(
            f"checkpoint is for log {checkpoint.origin!r}, expected {origin!r}"
        )
    return checkpoint


def verify_checkpoint_consistency(
    old_text: str,
    new_text: str,
    proof: Sequence[bytes],
    public_keys: Mapping[str, Ed25519PublicKey],
) -> None:
    """Verify both checkpoints and that the newer log extends the older one (RFC 9162 §2.1.4).

    Catches a rollback (an old checkpoint presented as the newest) and a fork (two different
    logs under one origin). Raises `ConsistencyInvalidError` or a checkpoint error.
    """
    old = verify_checkpoint(old_text, public_keys)
    new = verify_checkpoint(new_text, public_keys, origin=old.origin)
    if new.size < old.size:
        raise ConsistencyInvalidError(
            f"checkpoint of size {new.size} presented as newer than one of size {old.size}"
        )
    verify_consistency(old.size, new.size, old.root, new.root, proof)


def _split_note(text: str) -> tuple[str, list[tuple[str, bytes, bytes]]]:
    if _has_controls(text):
        raise CheckpointInvalidError("note contains control characters")
    split = text.rfind("\n\n")
    if split < 0:
        raise CheckpointInvalidError("checkpoint has no signature block")
    body, block = text[: split + 1], text[split + 2 :]
    if not block.endswith("\n"):
        raise CheckpointInvalidError("signature block does not end in a newline")
    signatures: list[tuple[str, bytes, bytes]] = []
    for line in block[:-1].split("\n"):
        name, _, encoded = line.removeprefix(_SIG_PREFIX).partition(" ")
        if not line.startswith(_SIG_PREFIX) or not _KEY_NAME.fullmatch(name):
            raise CheckpointInvalidError("malformed checkpoint signature line")
        try:
            raw = b64decode(encoded, "checkpoint signature")
        except MalformedError as exc:
            raise CheckpointInvalidError(exc.message) from None
        if len(raw) <= 4:
            raise CheckpointInvalidError("checkpoint signature too short")
        signatures.append((name, raw[:4], raw[4:]))
    return body, signatures


def _parse_body(body: str) -> Checkpoint:
    lines = body.split("\n")
    if len(lines) != 4 or lines[3] != "":
        raise CheckpointInvalidError("checkpoint text must be exactly origin, size and root")
    origin, size_text, root_text, _ = lines
    if not origin:
        raise CheckpointInvalidError("checkpoint origin is empty")
    if not _SIZE.fullmatch(size_text) or int(size_text) > _MAX_SIZE:
        raise CheckpointInvalidError(f"checkpoint size {size_text!r} is not a decimal integer")
    try:
        root = b64decode(root_text, "checkpoint root")
    except MalformedError as exc:
        raise CheckpointInvalidError(exc.message) from None
    if len(root) != HASH_SIZE:
        raise CheckpointInvalidError("checkpoint root is not a 32-byte hash")
    return Checkpoint(origin=origin, size=int(size_text), root=root)


def _key_hash(name: str, public_key: Ed25519PublicKey) -> bytes:
    raw = public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(name.encode("utf-8") + b"\n" + _ED25519_ALG + raw).digest()[:4]


def _has_controls(text: str) -> bool:
    """Control characters other than newline, which notes forbid (C2SP signed-note)."""
    return any((ch < " " and ch != "\n") or ch == "\x7f" for ch in text)


def _check_origin(origin: str) -> None:
    if not origin or "\n" in origin or _has_controls(origin):
        raise ValueError(f"invalid checkpoint origin {origin!r}")
