"""Receipt keys: the keyring file, per-tenant HMAC subkeys, Ed25519 keys, generation and rotation.

Keyring file (JSON, UTF-8; it holds secrets, so it is written with mode 0600)::

    {
      "version": 1,
      "hmac": [
        {"key_id": "k2", "secret": "<base64, >= 32 random bytes>", "status": "active"},
        {"key_id": "k1", "secret": "<base64>", "status": "verify_only"}
      ],
      "ed25519": [
        {"key_id": "k1", "public_key": "<base64, raw 32-byte public key>", "status": "active"}
      ]
    }

- ``key_id``: 1-64 characters of ``[A-Za-z0-9._-]``, starting alphanumeric, unique per section.
- ``status``: ``active`` (signs new receipts; at most one per section) or ``verify_only`` (a
  rotated-out key that still verifies old receipts). Rotation never deletes a key.
- Either section may be empty or absent. A keyring without HMAC keys is a *public* keyring
  (`Keyring.public`; its file is `receipts.keyfiles.public_keyring`): third parties verify
  Ed25519 signatures and checkpoints with it and never see a secret. Hand auditors that one:
  whoever holds an HMAC secret can forge HMAC signatures.
- Verification requires a receipt's Ed25519 signature with any keyring, and its HMAC signature
  too with a keyring that holds HMAC keys (`receipts.signing`).
- The Ed25519 *private* key is not in the keyring: it is a separate unencrypted PKCS#8 PEM file
  (mode 0600), see `receipts.keyfiles`.

In a DSSE envelope a signature's ``keyid`` is ``"hmac-sha256:<key_id>"`` or
``"ed25519:<key_id>"``. The prefix only names the section; the algorithm used to verify is the one
of the keyring entry the full keyid resolves to, never something the envelope chooses.

HMAC signatures use a per-tenant subkey, so one tenant's receipts can never verify as another's:

    subkey = HKDF-SHA256(IKM = secret, salt = b"ctxgw.receipt.v1",
                         info = b"tenant:" + UTF-8(tenant_id), L = 32)     (RFC 5869)

Checkpoints (signed notes) are signed with the Ed25519 key under its ``key_id`` as the note's
key name, so `Keyring.checkpoint_keys` is what `receipts.checkpoint.verify_checkpoint` takes.

Randomness is used only by `generate_keyring`, `rotate` and `rotate_ed25519`.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Final, Literal

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from receipts.dsse import b64decode, b64encode
from receipts.errors import KeyringError, MalformedError
from receipts.keyfiles import private_key_pem, write_private_file

__all__ = [
    "ED25519_PREFIX",
    "HMAC_PREFIX",
    "Ed25519Key",
    "HmacKey",
    "KeyStatus",
    "Keyring",
    "generate_keyring",
    "rotate",
    "rotate_ed25519",
    "tenant_subkey",
]

KeyStatus = Literal["active", "verify_only"]
HMAC_PREFIX: Final = "hmac-sha256:"
ED25519_PREFIX: Final = "ed25519:"
KEYRING_VERSION: Final = 1
HKDF_SALT: Final = b"ctxgw.receipt.v1"
HMAC_SECRET_MIN: Final = 32  # RFC 2104 §3: at least the hash output length
_KEY_ID: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_STATUSES: Final = ("active", "verify_only")


def tenant_subkey(secret: bytes, tenant_id: str) -> bytes:
    """The per-tenant HMAC key: HKDF-SHA256(secret, salt, b"tenant:" + tenant_id) (RFC 5869)."""
    hkdf = HKDF(
        algorithm=hashes.SHA256(), length=32, salt=HKDF_SALT, info=b"tenant:" + tenant_id.encode()
    )
    return hkdf.derive(secret)


@dataclass(frozen=True, slots=True)
class HmacKey:
    key_id: str
    secret: bytes = field(repr=False)
    status: KeyStatus

    @property
    def keyid(self) -> str:
        return HMAC_PREFIX + self.key_id


@dataclass(frozen=True, slots=True)
class Ed25519Key:
    key_id: str
    public_key: Ed25519PublicKey
    status: KeyStatus

    @property
    def keyid(self) -> str:
        return ED25519_PREFIX + self.key_id

    @property
    def raw(self) -> bytes:
        return self.public_key.public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw
        )


@dataclass(frozen=True)
class Keyring:
    """Trust material for signing and verifying receipts. Build with `from_json` or `load`."""

    hmac: tuple[HmacKey, ...] = ()
    ed25519: tuple[Ed25519Key, ...] = ()
    _subkeys: dict[tuple[str, str], bytes] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        for section in (self.hmac, self.ed25519):
            ids = [key.key_id for key in section]
            for key_id in ids:
                if not _KEY_ID.fullmatch(key_id):
                    raise KeyringError(f"invalid key_id {key_id!r}")
            if len(set(ids)) != len(ids):
                raise KeyringError("duplicate key_id in keyring")
            if sum(key.status == "active" for key in section) > 1:
                raise KeyringError("more than one active key in a keyring section")
        for hmac_key in self.hmac:
            if len(hmac_key.secret) < HMAC_SECRET_MIN:
                raise KeyringError(f"HMAC secret {hmac_key.key_id!r} is shorter than 32 bytes")

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Keyring:
        try:
            obj = json.loads(Path(path).read_bytes())
        except (OSError, ValueError) as exc:
            raise KeyringError(f"cannot read keyring {os.fspath(path)}: {exc}") from exc
        return cls.from_json(obj)

    @classmethod
    def from_json(cls, obj: object) -> Keyring:
        if not isinstance(obj, dict):
            raise KeyringError("keyring is not a JSON object")
        unknown = set(obj) - {"version", "hmac", "ed25519"}
        if unknown:
            raise KeyringError(f"unknown keyring fields {sorted(unknown)}")
        if obj.get("version") != KEYRING_VERSION:
            raise KeyringError(f"unsupported keyring version {obj.get('version')!r}")
        try:
            hmac_keys = tuple(
                HmacKey(_text(e, "key_id"), b64decode(e.get("secret"), "secret"), _status(e))
                for e in _entries(obj, "hmac", {"key_id", "secret", "status"})
            )
            ed_keys = tuple(
                Ed25519Key(_text(e, "key_id"), _public_key(e), _status(e))
                for e in _entries(obj, "ed25519", {"key_id", "public_key", "status"})
            )
        except MalformedError as exc:
            raise KeyringError(f"keyring: {exc.message}") from exc
        return cls(hmac=hmac_keys, ed25519=ed_keys)

    def to_json(self) -> dict[str, object]:
        return {
            "version": KEYRING_VERSION,
            "hmac": [
                {"key_id": k.key_id, "secret": b64encode(k.secret), "status": k.status}
                for k in self.hmac
            ],
            "ed25519": [
                {"key_id": k.key_id, "public_key": b64encode(k.raw), "status": k.status}
                for k in self.ed25519
            ],
        }

    def save(self, path: str | os.PathLike[str], *, overwrite: bool = False) -> None:
        """Write the keyring as indented JSON with mode 0600 (see `write_private_file`)."""
        text = json.dumps(self.to_json(), indent=2, sort_keys=True) + "\n"
        write_private_file(path, text.encode("utf-8"), overwrite=overwrite)

    def public(self) -> Keyring:
        """This keyring without HMAC secrets, every Ed25519 key kept: safe to hand to
        third-party verifiers (written as a file by `receipts.keyfiles.public_keyring`)."""
        return Keyring(ed25519=self.ed25519)

    def lookup(self, keyid: str) -> HmacKey | Ed25519Key | None:
        """The entry an envelope ``keyid`` names, or None."""
        section: tuple[HmacKey, ...] | tuple[Ed25519Key, ...]
        if keyid.startswith(HMAC_PREFIX):
            section, key_id = self.hmac, keyid.removeprefix(HMAC_PREFIX)
        elif keyid.startswith(ED25519_PREFIX):
            section, key_id = self.ed25519, keyid.removeprefix(ED25519_PREFIX)
        else:
            return None
        return next((key for key in section if key.key_id == key_id), None)

    def active_hmac(self) -> HmacKey | None:
        return next((key for key in self.hmac if key.status == "active"), None)

    def checkpoint_keys(self) -> dict[str, Ed25519PublicKey]:
        """Note key name -> public key, for verifying checkpoints."""
        return {key.key_id: key.public_key for key in self.ed25519}

    def subkey(self, key: HmacKey, tenant_id: str) -> bytes:
        """`tenant_subkey` of ``key`` for ``tenant_id``, cached (verifying an export re-derives)."""
        cache_key = (key.key_id, tenant_id)
        cached = self._subkeys.get(cache_key)
        if cached is None:
            if len(self._subkeys) >= 65536:
                self._subkeys.clear()
            cached = self._subkeys[cache_key] = tenant_subkey(key.secret, tenant_id)
        return cached


def generate_keyring(key_id: str) -> tuple[Keyring, bytes]:
    """A fresh keyring (HMAC + Ed25519, both active under ``key_id``) and the Ed25519 PEM."""
    private_key = Ed25519PrivateKey.generate()
    keyring = Keyring(
        hmac=(HmacKey(key_id, os.urandom(32), "active"),),
        ed25519=(Ed25519Key(key_id, private_key.public_key(), "active"),),
    )
    return keyring, private_key_pem(private_key)


def rotate(keyring: Keyring, new_key_id: str, *, secret: bytes | None = None) -> Keyring:
    """Add a new active HMAC key; the previously active one becomes ``verify_only``."""
    if any(key.key_id == new_key_id for key in keyring.hmac):
        raise KeyringError(f"HMAC key_id {new_key_id!r} already exists")
    demoted = tuple(replace(key, status="verify_only") for key in keyring.hmac)
    fresh = HmacKey(new_key_id, os.urandom(32) if secret is None else secret, "active")
    return Keyring(hmac=(fresh, *demoted), ed25519=keyring.ed25519)


def rotate_ed25519(keyring: Keyring, new_key_id: str) -> tuple[Keyring, bytes]:
    """Add a new active Ed25519 key (returned as PEM); the old public key stays verify-only."""
    if any(key.key_id == new_key_id for key in keyring.ed25519):
        raise KeyringError(f"Ed25519 key_id {new_key_id!r} already exists")
    private_key = Ed25519PrivateKey.generate()
    demoted = tuple(replace(key, status="verify_only") for key in keyring.ed25519)
    fresh = Ed25519Key(new_key_id, private_key.public_key(), "active")
    return Keyring(hmac=keyring.hmac, ed25519=(fresh, *demoted)), private_key_pem(private_key)


def _entries(obj: dict[str, object], section: str, keys: set[str]) -> list[dict[str, object]]:
    entries = obj.get(section, [])
    if not isinstance(entries, list):
        raise KeyringError(f"keyring {section!r} is not a list")
    for entry in entries:
        if not isinstance(entry, dict) or set(entry) != keys:
            raise KeyringError(f"keyring {section!r} entries need exactly {sorted(keys)}")
    return entries


def _text(entry: dict[str, object], name: str) -> str:
    value = entry[name]
    if not isinstance(value, str):
        raise KeyringError(f"keyring {name} is not a string")
    return value


def _status(entry: dict[str, object]) -> KeyStatus:
    status = entry["status"]
    if status == "active":
        return "active"
    if status == "verify_only":
        return "verify_only"
    raise KeyringError(f"keyring status must be one of {_STATUSES}, not {status!r}")


def _public_key(entry: dict[str, object]) -> Ed25519PublicKey:
    raw = b64decode(entry["public_key"], "public_key")
    if len(raw) != 32:
        raise KeyringError("Ed25519 public_key must be 32 raw bytes")
    return Ed25519PublicKey.from_public_bytes(raw)
