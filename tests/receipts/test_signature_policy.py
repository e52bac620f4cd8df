"""Which signatures verification requires, and the public keyring auditors verify with.

Regression tests for a black-box probe that found (a) ``python -m receipts verify`` accepting a
receipt whose Ed25519 signature was dropped and whose HMAC was recomputed with the secret (with
``--allow-unanchored``), and a receipt missing either signature; (b) the keyring handed to
auditors holding the HMAC secret, so that whoever verifies could forge HMACs.

Now: every receipt's Ed25519 signature is required, whatever the keyring and the flags
(``signature_missing`` when absent); its HMAC signature is required too when the keyring holds
HMAC secrets; a public keyring (`public_keyring`) holds Ed25519 public keys only and verifies
Ed25519 alone, saying so. Real cryptography throughout: the forger below computes the HMAC by
hand from the secret, as the probe did, not through `Signer`.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import stat
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from cryptography.hazmat.primitives import serialization

from receipts import (
    GENESIS_PREV,
    PAYLOAD_TYPE,
    Envelope,
    Keyring,
    KeyringError,
    Signature,
    SignatureMissingError,
    VerificationError,
    canonicalize,
    checkpoint_line,
    export_line,
    leaf_hash,
    pae,
    public_keyring,
    rotate_ed25519,
    tenant_subkey,
    verify_export,
    verify_receipt,
    write_public_file,
)
from receipts.__main__ import describe

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from tests.receipts.conftest import LogBuilder

ROOT = Path(__file__).parents[2]


def _hmac_only(body: bytes, tenant_id: str, keyring: Keyring) -> Envelope:
    """What a holder of the HMAC secret can make: a body signed with HMAC alone (by hand)."""
    key = keyring.hmac[0]
    sig = hmac.digest(tenant_subkey(key.secret, tenant_id), pae(PAYLOAD_TYPE, body), hashlib.sha256)
    return Envelope(body, PAYLOAD_TYPE, (Signature(key.keyid, sig),))


def _without(envelope: Envelope, prefix: str) -> Envelope:
    kept = tuple(s for s in envelope.signatures if not s.keyid.startswith(prefix))
    return Envelope(envelope.payload, envelope.payload_type, kept)


def _forged_export(log: LogBuilder, keyring: Keyring, start: int) -> list[str]:
    """The probe's attack on an export: from seq ``start`` on, a body edited (one exclusion
    dropped), the chain recomputed and every changed receipt signed with the HMAC secret alone;
    no end line, since the checkpoint cannot be re-signed. Everything else is consistent."""
    lines, prev = [], GENESIS_PREV
    for entry in log.entries:
        if entry.seq < start:
            envelope, leaf = entry.envelope, entry.leaf
        else:
            body: dict[str, Any] = json.loads(entry.body)
            body["log"]["prev"] = prev
            if entry.seq == start:
                body["excluded"].pop()
            payload = canonicalize(body)
            envelope, leaf = _hmac_only(payload, log.tenant_id, keyring), leaf_hash(payload)
        lines.append(export_line(envelope, entry.seq, leaf))
        prev = leaf.hex()
    return lines


def _export(log: LogBuilder, change: Any = None) -> list[str]:
    """The log's export with each envelope passed through ``change``, and its end line."""
    lines = [
        export_line(e.envelope if change is None else change(e.envelope), e.seq, e.leaf)
        for e in log.entries
    ]
    return [*lines, checkpoint_line(log.checkpoint(), len(lines))]


def _cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "receipts", *argv],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )


def _write(path: Path, lines: list[str]) -> str:
    path.write_text("".join(lines), encoding="utf-8")
    return str(path)


@pytest.fixture
def keyring_files(tmp_path: Path, keyring: Keyring) -> tuple[str, str]:
    """(full keyring file, public keyring file)."""
    full, public = tmp_path / "keyring.json", tmp_path / "keyring.public.json"
    keyring.save(full)
    write_public_file(public, public_keyring(keyring))
    return str(full), str(public)


# -- the library API ------------------------------------------------------------------------


@pytest.mark.parametrize("allow_unanchored", [True, False])
@pytest.mark.parametrize("start", [1, 3, 5])
def test_dropped_ed25519_with_recomputed_hmac_is_rejected(
    log5: LogBuilder, keyring: Keyring, start: int, *, allow_unanchored: bool
) -> None:
    forged = _forged_export(log5, keyring, start)
    for trusted in (keyring, keyring.public()):
        with pytest.raises(SignatureMissingError) as info:
            verify_export(forged, trusted, allow_unanchored=allow_unanchored)
        assert info.value.code == "signature_missing"
        assert info.value.context["algorithm"] == "ed25519"
        assert info.value.context["line"] == start
        assert info.value.context["receipt_id"] == f"rcp-acme-{start:04d}"


def test_allow_unanchored_still_accepts_a_genuine_export_without_its_end_line(
    log5: LogBuilder, keyring: Keyring
) -> None:
    """The flag keeps its one meaning: no end line. Signatures are checked all the same."""
    report = verify_export(log5.lines(), keyring, allow_unanchored=True)
    assert (report.receipts, report.checkpoint, report.hmac_checked) == (5, None, True)
    assert report.keyids == ("ed25519:e1", "hmac-sha256:k1")


