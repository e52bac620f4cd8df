"""Receipt signing keys: loaded from the configured files, or generated once for the quickstart.

With neither `GATEWAY_RECEIPT_KEYRING` nor `GATEWAY_RECEIPT_ED25519_KEY` set, a keyring (HMAC
secret + Ed25519 public key) and the Ed25519 private key are generated into
`$GATEWAY_DATA_DIR/keys/` with mode 0600. That `keyring.json` is exactly what
`python -m receipts verify --keyring` takes. Worker processes starting together (`serve
--workers N`) all end up with the one keyring that won the race to create the directory.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
from pathlib import Path

from gateway.shell.settings import Settings
from receipts import Keyring, Signer, generate_keyring, load_private_key, write_private_file

__all__ = ["generated_key_paths", "load_signer"]

_log = logging.getLogger(__name__)


def generated_key_paths(data_dir: Path) -> tuple[Path, Path]:
    keys = data_dir / "keys"
    return keys / "keyring.json", keys / "ed25519.pem"


def load_signer(settings: Settings) -> Signer:
    if settings.receipt_keyring is not None or settings.receipt_ed25519_key is not None:
        if settings.receipt_keyring is None:
            raise ValueError("GATEWAY_RECEIPT_ED25519_KEY needs GATEWAY_RECEIPT_KEYRING as well")
        keyring = Keyring.load(settings.receipt_keyring)
        private = (
            load_private_key(settings.receipt_ed25519_key.read_bytes())
            if settings.receipt_ed25519_key is not None
            else None
        )
        return Signer(keyring, private)
    keyring_path, private_path = generated_key_paths(settings.data_dir)
    if not keyring_path.exists() and _generated(keyring_path.parent):
        _log.warning(
            "generated receipt signing keys in %s (keyring.json verifies receipts offline: "
            "python -m receipts verify EXPORT --keyring %s); set GATEWAY_RECEIPT_KEYRING and "
            "GATEWAY_RECEIPT_ED25519_KEY to use your own",
            keyring_path.parent,
            keyring_path,
        )
    else:
        _log.info("receipt signing keys from %s", keyring_path.parent)
    return Signer(Keyring.load(keyring_path), load_private_key(private_path.read_bytes()))


def _generated(keys: Path) -> bool:
    """Generate the keys into ``keys`` unless another process gets there first (False then).

    They are written into a private staging directory that is renamed into place: the rename
    fails once ``keys`` holds files, so two processes can never each keep keys of their own.
    """
    keys.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".keys-", dir=keys.parent))  # mode 0700
    try:
        keyring, pem = generate_keyring("k1")
        write_private_file(staging / "ed25519.pem", pem)
        keyring.save(staging / "keyring.json")
        try:
            staging.rename(keys)
        except OSError as exc:
            if not (keys / "keyring.json").exists():
                raise RuntimeError(
                    f"{keys} exists but holds no keyring.json: move it away, or set "
                    "GATEWAY_RECEIPT_KEYRING and GATEWAY_RECEIPT_ED25519_KEY"
                ) from exc
            return False  # another process won: use its keys
        return True
    finally:
        shutil.rmtree(staging, ignore_errors=True)
