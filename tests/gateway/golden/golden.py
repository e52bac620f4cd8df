"""The golden receipts checked in, read without a database: two sets, each a directory
`make_golden` wrote with one commit's code (see its docstring for how), each read the same way.

- `data/` (`FIRST`), made at 58a830a: bundles of the four assemblers and session contexts of the
  four layouts that commit had;
- `data_d3b27ee/` (`NEWEST`), made at d3b27ee: a bundle of every assembler and a session
  context of every layout that commit replays.

What a test imports to use a set (`GoldenSet`, every one in `SETS`, oldest first):

- `golden_bodies(golden)`: (receipt_id, kind, exact signed body bytes) of every golden receipt,
  in log order: a typed decoder of receipt bodies must re-encode each one byte for byte.
- `golden_index(golden)`: what each golden receipt is (`GoldenReceipt`); `made_from(golden)`:
  the commit that made them.
- `golden_keyring(golden)`: the fixed test-only keyring that signed them (HMAC secret included:
  it is test material, never a deployment's); `GoldenSet.ed25519_pem` is its Ed25519 private
  key, so that a gateway started on the dump signs its new receipts with the same keys. Every set
  has the same keys (`derived_keys`).
- `dump_lines(golden)`: the dump of every row the receipts depend on, one JSON object per line,
  ``{"table": <name>, "row": <the row as PostgreSQL's to_jsonb wrote it>}`` (`tables` loads it).
"""

from __future__ import annotations

import gzip
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from receipts import Ed25519Key, HmacKey, Keyring

__all__ = [
    "FIRST",
    "KEY_ID",
    "NEWEST",
    "SETS",
    "TENANT",
    "GoldenReceipt",
    "GoldenSet",
    "derived_keys",
    "dump_lines",
    "golden_bodies",
    "golden_index",
    "golden_keyring",
    "made_from",
]

TENANT: Final = "golden"
KEY_ID: Final = "golden-1"
# The key material is derived from these fixed labels, so that regenerating the data writes the
# same keys (and, with the generator's fixed clock and ids, the same receipts). Test-only.
_HMAC_SEED: Final = b"ctxgw golden receipts: HMAC secret (test-only, never deployed)"
_ED25519_SEED: Final = b"ctxgw golden receipts: Ed25519 seed (test-only, never deployed)"


@dataclass(frozen=True, slots=True)
class GoldenSet:
    """A golden data set: the directory `make_golden` wrote, and the commit whose code wrote it
    (abbreviated; `made_from` reads it whole from the index)."""

    directory: Path
    commit: str

    @property
    def name(self) -> str:
        return self.directory.name

    # The dump is plain JSON lines, gzipped when it outgrows a megabyte (`make_golden` decides).
    @property
    def dump(self) -> Path:
        return self.directory / "dump.jsonl"

    @property
    def dump_gz(self) -> Path:
        return self.directory / "dump.jsonl.gz"

    @property
    def index(self) -> Path:
        return self.directory / "index.json"

    @property
    def keyring(self) -> Path:
        return self.directory / "keyring.json"

    @property
    def public_keyring(self) -> Path:
        return self.directory / "keyring.public.json"

    @property
    def ed25519_pem(self) -> Path:
        return self.directory / "ed25519.pem"

    @property
    def checkpoint(self) -> Path:
        return self.directory / "checkpoint.txt"


_HERE: Final = Path(__file__).resolve().parent
# Golden data comes from the code before the change it checks: each set from the commit it names.
# The first, from the last commit before receipt bodies were built from typed Structs (0f77e8b).
FIRST: Final = GoldenSet(_HERE / "data", "58a830a")
# The newest, from the first commit whose scenario read every assembler from the registry: a
# bundle of each of the fourteen it lists.
NEWEST: Final = GoldenSet(_HERE / "data_d3b27ee", "d3b27ee")
SETS: Final = (FIRST, NEWEST)


@dataclass(frozen=True, slots=True)
class GoldenReceipt:
    """One entry of a set's `index.json`."""

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


def golden_keyring(golden: GoldenSet) -> Keyring:
    """The keyring checked in beside the receipts (HMAC secret included)."""
    return Keyring.load(golden.keyring)


def dump_lines(golden: GoldenSet) -> list[str]:
    """The dump's lines, in load order (each a JSON object; see the module docstring)."""
    if golden.dump_gz.exists():
        with gzip.open(golden.dump_gz, "rt", encoding="utf-8") as handle:
            text = handle.read()
    else:
        text = golden.dump.read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line]


def _index(golden: GoldenSet) -> dict[str, Any]:
    index: dict[str, Any] = json.loads(golden.index.read_text(encoding="utf-8"))
    return index


def golden_index(golden: GoldenSet) -> list[GoldenReceipt]:
    return [GoldenReceipt(**entry) for entry in _index(golden)["receipts"]]


def made_from(golden: GoldenSet) -> str:
    """The commit whose code made the set, as its index names it (`make_golden`)."""
    return str(_index(golden)["made_from"])


def golden_bodies(golden: GoldenSet) -> list[tuple[str, str, bytes]]:
    """(receipt_id, kind, exact signed body bytes) of every golden receipt, in log order."""
    bodies: list[tuple[int, str, str, bytes]] = []
    for line in dump_lines(golden):
        item = json.loads(line)
        if item["table"] != "receipts":
            continue
        row = item["row"]
        body = bytes.fromhex(row["body"].removeprefix("\\x"))
        bodies.append((row["seq"], row["receipt_id"], row["kind"], body))
    return [(receipt_id, kind, body) for _, receipt_id, kind, body in sorted(bodies)]
