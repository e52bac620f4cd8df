"""Key files on disk: owner-only writes, the Ed25519 private key PEM, the public keyring.

The keyring (HMAC secrets) and the Ed25519 private key are secrets: they are written with mode
0600, created exclusively unless replacing is asked for, and never clobbered by accident. The
private key is an unencrypted PKCS#8 PEM, as ``openssl genpkey -algorithm ed25519`` writes it.

The *public* keyring (`public_keyring`) is what an operator hands to auditors: the keyring file
format of `receipts.keyring` with every Ed25519 public key (the active one and every rotated-out
one, so old receipts keep verifying) and no HMAC secret. It verifies every receipt's Ed25519
signature and every checkpoint, and cannot sign or forge anything; the full keyring stays with
the gateway. It is not secret, so `write_public_file` writes it readable by all (mode 0644),
and like a secret never over an existing file by accident.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from receipts.errors import KeyringError

if TYPE_CHECKING:
    from receipts.keyring import Keyring

__all__ = [
    "load_private_key",
    "private_key_pem",
    "public_keyring",
    "write_private_file",
    "write_public_file",
]


def private_key_pem(private_key: Ed25519PrivateKey) -> bytes:
    return private_key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def load_private_key(pem: bytes) -> Ed25519PrivateKey:
    """Load an unencrypted PKCS#8 PEM Ed25519 private key; raises `KeyringError`."""
    try:
        key = serialization.load_pem_private_key(pem, password=None)
    except (ValueError, TypeError) as exc:
        raise KeyringError(f"cannot load Ed25519 private key: {exc}") from exc
    if not isinstance(key, Ed25519PrivateKey):
        raise KeyringError("private key is not an Ed25519 key")
    return key


def public_keyring(keyring: Keyring) -> bytes:
    """The public keyring file of ``keyring``: what an auditor verifies with.

    Every Ed25519 public key with its status (``verify_only`` ones included: rotation never
    orphans old receipts), an empty ``hmac`` section, no private key: indented JSON (UTF-8, one
    trailing newline) that `Keyring.load` reads back as `Keyring.public`. Raises `KeyringError`
    when ``keyring`` holds no Ed25519 key, since every receipt's Ed25519 signature is what a
    public keyring checks and such a file would verify nothing.
    """
    public = keyring.public()
    if not public.ed25519:
        raise KeyringError("keyring holds no Ed25519 public key: a public keyring verifies nothing")
    return (json.dumps(public.to_json(), indent=2, sort_keys=True) + "\n").encode("utf-8")


def write_public_file(
    path: str | os.PathLike[str], data: bytes, *, overwrite: bool = False
) -> None:
    """Write ``data`` (a `public_keyring`) to a file anyone may read (mode 0644); otherwise as
    `write_private_file`: exclusive unless ``overwrite``, then replaced atomically."""
    _write_file(path, data, 0o644, overwrite=overwrite)


def write_private_file(
    path: str | os.PathLike[str], data: bytes, *, overwrite: bool = False
) -> None:
    """Write ``data`` to a file only its owner can read (mode 0600).

    Without ``overwrite`` the file must not exist yet (keys are generated once, never clobbered).
    With it, the content is written to a sibling temporary file and renamed into place.
    """
    _write_file(path, data, 0o600, overwrite=overwrite)


def _write_file(path: str | os.PathLike[str], data: bytes, mode: int, *, overwrite: bool) -> None:
    target = Path(path)
    tmp = target.with_name(target.name + ".tmp") if overwrite else target
    if overwrite:
        tmp.unlink(missing_ok=True)  # left behind by an interrupted earlier write
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(tmp, flags, 0o600)  # never wider than owner-only before the fchmod
    try:
        os.fchmod(fd, mode)  # the umask can only narrow the mode; make it exact
        with os.fdopen(fd, "wb", closefd=False) as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
    finally:
        os.close(fd)
    if overwrite:
        tmp.replace(target)
