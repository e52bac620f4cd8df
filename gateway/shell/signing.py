"""Receipt signing keys: loaded from the configured files, or generated once for the quickstart.

With neither `GATEWAY_RECEIPT_KEYRING` nor `GATEWAY_RECEIPT_ED25519_KEY` set, a keyring (HMAC
secret + Ed25519 public key) and the Ed25519 private key are generated into
`$GATEWAY_DATA_DIR/keys/` with mode 0600. The keyring stays with the gateway (its HMAC secret
could forge HMACs); auditors verify with its public form (`ctxgw keys export-public`, or
`python -m receipts public-keyring`), which `python -m receipts verify --keyring` takes. Worker
processes starting together (`serve --workers N`) all end up with the one keyring that won the
race to create the directory.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
from pathlib import Path

from gateway.shell.settings import Settings
from receipts import Keyring, Signer, generate_keyring, load_private_key, write_private_file

__all__ = ["generated_key_paths", "keyring_path", "load_signer"]

_log = logging.getLogger(__name__)


def generated_key_paths(data_dir: Path) -> tuple[Path, Path]:
    keys = data_dir / "keys"
    return keys / "keyring.json", keys / "ed25519.pem"


def keyring_path(settings: Settings) -> Path:
    """Where the gateway's receipt keyring is: the configured file, or the generated one."""
    return settings.receipt_keyring or generated_key_paths(settings.data_dir)[0]


def load_signer(settings: Settings) -> Signer:
    if settings.receipt_keyring is not None or settings.receipt_ed25519_key is not None:
        # Every receipt carries an Ed25519 signature (offline verification requires one), so
        # a configured keyring comes with its private key.
        if settings.receipt_keyring is None or settings.receipt_ed25519_key is None:
            raise ValueError(
                "GATEWAY_RECEIPT_KEYRING and GATEWAY_RECEIPT_ED25519_KEY are set together"
            )
        keyring = Keyring.load(settings.receipt_keyring)
        private = load_private_key(settings.receipt_ed25519_key.read_bytes())
        return Signer(keyring, private)
    generated, private_path = generated_key_paths(settings.data_dir)
    if not generated.exists() and _generated(generated.parent):
        _log.warning(
            "generated receipt signing keys in %s (auditors verify receipts offline with the "
            "public keyring: ctxgw keys export-public -o keyring.public.json, then python -m "
            "receipts verify EXPORT --keyring keyring.public.json); set GATEWAY_RECEIPT_KEYRING "
            "and GATEWAY_RECEIPT_ED25519_KEY to use your own",
            generated.parent,
        )
    else:
        _log.info("receipt signing keys from %s", generated.parent)
    return Signer(Keyring.load(generated), load_private_key(private_path.read_bytes()))


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