def test_a_single_forged_receipt_is_rejected(log5: LogBuilder, keyring: Keyring) -> None:
    body = log5.entries[2].body.replace(b"open tickets", b"closed tickets")
    for trusted in (keyring, keyring.public()):
        with pytest.raises(SignatureMissingError):
            verify_receipt(_hmac_only(body, "acme", keyring), "acme", trusted)


@pytest.mark.parametrize("allow_unanchored", [True, False])
def test_missing_hmac_with_a_full_keyring_is_rejected(
    log5: LogBuilder, keyring: Keyring, *, allow_unanchored: bool
) -> None:
    lines = _export(log5, lambda envelope: _without(envelope, "hmac-sha256:"))
    with pytest.raises(SignatureMissingError) as info:
        verify_export(lines, keyring, allow_unanchored=allow_unanchored)
    assert (info.value.context["algorithm"], info.value.context["line"]) == ("hmac-sha256", 1)
    with pytest.raises(SignatureMissingError):
        verify_receipt(_without(log5.entries[0].envelope, "hmac-sha256:"), "acme", keyring)


def test_missing_hmac_is_not_required_by_a_public_keyring(
    log5: LogBuilder, keyring: Keyring
) -> None:
    """Its holder cannot check an HMAC, so cannot require one; the Ed25519 signature stands."""
    lines = _export(log5, lambda envelope: _without(envelope, "hmac-sha256:"))
    report = verify_export(lines, keyring.public())
    assert (report.receipts, report.hmac_checked, report.keyids) == (5, False, ("ed25519:e1",))
    assert report.unchecked_keyids == ()


@pytest.mark.parametrize("allow_unanchored", [True, False])
def test_missing_ed25519_is_rejected_with_any_keyring(
    log5: LogBuilder, keyring: Keyring, *, allow_unanchored: bool
) -> None:
    lines = _export(log5, lambda envelope: _without(envelope, "ed25519:"))
    for trusted in (keyring, keyring.public()):
        with pytest.raises(SignatureMissingError) as info:
            verify_export(lines, trusted, allow_unanchored=allow_unanchored)
        assert (info.value.context["algorithm"], info.value.context["line"]) == ("ed25519", 1)


def test_a_bad_signature_is_reported_before_a_missing_one(
    log5: LogBuilder, keyring: Keyring
) -> None:
    hmac_sig = log5.entries[0].envelope.signatures[0]
    corrupted = Signature(hmac_sig.keyid, bytes([hmac_sig.sig[0] ^ 1]) + hmac_sig.sig[1:])
    envelope = Envelope(log5.entries[0].body, PAYLOAD_TYPE, (corrupted,))
    with pytest.raises(VerificationError) as info:
        verify_receipt(envelope, "acme", keyring)
    assert info.value.code == "signature_mismatch"


def test_a_public_keyring_verifies_a_genuine_export(log5: LogBuilder, keyring: Keyring) -> None:
    public = Keyring.from_json(json.loads(public_keyring(keyring)))
    report = verify_export(_export(log5), public)
    assert (report.receipts, report.complete) == (5, True)
    assert (report.hmac_checked, report.keyids, report.unchecked_keyids) == (
        False,
        ("ed25519:e1",),
        ("hmac-sha256:k1",),
    )
    lines = describe(report)
    assert lines[1] == (
        "  signatures  ok: Ed25519 on every receipt (ed25519:e1); HMAC not checked "
        "(hmac-sha256:k1): the keyring holds no HMAC secret (a public keyring)"
    )
    full = describe(verify_export(_export(log5), keyring))
    assert (
        full[1]
        == "  signatures  ok: Ed25519 and HMAC on every receipt (ed25519:e1, hmac-sha256:k1)"
    )


def test_the_public_keyring_holds_no_secret(
    keyring: Keyring, private_key: Ed25519PrivateKey
) -> None:
    data = public_keyring(keyring)
    text = data.decode("utf-8")
    document = json.loads(text)
    assert document == {
        "version": 1,
        "hmac": [],
        "ed25519": [
            {
                "key_id": "e1",
                "public_key": base64.b64encode(
                    private_key.public_key().public_bytes(
                        serialization.Encoding.Raw, serialization.PublicFormat.Raw
                    )
                ).decode(),
                "status": "active",
            }
        ],
    }
    assert keyring.hmac  # the full one does hold secrets, and none of them is here
    for key in keyring.hmac:
        assert base64.b64encode(key.secret).decode() not in text
        assert key.secret.hex() not in text
    raw_private = private_key.private_bytes(
        serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()
    )
    assert base64.b64encode(raw_private).decode() not in text
    assert raw_private.hex() not in text
    assert "secret" not in text and "PRIVATE" not in text
    assert Keyring.from_json(document) == keyring.public()


