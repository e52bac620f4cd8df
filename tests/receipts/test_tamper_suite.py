"""The tamper suite of issue 5: every manipulation is detected, with its stable code.

Each test starts from a valid export of tenant ``acme`` (receipts signed with HMAC + Ed25519,
checkpoint at the end), applies one manipulation the way an attacker with write access to the
store or the export file could, and asserts the code `verify_export` raises.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest

from receipts import (
    Envelope,
    Keyring,
    Signer,
    VerificationError,
    canonicalize,
    checkpoint_line,
    export_line,
    leaf_hash,
    sign_checkpoint,
    verify_checkpoint_consistency,
    verify_export,
)
from receipts.dsse import Signature

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from tests.receipts.conftest import Entry, LogBuilder


def _code(lines: list[str], keyring: Keyring, **kwargs: Any) -> str:
    """The code a tampered export fails with; one without its end line is let through that
    check (test_export_verify covers it), so that each tamper is caught by its own."""
    with pytest.raises(VerificationError) as info:
        verify_export(lines, keyring, **({"allow_unanchored": True} | kwargs))
    return info.value.code


def _edited(entry: Entry, edit: Callable[[dict[str, Any]], None]) -> bytes:
    body = json.loads(entry.body)
    edit(body)
    return canonicalize(body)


def _swap_payload(log: LogBuilder, index: int, payload: bytes) -> list[str]:
    """The export with receipt ``index`` carrying ``payload`` under its old signatures."""
    entry = log.entries[index]
    forged = Envelope(payload, entry.envelope.payload_type, entry.envelope.signatures)
    lines = log.lines(checkpoint=log.checkpoint())
    lines[index] = export_line(forged, entry.seq, leaf_hash(payload))
    return lines


def test_untampered_export_verifies(log5: LogBuilder, keyring: Keyring) -> None:
    verify_export(log5.lines(checkpoint=log5.checkpoint()), keyring)


def test_changed_byte_in_body(log5: LogBuilder, keyring: Keyring) -> None:
    payload = log5.entries[2].body.replace(b"open tickets", b"open tickeTs")
    assert _code(_swap_payload(log5, 2, payload), keyring) == "signature_mismatch"


def test_every_single_byte_change_is_detected(log5: LogBuilder, keyring: Keyring) -> None:
    entry = log5.entries[0]
    for position in range(len(entry.body)):
        payload = bytearray(entry.body)
        payload[position] ^= 0x01
        forged = Envelope(bytes(payload), entry.envelope.payload_type, entry.envelope.signatures)
        with pytest.raises(VerificationError):
            verify_export([export_line(forged, 1, leaf_hash(bytes(payload)))], keyring)


def test_same_json_reserialized(log5: LogBuilder, keyring: Keyring, signer: Signer) -> None:
    entry = log5.entries[1]
    reserialized = json.dumps(json.loads(entry.body), indent=1, ensure_ascii=False).encode()
    assert json.loads(reserialized) == json.loads(entry.body)
    assert _code(_swap_payload(log5, 1, reserialized), keyring) == "not_canonical"
    # Even a validly signed non-canonical body is refused: bytes must be canonical to be hashed.
    lines = log5.lines()
    signed = signer.sign(reserialized, "acme")
    lines[1] = export_line(signed, 2, leaf_hash(reserialized))
    assert _code(lines, keyring) == "not_canonical"


def test_included_ids_reordered(log5: LogBuilder, keyring: Keyring) -> None:
    payload = _edited(log5.entries[3], lambda body: body["included"].reverse())
    assert _code(_swap_payload(log5, 3, payload), keyring) == "signature_mismatch"


def test_excluded_entry_removed(log5: LogBuilder, keyring: Keyring) -> None:
    payload = _edited(log5.entries[3], lambda body: body["excluded"].pop(0))
    assert _code(_swap_payload(log5, 3, payload), keyring) == "signature_mismatch"


def test_signature_moved_to_another_receipt(log5: LogBuilder, keyring: Keyring) -> None:
    assert _code(_swap_payload(log5, 2, log5.entries[1].body), keyring) == "signature_mismatch"
    lines = log5.lines()
    donor, target = log5.entries[0].envelope, log5.entries[4]
    moved = Envelope(target.body, donor.payload_type, donor.signatures)
    lines[4] = export_line(moved, 5, target.leaf)
    assert _code(lines, keyring) == "signature_mismatch"


def test_another_tenants_key(log5: LogBuilder, keyring: Keyring, signer: Signer) -> None:
    entry = log5.entries[2]
    hmac_for_globex = signer.sign(entry.body, "globex").signatures[0]
    lines = log5.lines()
    forged = Envelope(entry.body, entry.envelope.payload_type, (hmac_for_globex,))
    lines[2] = export_line(forged, 3, entry.leaf)
    assert _code(lines, keyring) == "signature_mismatch"


def test_another_tenants_receipt(
    log5: LogBuilder, keyring: Keyring, new_log: Callable[[str], LogBuilder]
) -> None:
    globex = new_log("globex").extend(3)
    lines = log5.lines()
    lines[2] = globex.lines()[2]
    assert _code(lines, keyring) == "tenant_mismatch"
    assert _code(globex.lines(), keyring, tenant_id="acme") == "tenant_mismatch"


def test_unknown_key_id(log5: LogBuilder, keyring: Keyring) -> None:
    entry = log5.entries[2]
    renamed = tuple(
        Signature(s.keyid.replace("k1", "k9"), s.sig) for s in entry.envelope.signatures
    )
    lines = log5.lines()
    lines[2] = export_line(
        Envelope(entry.body, entry.envelope.payload_type, renamed), 3, entry.leaf
    )
    assert _code(lines, keyring) == "unknown_key"
    # Signed by a key the auditor's keyring never had.
    from receipts import generate_keyring

    stranger, _ = generate_keyring("k1")
    assert _code(log5.lines(), stranger.public()) == "unknown_key"
    assert _code(log5.lines(), stranger) == "signature_mismatch"  # same id, other secret


def test_receipt_deleted_from_export(log5: LogBuilder, keyring: Keyring) -> None:
    lines = log5.lines(checkpoint=log5.checkpoint())
    del lines[2]
    assert _code(lines, keyring) == "seq_gap"


def test_receipts_reordered_or_replayed(log5: LogBuilder, keyring: Keyring) -> None:
    lines = log5.lines()
    lines[1], lines[2] = lines[2], lines[1]
    assert _code(lines, keyring) == "seq_gap"
    lines = log5.lines()
    lines.insert(3, lines[2])
    assert _code(lines, keyring) == "seq_gap"


def test_validly_signed_fork_breaks_the_chain(log5: LogBuilder, keyring: Keyring) -> None:
    # The signer itself (or someone holding its keys) signs a receipt that does not link.
    def relink(body: dict[str, Any]) -> None:
        body["log"]["prev"] = "ab" * 32

    payload = _edited(log5.entries[3], relink)
    lines = log5.lines()
    lines[3] = export_line(log5.signer.sign(payload, "acme"), 4, leaf_hash(payload))
    assert _code(lines, keyring) == "chain_break"


def test_first_receipt_must_start_the_chain(log: LogBuilder, keyring: Keyring) -> None:
    log.extend(1)

    def relink(body: dict[str, Any]) -> None:
        body["log"]["prev"] = "ab" * 32

    payload = _edited(log.entries[0], relink)
    lines = [export_line(log.signer.sign(payload, "acme"), 1, leaf_hash(payload))]
    assert _code(lines, keyring) == "chain_break"


def test_row_edited_by_a_superuser(log5: LogBuilder, keyring: Keyring) -> None:
    """A body edited in the database with triggers disabled; leaf and chain recomputed."""

    def tamper(body: dict[str, Any]) -> None:
        body["included"][0]["tokens"] = 1

    payload = _edited(log5.entries[1], tamper)
    lines = _swap_payload(log5, 1, payload)
    assert _code(lines, keyring) == "signature_mismatch"
    # Without the signature check the chain would still catch it: receipt 3 links the old leaf.
    lines = log5.lines()
    lines[1] = export_line(log5.signer.sign(payload, "acme"), 2, leaf_hash(payload))
    assert _code(lines, keyring) == "chain_break"


def test_line_metadata_must_match_the_body(log5: LogBuilder, keyring: Keyring) -> None:
    entry = log5.entries[2]
    lines = log5.lines()
    lines[2] = export_line(entry.envelope, 3, log5.entries[1].leaf)
    assert _code(lines, keyring) == "malformed"
    lines[2] = export_line(entry.envelope, 9, entry.leaf)
    assert _code(lines, keyring) == "malformed"


def test_log_truncated(log: LogBuilder, keyring: Keyring) -> None:
    log.extend(10)
    checkpoint = log.checkpoint()
    # Last receipts dropped, end line kept: its count gives it away; with the count forged to
    # match, the checkpoint does.
    lines = log.lines(checkpoint=checkpoint)
    assert _code(lines[:7] + lines[-1:], keyring) == "incomplete"
    assert _code([*lines[:7], checkpoint_line(checkpoint, 7)], keyring) == "proof_invalid"
    # Last receipts and the checkpoint line dropped; the auditor holds the checkpoint.
    assert _code(lines[:7], keyring, checkpoint_text=checkpoint) == "proof_invalid"
    # Everything dropped but the checkpoint.
    assert _code([checkpoint_line(checkpoint, 0)], keyring) == "proof_invalid"


def test_old_checkpoint_presented_as_newest(log: LogBuilder, keyring: Keyring) -> None:
    log.extend(10)
    old, new = log.checkpoint(7), log.checkpoint(10)
    # The export is cut back to 7 receipts and carries the (genuine) checkpoint of size 7.
    lines = log.lines(log.entries[:7], checkpoint=old)
    verify_export(lines, keyring)  # alone it is a consistent, older log ...
    assert _code(lines, keyring, checkpoint_text=new) == "consistency_invalid"  # ... but stale
    from receipts import consistency_proof

    proof = consistency_proof(7, log.leaves)
    with pytest.raises(VerificationError) as info:
        verify_checkpoint_consistency(new, old, proof, keyring.checkpoint_keys())
    assert info.value.code == "consistency_invalid"


def test_forked_checkpoint(
    log5: LogBuilder, keyring: Keyring, private_key: Ed25519PrivateKey
) -> None:
    lines = log5.lines(checkpoint=log5.checkpoint())
    other_root = leaf_hash(b"another history")
    forked = sign_checkpoint("ctxgw/acme", 5, other_root, private_key, "e1")
    assert _code(lines, keyring, checkpoint_text=forked) == "consistency_invalid"
    # A signed checkpoint whose root the log does not hash to.
    assert _code(log5.lines(checkpoint=forked), keyring) == "proof_invalid"


def test_checkpoint_tampering(log5: LogBuilder, keyring: Keyring) -> None:
    text = log5.checkpoint()
    lines = log5.lines()
    edited = text.replace("\n5\n", "\n4\n", 1)
    assert _code([*lines, checkpoint_line(edited, 5)], keyring) == "checkpoint_invalid"
    other_log = log5.signer.sign_checkpoint("ctxgw/globex", 5, log5.leaves[0])
    assert _code([*lines, checkpoint_line(other_log, 5)], keyring) == "checkpoint_invalid"
    from receipts import generate_keyring, load_private_key

    _, pem = generate_keyring("e1")
    foreign = sign_checkpoint("ctxgw/acme", 5, log5.leaves[0], load_private_key(pem), "e1")
    assert _code([*lines, checkpoint_line(foreign, 5)], keyring) == "unknown_key"


def test_tampered_inclusion_proof(log5: LogBuilder, keyring: Keyring) -> None:
    lines = log5.lines(log5.entries[1:3], checkpoint=log5.checkpoint(), proof_size=5)
    obj = json.loads(lines[0])
    obj["inclusion_proof"]["hashes"][0] = "00" * 32
    lines[0] = json.dumps(obj)
    assert _code(lines, keyring) == "proof_invalid"


def test_tampered_delivered_bundle(log5: LogBuilder, keyring: Keyring) -> None:
    entry = log5.entries[2]
    tampered = entry.bundle.replace(b"open", b"closed")
    code = _code(log5.lines(), keyring, receipt_id=entry.receipt_id, bundle=tampered)
    assert code == "bundle_mismatch"
    # A bundle of another receipt is not this receipt's bundle either.
    other = log5.entries[3].bundle
    assert _code(log5.lines(), keyring, receipt_id=entry.receipt_id, bundle=other) == (
        "bundle_mismatch"
    )
