"""Keyring format, per-tenant subkeys, signing, rotation and key files."""

from __future__ import annotations

import hashlib
import hmac
import json
import stat
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from receipts import (
    PAYLOAD_TYPE,
    Envelope,
    Keyring,
    KeyringError,
    MalformedError,
    Signature,
    SignatureMismatchError,
    SignatureMissingError,
    Signer,
    UnknownKeyError,
    canonicalize,
    generate_keyring,
    load_private_key,
    pae,
    private_key_pem,
    rotate,
    rotate_ed25519,
    tenant_subkey,
    verify_envelope,
    write_private_file,
)

BODY = canonicalize({"schema": "ctxgw.receipt/v1", "tenant_id": "acme"})


def test_subkey_is_hkdf_sha256_as_documented() -> None:
    # RFC 5869 by hand: PRK = HMAC(salt, IKM); OKM = T(1) = HMAC(PRK, info || 0x01).
    secret = bytes(range(32))
    prk = hmac.digest(b"ctxgw.receipt.v1", secret, hashlib.sha256)
    expected = hmac.digest(prk, b"tenant:acme\x01", hashlib.sha256)
    assert tenant_subkey(secret, "acme") == expected
    assert tenant_subkey(secret, "acme") != tenant_subkey(secret, "acme2")


def test_hmac_signature_is_over_pae_with_the_tenant_subkey(
    signer: Signer, keyring: Keyring
) -> None:
    envelope = signer.sign(BODY, "acme")
    assert [s.keyid for s in envelope.signatures] == ["hmac-sha256:k1", "ed25519:e1"]
    subkey = tenant_subkey(keyring.hmac[0].secret, "acme")
    assert envelope.signatures[0].sig == hmac.digest(
        subkey, pae(PAYLOAD_TYPE, BODY), hashlib.sha256
    )
    verify_envelope(envelope, "acme", keyring)


