"""Signing receipt bodies into DSSE envelopes, and verifying envelope signatures.

Every envelope carries an HMAC-SHA256 signature with the active HMAC key's per-tenant subkey,
and an Ed25519 signature when the signer holds the Ed25519 private key. Both cover
PAE(payloadType, body) (`receipts.dsse.pae`).

`verify_envelope` accepts an envelope when all of these hold:

1. ``payloadType`` is `PAYLOAD_TYPE` (else ``malformed``);
2. it has at least one signature and no keyid twice (else ``malformed``);
3. every signature names a keyring entry (else ``unknown_key``), with one exception: a *public*
   keyring (no HMAC keys at all, see `Keyring.public`) skips ``hmac-sha256:`` signatures,
   because its holder deliberately cannot check them;
4. every signature it checks verifies with its entry's algorithm (else ``signature_mismatch``);
5. at least one signature was checked (else ``unknown_key``).

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
    UnknownKeyError,
)
from receipts.keyring import HMAC_PREFIX, Ed25519Key, HmacKey, Keyring

__all__ = ["Signer", "verify_envelope"]


class Signer:
    """Signs receipt bodies and checkpoints with a keyring's active keys.

    ``ed25519_private_key`` is optional; when given, its public key must be the keyring's active
    Ed25519 entry, so a signer can never produce signatures its own keyring does not verify.
    """

    def __init__(
        self, keyring: Keyring, ed25519_private_key: Ed25519PrivateKey | None = None
    ) -> None:
        hmac_key = keyring.active_hmac()
        if hmac_key is None:
            raise KeyringError("keyring has no active HMAC key to sign with")
        self._keyring = keyring
        self._hmac_key = hmac_key
        self._ed25519: tuple[Ed25519Key, Ed25519PrivateKey] | None = None
        if ed25519_private_key is not None:
            public = ed25519_private_key.public_key()
            entry = next((k for k in keyring.ed25519 if k.public_key == public), None)
            if entry is None or entry.status != "active":
                raise KeyringError("Ed25519 private key is not the keyring's active Ed25519 key")
            self._ed25519 = (entry, ed25519_private_key)

    @property
    def keyring(self) -> Keyring:
        return self._keyring

    @property
    def checkpoint_key_name(self) -> str | None:
        """The note key name checkpoints are signed under, or None without an Ed25519 key."""
        return None if self._ed25519 is None else self._ed25519[0].key_id

    def sign(self, body: bytes, tenant_id: str) -> Envelope:
        """Wrap ``body`` (bytes from `receipts.canonical.canonicalize`) in a signed envelope."""
        message = pae(PAYLOAD_TYPE, body)
        subkey = self._keyring.subkey(self._hmac_key, tenant_id)
        signatures = [Signature(self._hmac_key.keyid, hmac.digest(subkey, message, hashlib.sha256))]
        if self._ed25519 is not None:
            entry, private_key = self._ed25519
            signatures.append(Signature(entry.keyid, private_key.sign(message)))
        return Envelope(payload=body, payload_type=PAYLOAD_TYPE, signatures=tuple(signatures))

    def sign_checkpoint(self, origin: str, size: int, root: bytes) -> str:
        """A checkpoint note for the log ``origin`` (see `receipts.checkpoint`)."""
        if self._ed25519 is None:
            raise KeyringError("signing checkpoints needs the Ed25519 private key")
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
    if not checked:
        raise UnknownKeyError("no signature by a key in the keyring")
    return tuple(checked)
