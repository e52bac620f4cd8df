"""Signing receipt bodies into DSSE envelopes, and verifying envelope signatures.

Every envelope carries two signatures over PAE(payloadType, body) (`receipts.dsse.pae`): an
HMAC-SHA256 one with the active HMAC key's per-tenant subkey, and an Ed25519 one with the
active Ed25519 key. The Ed25519 signature is what a third party checks (with a public keyring,
`Keyring.public`); the HMAC one binds the receipt to its tenant for whoever holds the secret.

`verify_envelope` accepts an envelope when all of these hold:

1. ``payloadType`` is `PAYLOAD_TYPE` (else ``malformed``);
2. it has at least one signature and no keyid twice (else ``malformed``);
3. every signature names a keyring entry (else ``unknown_key``), with one exception: a *public*
   keyring (no HMAC keys at all, see `Keyring.public`) skips ``hmac-sha256:`` signatures,
   because its holder deliberately cannot check them;
4. every signature it checks verifies with its entry's algorithm (else ``signature_mismatch``);
5. an Ed25519 signature is present, always (else ``signature_missing``): it is the signature
   nobody who verifies can forge, so no keyring and no option does without it;
6. an HMAC signature is present when the keyring holds HMAC keys (else ``signature_missing``):
   whoever can check it must, so dropping it is caught.

Keys in ``verify_only`` status verify like active ones: rotation must not orphan old receipts.
"""

from __future__ import annotations

import hashlib
import hmac

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from receipts.checkpoint import sign_checkpoint
from receipts.dsse import PAYLOAD_TYPE, Envelope, Signature, pae
from receipts.errors import (
    KeyringError,
    MalformedError,
    SignatureMismatchError,
    SignatureMissingError,
    UnknownKeyError,
)
from receipts.keyring import ED25519_PREFIX, HMAC_PREFIX, Ed25519Key, HmacKey, Keyring

__all__ = ["Signer", "verify_envelope"]


class Signer:
    """Signs receipt bodies and checkpoints with a keyring's active keys.

    ``ed25519_private_key`` is required (`KeyringError` without it: an envelope without its
    Ed25519 signature does not verify) and its public key must be the keyring's active Ed25519
    entry, so a signer can never produce signatures its own keyring does not verify. The
    parameter still admits None so that a caller holding an optional key gets that error.
    """

    def __init__(
        self, keyring: Keyring, ed25519_private_key: Ed25519PrivateKey | None = None
    ) -> None:
        hmac_key = keyring.active_hmac()
        if hmac_key is None:
            raise KeyringError("keyring has no active HMAC key to sign with")
        if ed25519_private_key is None:
            raise KeyringError(
                "signing receipts needs the Ed25519 private key: verification requires the "
                "Ed25519 signature on every receipt"
            )
        public = ed25519_private_key.public_key()
        entry = next((k for k in keyring.ed25519 if k.public_key == public), None)
        if entry is None or entry.status != "active":
            raise KeyringError("Ed25519 private key is not the keyring's active Ed25519 key")
        self._keyring = keyring
        self._hmac_key = hmac_key
        self._ed25519: tuple[Ed25519Key, Ed25519PrivateKey] = (entry, ed25519_private_key)

    @property
    def keyring(self) -> Keyring:
        return self._keyring

    @property
    def checkpoint_key_name(self) -> str:
        """The note key name checkpoints are signed under."""
        return self._ed25519[0].key_id

    def sign(self, body: bytes, tenant_id: str) -> Envelope:
        """Wrap ``body`` (bytes from `receipts.canonical.canonicalize`) in a signed envelope."""
        message = pae(PAYLOAD_TYPE, body)
        subkey = self._keyring.subkey(self._hmac_key, tenant_id)
        entry, private_key = self._ed25519
        signatures = (
            Signature(self._hmac_key.keyid, hmac.digest(subkey, message, hashlib.sha256)),
            Signature(entry.keyid, private_key.sign(message)),
        )
        return Envelope(payload=body, payload_type=PAYLOAD_TYPE, signatures=signatures)

    def sign_checkpoint(self, origin: str, size: int, root: bytes) -> str:
        """A checkpoint note for the log ``origin`` (see `receipts.checkpoint`)."""
        entry, private_key = self._ed25519
        return sign_checkpoint(origin, size, root, private_key, entry.key_id)


def verify_envelope(envelope: Envelope, tenant_id: str, keyring: Keyring) -> None:
    """Verify the envelope's signatures for ``tenant_id``; raises a `VerificationError`."""
    verified_keyids(envelope, tenant_id, keyring)


def _verify_signature(
    signature: Signature,
    key: HmacKey | Ed25519Key,
    message: bytes,
    tenant_id: str,
    keyring: Keyring,
) -> None:
    """Check one signature over the PAE `message` with the key its keyid names."""
    if isinstance(key, HmacKey):
        expected = hmac.digest(keyring.subkey(key, tenant_id), message, hashlib.sha256)
        if not hmac.compare_digest(expected, signature.sig):
            raise SignatureMismatchError(
                "HMAC signature does not verify for this tenant", keyid=signature.keyid
            )
        return
    try:
        key.public_key.verify(signature.sig, message)
    except InvalidSignature:
        raise SignatureMismatchError(
            "Ed25519 signature does not verify", keyid=signature.keyid
        ) from None


def verified_keyids(envelope: Envelope, tenant_id: str, keyring: Keyring) -> tuple[str, ...]:
    """`verify_envelope`, returning the keyids whose signatures were checked (for reports)."""
    if envelope.payload_type != PAYLOAD_TYPE:
        raise MalformedError(f"unexpected payloadType {envelope.payload_type!r}")
    keyids = [s.keyid for s in envelope.signatures]
    if not keyids:
        raise MalformedError("envelope has no signatures")
    if len(set(keyids)) != len(keyids):
        raise MalformedError("envelope signs twice with one keyid")
    message = pae(envelope.payload_type, envelope.payload)
    checked: list[str] = []
    for signature in envelope.signatures:
        key = keyring.lookup(signature.keyid)
        if key is None:
            if not keyring.hmac and signature.keyid.startswith(HMAC_PREFIX):
                continue  # public keyring: HMAC is uncheckable by design
            raise UnknownKeyError("signature by a key not in the keyring", keyid=signature.keyid)
        _verify_signature(signature, key, message, tenant_id, keyring)
        checked.append(signature.keyid)
    _require(checked, ED25519_PREFIX, "Ed25519")
    if keyring.hmac:
        _require(checked, HMAC_PREFIX, "HMAC")
    return tuple(checked)


def _require(checked: list[str], prefix: str, name: str) -> None:
    """A signature of the ``prefix`` section must be among those checked."""
    if not any(keyid.startswith(prefix) for keyid in checked):
        raise SignatureMissingError(
            f"the envelope carries no {name} signature; it is required "
            + ("always" if prefix == ED25519_PREFIX else "with a keyring holding HMAC keys"),
            algorithm=prefix.removesuffix(":"),
        )
