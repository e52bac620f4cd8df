"""The golden receipts checked into `data/`, read without a database.

`make_golden` wrote them (see its docstring for how and from which code); this module is what a
test imports to use them:

- `golden_bodies()`: (receipt_id, kind, exact signed body bytes) of every golden receipt, in log
  order: a typed decoder of receipt bodies must re-encode each one byte for byte.
- `golden_index()`: what each golden receipt is (`GoldenReceipt`).
- `golden_keyring()`: the fixed test-only keyring that signed them (HMAC secret included: it is
  test material, never a deployment's); `ED25519_PEM` is its Ed25519 private key, so that a
  gateway started on the dump signs its new receipts with the same keys.
- `dump_lines()`: the dump of every row the receipts depend on, one JSON object per line,
  ``{"table": <name>, "row": <the row as PostgreSQL's to_jsonb wrote it>}`` (`tables` loads it).
"""

from __future__ import annotations

import gzip
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from receipts import Ed25519Key, HmacKey, Keyring

__all__ = [
    "CHECKPOINT",
    "DATA",
    "DUMP",
    "DUMP_GZ",
    "ED25519_PEM",
    "INDEX",
    "KEYRING",
    "KEY_ID",
    "PUBLIC_KEYRING",
    "TENANT",
    "GoldenReceipt",
    "derived_keys",
    "dump_lines",
    "golden_bodies",
    "golden_index",
    "golden_keyring",
]

DATA: Final = Path(__file__).resolve().parent / "data"
# The dump is plain JSON lines, gzipped when it outgrows a megabyte (`make_golden` decides).
DUMP: Final = DATA / "dump.jsonl"
DUMP_GZ: Final = DATA / "dump.jsonl.gz"
INDEX: Final = DATA / "index.json"
KEYRING: Final = DATA / "keyring.json"
PUBLIC_KEYRING: Final = DATA / "keyring.public.json"
ED25519_PEM: Final = DATA / "ed25519.pem"
CHECKPOINT: Final = DATA / "checkpoint.txt"
TENANT: Final = "golden"
KEY_ID: Final = "golden-1"
# The key material is derived from these fixed labels, so that regenerating the data writes the
# same keys (and, with the generator's fixed clock and ids, the same receipts). Test-only.
_HMAC_SEED: Final = b"ctxgw golden receipts: HMAC secret (test-only, never deployed)"
_ED25519_SEED: Final = b"ctxgw golden receipts: Ed25519 seed (test-only, never deployed)"


@dataclass(frozen=True, slots=True)
class GoldenReceipt:
    """One entry of `data/index.json`."""

    receipt_id: str
    seq: int
    kind: str
    what: str  # how it was made, in words
    assembler: str | None  # the bundle's assembler version, when it has one
    layout: str | None  # the session layout, for a session context
    policy: str | None  # the policy bundle's name and mode in force, when it records one
    # What an exact replay gives: "identical", "memory_erased" (a memory it used was erased
    # since), or None where the kind is not replayed.
    replay: str | None


def derived_keys() -> tuple[Keyring, Ed25519PrivateKey]:
    """The fixed golden keyring and its Ed25519 private key, derived from fixed seeds."""
    private = Ed25519PrivateKey.from_private_bytes(hashlib.sha256(_ED25519_SEED).digest())
    keyring = Keyring(
        hmac=(HmacKey(KEY_ID, hashlib.sha256(_HMAC_SEED).digest(), "active"),),
        ed25519=(Ed25519Key(KEY_ID, private.public_key(), "active"),),
    )
    return keyring, private


def golden_keyring() -> Keyring:
    """The keyring checked in beside the receipts (HMAC secret included)."""
    return Keyring.load(KEYRING)


def dump_lines() -> list[str]:
    """The dump's lines, in load order (each a JSON object; see the module docstring)."""
    if DUMP_GZ.exists():
        with gzip.open(DUMP_GZ, "rt", encoding="utf-8") as handle:
            text = handle.read()
    else:
        text = DUMP.read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line]


def golden_index() -> list[GoldenReceipt]:
    entries = json.loads(INDEX.read_text(encoding="utf-8"))["receipts"]
    return [GoldenReceipt(**entry) for entry in entries]


def golden_bodies() -> list[tuple[str, str, bytes]]:
    """(receipt_id, kind, exact signed body bytes) of every golden receipt, in log order."""
    bodies: list[tuple[int, str, str, bytes]] = []
    for line in dump_lines():
        item = json.loads(line)
        if item["table"] != "receipts":
            continue
        row = item["row"]
        body = bytes.fromhex(row["body"].removeprefix("\\x"))
        bodies.append((row["seq"], row["receipt_id"], row["kind"], body))
    return [(receipt_id, kind, body) for _, receipt_id, kind, body in sorted(bodies)]
