"""Receipt signing keys: loaded from the configured files, or generated once for the quickstart.

With neither `GATEWAY_RECEIPT_KEYRING` nor `GATEWAY_RECEIPT_ED25519_KEY` set, a keyring (HMAC
secret + Ed25519 public key) and the Ed25519 private key are generated into
`$GATEWAY_DATA_DIR/keys/` with mode 0600. That `keyring.json` is exactly what
`python -m receipts verify --keyring` takes.
"""

from __future__ import annotations

import logging
from pathlib import Path

from gateway.settings import Settings
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
    if not keyring_path.exists():
        keyring_path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        keyring, pem = generate_keyring("k1")
        write_private_file(private_path, pem)
        keyring.save(keyring_path)
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