def test_the_public_keyring_keeps_every_rotated_ed25519_key(
    log5: LogBuilder, keyring: Keyring
) -> None:
    rotated, _ = rotate_ed25519(keyring, "e2")
    document = json.loads(public_keyring(rotated))
    assert [(k["key_id"], k["status"]) for k in document["ed25519"]] == [
        ("e2", "active"),
        ("e1", "verify_only"),
    ]
    assert document["hmac"] == []
    report = verify_export(_export(log5), Keyring.from_json(document))  # signed with e1
    assert report.keyids == ("ed25519:e1",)


def test_a_keyring_without_ed25519_keys_has_no_public_keyring(keyring: Keyring) -> None:
    with pytest.raises(KeyringError):
        public_keyring(Keyring(hmac=keyring.hmac))


def test_write_public_file_is_readable_by_all_and_never_clobbers(
    tmp_path: Path, keyring: Keyring
) -> None:
    path = tmp_path / "public.json"
    write_public_file(path, public_keyring(keyring))
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    with pytest.raises(FileExistsError):
        write_public_file(path, b"{}")
    write_public_file(path, b"{}\n", overwrite=True)
    assert path.read_bytes() == b"{}\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o644


# -- python -m receipts, as a subprocess -------------------------------------------------------


@pytest.mark.parametrize("flags", [["--allow-unanchored"], []])
def test_cli_rejects_dropped_ed25519_with_recomputed_hmac(
    tmp_path: Path,
    log5: LogBuilder,
    keyring: Keyring,
    keyring_files: tuple[str, str],
    flags: list[str],
) -> None:
    export = _write(tmp_path / "forged.jsonl", _forged_export(log5, keyring, 3))
    for keyring_file in keyring_files:
        result = _cli("verify", export, "--keyring", keyring_file, *flags)
        assert result.returncode == 1, result.stdout + result.stderr
        assert result.stdout.startswith("INVALID signature_missing: "), result.stdout
        assert "algorithm=ed25519" in result.stdout
        assert "line=3" in result.stdout


def test_cli_requires_hmac_with_the_full_keyring_only(
    tmp_path: Path, log5: LogBuilder, keyring_files: tuple[str, str]
) -> None:
    full, public = keyring_files
    export = _write(
        tmp_path / "no-hmac.jsonl", _export(log5, lambda e: _without(e, "hmac-sha256:"))
    )
    result = _cli("verify", export, "--keyring", full)
    assert result.returncode == 1
    assert result.stdout.startswith("INVALID signature_missing: ")
    assert "algorithm=hmac-sha256" in result.stdout
    result = _cli("verify", export, "--keyring", public)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Ed25519 on every receipt (ed25519:e1); HMAC not checked" in result.stdout


def test_cli_rejects_missing_ed25519(
    tmp_path: Path, log5: LogBuilder, keyring_files: tuple[str, str]
) -> None:
    export = _write(tmp_path / "no-ed.jsonl", _export(log5, lambda e: _without(e, "ed25519:")))
    for keyring_file in keyring_files:
        result = _cli("verify", export, "--keyring", keyring_file, "--allow-unanchored")
        assert result.returncode == 1
        assert result.stdout.startswith("INVALID signature_missing: ")
        assert "algorithm=ed25519" in result.stdout


def test_cli_public_keyring_then_verify(
    tmp_path: Path, log5: LogBuilder, keyring: Keyring, keyring_files: tuple[str, str]
) -> None:
    """The operator derives the public keyring; the auditor verifies a genuine export with it."""
    full, _ = keyring_files
    public = tmp_path / "out" / "public.json"
    public.parent.mkdir()
    result = _cli("public-keyring", full, "-o", str(public))
    assert result.returncode == 0, result.stderr
    assert "e1 (active)" in result.stdout and "no HMAC secret" in result.stdout
    assert public.read_bytes() == public_keyring(keyring)
    assert stat.S_IMODE(public.stat().st_mode) == 0o644
    document = json.loads(public.read_text(encoding="utf-8"))
    assert document["hmac"] == []
    assert all(set(k) == {"key_id", "public_key", "status"} for k in document["ed25519"])

    export = _write(tmp_path / "export.jsonl", _export(log5))
    result = _cli("verify", export, "--keyring", str(public))
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("VALID  tenant acme: 5 receipts, seq 1..5\n")
    assert "ok: Ed25519 on every receipt (ed25519:e1); HMAC not checked" in result.stdout
    result = _cli("verify", export, "--keyring", full)
    assert "ok: Ed25519 and HMAC on every receipt" in result.stdout

    # To stdout without -o; an existing file only with --force; a key that is no keyring: 2.
    result = _cli("public-keyring", full)
    assert (result.returncode, result.stdout.encode()) == (0, public_keyring(keyring))
    result = _cli("public-keyring", full, "-o", str(public))
    assert result.returncode == 2 and "--force" in result.stderr
    assert _cli("public-keyring", full, "-o", str(public), "--force").returncode == 0
    pem = tmp_path / "ed25519.pem"
    pem.write_text("-----BEGIN PRIVATE KEY-----\n", encoding="utf-8")
    result = _cli("public-keyring", str(pem))
    assert result.returncode == 2 and result.stdout == ""
