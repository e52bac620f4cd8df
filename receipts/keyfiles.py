"""Key files on disk: owner-only writes and the Ed25519 private key PEM.

The keyring (HMAC secrets) and the Ed25519 private key are secrets: they are written with mode
0600, created exclusively unless replacing is asked for, and never clobbered by accident. The
private key is an unencrypted PKCS#8 PEM, as ``openssl genpkey -algorithm ed25519`` writes it.
"""

from __future__ import annotations

import os
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from receipts.errors import KeyringError

__all__ = ["load_private_key", "private_key_pem", "write_private_file"]


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


def write_private_file(
    path: str | os.PathLike[str], data: bytes, *, overwrite: bool = False
) -> None:
    """Write ``data`` to a file only its owner can read (mode 0600).

    Without ``overwrite`` the file must not exist yet (keys are generated once, never clobbered).
    With it, the content is written to a sibling temporary file and renamed into place.
    """
    target = Path(path)
    tmp = target.with_name(target.name + ".tmp") if overwrite else target
    if overwrite:
        tmp.unlink(missing_ok=True)  # left behind by an interrupted earlier write
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(tmp, flags, 0o600)
    try:
        os.fchmod(fd, 0o600)  # the umask can only narrow the mode; make it exact
        with os.fdopen(fd, "wb", closefd=False) as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
    finally:
        os.close(fd)
    if overwrite:
        tmp.replace(target)