def test_json_roundtrip_and_file_load(keyring: Keyring, tmp_path: Path) -> None:
    obj = keyring.to_json()
    assert obj["version"] == 1
    assert Keyring.from_json(json.loads(json.dumps(obj))) == keyring
    path = tmp_path / "keyring.json"
    keyring.save(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert Keyring.load(path) == keyring
    with pytest.raises(FileExistsError):
        keyring.save(path)
    rotated = rotate(keyring, "k2")
    rotated.save(path, overwrite=True)
    assert Keyring.load(path) == rotated
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def _entry(key_id: str = "k1", status: str = "active", secret: bytes = b"s" * 32) -> dict[str, str]:
    import base64

    return {"key_id": key_id, "secret": base64.b64encode(secret).decode(), "status": status}


@pytest.mark.parametrize(
    "obj",
    [
        [],
        {"version": 2, "hmac": []},
        {"version": 1, "hmac": [], "extra": []},
        {"version": 1, "hmac": {}},
        {"version": 1, "hmac": [_entry(), _entry()]},
        {"version": 1, "hmac": [_entry("a"), _entry("b")]},  # two active
        {"version": 1, "hmac": [_entry(status="retired")]},
        {"version": 1, "hmac": [_entry(secret=b"short")]},
        {"version": 1, "hmac": [_entry(key_id="has space")]},
        {"version": 1, "hmac": [_entry(key_id="")]},
        {"version": 1, "hmac": [{**_entry(), "secret": "not base64!"}]},
        {"version": 1, "hmac": [{**_entry(), "note": "x"}]},
        {"version": 1, "ed25519": [{"key_id": "e", "public_key": "AAAA", "status": "active"}]},
    ],
)
def test_bad_keyrings_are_rejected(obj: object) -> None:
    with pytest.raises(KeyringError):
        Keyring.from_json(obj)


def test_load_reports_unreadable_files(tmp_path: Path) -> None:
    with pytest.raises(KeyringError):
        Keyring.load(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(KeyringError):
        Keyring.load(tmp_path / "bad.json")


def test_generate_keyring_signs_and_verifies(tmp_path: Path) -> None:
    keyring, pem = generate_keyring("k1")
    statuses = [k.status for k in keyring.hmac] + [k.status for k in keyring.ed25519]
    assert statuses == ["active", "active"]
    assert pem.startswith(b"-----BEGIN PRIVATE KEY-----")
    write_private_file(tmp_path / "ed25519.pem", pem)
    assert stat.S_IMODE((tmp_path / "ed25519.pem").stat().st_mode) == 0o600
    private_key = load_private_key((tmp_path / "ed25519.pem").read_bytes())
    envelope = Signer(keyring, private_key).sign(BODY, "acme")
    verify_envelope(envelope, "acme", keyring)
    verify_envelope(envelope, "acme", Keyring.from_json(keyring.to_json()))


def test_rotation_keeps_old_receipts_verifiable(
    keyring: Keyring, private_key: Ed25519PrivateKey
) -> None:
    old = Signer(keyring, private_key).sign(BODY, "acme")
    rotated = rotate(keyring, "k2", secret=b"\x42" * 32)
    assert [(k.key_id, k.status) for k in rotated.hmac] == [
        ("k2", "active"),
        ("k1", "verify_only"),
        ("k0", "verify_only"),
    ]
    new = Signer(rotated, private_key).sign(BODY, "acme")
    assert new.signatures[0].keyid == "hmac-sha256:k2"
    verify_envelope(old, "acme", rotated)
    verify_envelope(new, "acme", rotated)
    with pytest.raises(UnknownKeyError):
        verify_envelope(new, "acme", keyring)  # the old keyring does not know k2
    with pytest.raises(KeyringError):
        rotate(rotated, "k1")


def test_ed25519_rotation(keyring: Keyring, private_key: Ed25519PrivateKey) -> None:
    old = Signer(keyring, private_key).sign(BODY, "acme")
    rotated, pem = rotate_ed25519(keyring, "e2")
    new = Signer(rotated, load_private_key(pem)).sign(BODY, "acme")
    assert new.signatures[1].keyid == "ed25519:e2"
    verify_envelope(old, "acme", rotated)
    verify_envelope(new, "acme", rotated)
    with pytest.raises(KeyringError):
        Signer(rotated, private_key)  # e1 is verify_only now: it must not sign


def test_signer_requires_matching_keys(keyring: Keyring, private_key: Ed25519PrivateKey) -> None:
    with pytest.raises(KeyringError):
        Signer(keyring, Ed25519PrivateKey.generate())
    with pytest.raises(KeyringError):
        Signer(keyring.public(), private_key)
    # Without the Ed25519 key a signer could only make receipts that never verify.
    with pytest.raises(KeyringError, match="Ed25519 private key"):
        Signer(keyring)
    with pytest.raises(KeyringError, match="Ed25519 private key"):
        Signer(keyring, None)


def test_public_keyring_verifies_ed25519_and_skips_hmac(signer: Signer, keyring: Keyring) -> None:
    envelope = signer.sign(BODY, "acme")
    public = keyring.public()
    assert public.hmac == ()
    assert "secret" not in json.dumps(public.to_json())
    verify_envelope(envelope, "acme", public)
    hmac_only = Envelope(envelope.payload, envelope.payload_type, envelope.signatures[:1])
    # Was unknown_key ("nothing it can check"); the Ed25519 signature is now required as such.
    with pytest.raises(SignatureMissingError) as info:
        verify_envelope(hmac_only, "acme", public)
    assert info.value.context == {"algorithm": "ed25519"}


def test_verify_policy(signer: Signer, keyring: Keyring) -> None:
    envelope = signer.sign(BODY, "acme")
    hmac_sig, ed_sig = envelope.signatures

    def variant(*signatures: Signature, payload_type: str = PAYLOAD_TYPE) -> Envelope:
        return Envelope(envelope.payload, payload_type, signatures)

    verify_envelope(variant(hmac_sig, ed_sig), "acme", keyring)
    verify_envelope(variant(ed_sig, hmac_sig), "acme", keyring)  # in either order
    # Each signature alone was accepted once; a keyring that can check both requires both.
    with pytest.raises(SignatureMissingError) as info:
        verify_envelope(variant(hmac_sig), "acme", keyring)
    assert info.value.code == "signature_missing"
    assert info.value.context == {"algorithm": "ed25519"}
    with pytest.raises(SignatureMissingError) as info:
        verify_envelope(variant(ed_sig), "acme", keyring)
    assert info.value.context == {"algorithm": "hmac-sha256"}
    verify_envelope(variant(ed_sig), "acme", keyring.public())  # a public keyring: Ed25519 only
    with pytest.raises(MalformedError):
        verify_envelope(variant(), "acme", keyring)
    with pytest.raises(MalformedError):
        verify_envelope(variant(hmac_sig, hmac_sig), "acme", keyring)
    with pytest.raises(MalformedError):
        verify_envelope(variant(hmac_sig, payload_type="application/json"), "acme", keyring)
    with pytest.raises(SignatureMismatchError):
        verify_envelope(variant(hmac_sig), "globex", keyring)  # other tenant, other subkey
    with pytest.raises(UnknownKeyError):
        verify_envelope(variant(hmac_sig, Signature("rsa:x", b"")), "acme", keyring)
    # The keyid prefix names a keyring section; it cannot switch the algorithm.
    with pytest.raises(UnknownKeyError):
        verify_envelope(variant(Signature("ed25519:k1", hmac_sig.sig)), "acme", keyring)
    with pytest.raises(SignatureMismatchError):
        verify_envelope(variant(Signature("ed25519:e1", hmac_sig.sig)), "acme", keyring)


def test_private_key_helpers(private_key: Ed25519PrivateKey, tmp_path: Path) -> None:
    pem = private_key_pem(private_key)
    assert load_private_key(pem).public_key() == private_key.public_key()
    with pytest.raises(KeyringError):
        load_private_key(b"not a key")
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.serialization import (
        Encoding,
        NoEncryption,
        PrivateFormat,
    )

    other = ec.generate_private_key(ec.SECP256R1()).private_bytes(
        Encoding.PEM, PrivateFormat.PKCS8, NoEncryption()
    )
    with pytest.raises(KeyringError):
        load_private_key(other)
