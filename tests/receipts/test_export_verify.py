"""The export line format and what `verify_export` proves about a valid export."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from receipts import (
    ExportedCheckpoint,
    ExportedReceipt,
    InclusionProof,
    IncompleteError,
    Keyring,
    MalformedError,
    NotFoundError,
    ProofInvalidError,
    SeqGapError,
    Signer,
    TenantMismatchError,
    VerificationError,
    checkpoint_line,
    export_line,
    inclusion_proof,
    parse_line,
    root,
    rotate,
    verify_export,
    verify_receipt,
)

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from tests.receipts.conftest import LogBuilder


def test_export_line_is_canonical_json_with_newline(log5: LogBuilder) -> None:
    entry = log5.entries[2]
    line = export_line(entry.envelope, entry.seq, entry.leaf)
    assert line.endswith("}\n")
    assert line.count("\n") == 1
    obj = json.loads(line)
    assert list(obj) == ["envelope", "leaf", "seq"]
    assert obj["seq"] == 3
    assert obj["leaf"] == entry.leaf.hex()
    assert list(obj["envelope"]) == ["payload", "payloadType", "signatures"]
    assert parse_line(line) == ExportedReceipt(entry.envelope, 3, entry.leaf)


def test_export_line_with_proof_roundtrips(log5: LogBuilder) -> None:
    entry = log5.entries[1]
    hashes = inclusion_proof(1, log5.leaves)
    line = export_line(entry.envelope, entry.seq, entry.leaf, hashes, tree_size=5)
    assert json.loads(line)["inclusion_proof"] == {
        "hashes": [h.hex() for h in hashes],
        "tree_size": 5,
    }
    parsed = parse_line(line)
    assert isinstance(parsed, ExportedReceipt)
    assert parsed.inclusion_proof == InclusionProof(5, tuple(hashes))
    with pytest.raises(ValueError, match="tree_size"):
        export_line(entry.envelope, entry.seq, entry.leaf, hashes)


def test_checkpoint_line_roundtrips(log5: LogBuilder) -> None:
    text = log5.checkpoint()
    line = checkpoint_line(text, 5)
    assert json.loads(line) == {"checkpoint": text, "receipts": 5}
    assert parse_line(line) == ExportedCheckpoint(text, 5)


@pytest.mark.parametrize(
    "line",
    [
        "not json",
        "[]",
        "{}",
        '{"checkpoint": 5}',
        '{"envelope": {}, "leaf": "00", "seq": 1}',
        '{"envelope": {}, "leaf": "' + "0" * 64 + '", "seq": 1, "extra": 1}',
    ],
)
def test_malformed_lines(line: str) -> None:
    with pytest.raises(MalformedError):
        parse_line(line)


def test_complete_export_with_checkpoint(log5: LogBuilder) -> None:
    report = verify_export(log5.lines(checkpoint=log5.checkpoint()), log5.signer.keyring)
    assert report.tenant_id == "acme"
    assert (report.receipts, report.first_seq, report.last_seq) == (5, 1, 5)
    assert report.keyids == ("ed25519:e1", "hmac-sha256:k1")
    assert report.root == root(log5.leaves)
    assert report.checkpoint is not None
    assert (report.checkpoint.origin, report.checkpoint.size) == ("ctxgw/acme", 5)
    assert (report.proven, report.complete) == (5, True)
    assert report.receipt is None


def test_export_without_checkpoint_proves_chain_only(log5: LogBuilder, keyring: Keyring) -> None:
    report = verify_export(log5.lines(), keyring, allow_unanchored=True)
    assert (report.checkpoint, report.proven, report.complete) == (None, 0, False)
    assert report.root == root(log5.leaves)


def test_receipts_newer_than_the_checkpoint(log5: LogBuilder, keyring: Keyring) -> None:
    checkpoint = log5.checkpoint()
    log5.extend(2)
    report = verify_export(log5.lines(checkpoint=checkpoint), keyring)
    assert (report.receipts, report.proven, report.complete) == (7, 5, True)


def test_trusted_older_checkpoint_is_consistent(log5: LogBuilder, keyring: Keyring) -> None:
    trusted = log5.checkpoint(3)
    report = verify_export(log5.lines(checkpoint=log5.checkpoint()), keyring, trusted)
    assert report.checkpoint is not None
    assert report.checkpoint.size == 5
    # The trusted checkpoint alone proves the first three.
    report = verify_export(log5.lines(), keyring, trusted, allow_unanchored=True)
    assert (report.proven, report.complete) == (3, True)


def test_extract_with_inclusion_proofs(log5: LogBuilder, keyring: Keyring) -> None:
    lines = log5.lines(log5.entries[2:4], checkpoint=log5.checkpoint(), proof_size=5)
    report = verify_export(lines, keyring)
    assert (report.first_seq, report.last_seq, report.root) == (3, 4, None)
    assert (report.proven, report.complete) == (2, False)


def test_extract_needs_proofs(log5: LogBuilder, keyring: Keyring) -> None:
    lines = log5.lines(log5.entries[2:4], checkpoint=log5.checkpoint())
    with pytest.raises(ProofInvalidError):
        verify_export(lines, keyring)
    # Without any checkpoint the extract still verifies its signatures and inner chain.
    assert verify_export(lines[:-1], keyring, allow_unanchored=True).receipts == 2


def test_filtered_export_with_gaps_is_proven_line_by_line(
    log5: LogBuilder, keyring: Keyring
) -> None:
    """A filtered export (seq 1, 3 and 5 of 5): gaps are accepted between lines that carry
    inclusion proofs, each of which is checked; the export is not the complete log."""
    picked = [log5.entries[0], log5.entries[2], log5.entries[4]]
    lines = log5.lines(picked, checkpoint=log5.checkpoint(), proof_size=5)
    report = verify_export(lines, keyring)
    assert (report.receipts, report.first_seq, report.last_seq) == (3, 1, 5)
    assert (report.proven, report.complete, report.root) == (3, False, None)
    # No two lines are consecutive: no prev link could be followed; both gaps rest on proofs.
    assert (report.links, report.gaps, report.unexported) == (0, 2, 2)
    # A wrong proof on one line is caught, with its seq.
    item = json.loads(lines[1])
    item["inclusion_proof"]["hashes"].reverse()
    with pytest.raises(ProofInvalidError) as caught:
        verify_export([lines[0], json.dumps(item), *lines[2:]], keyring)
    assert caught.value.context["seq"] == 3
    # Gaps stand on the proofs, so the proofs must be checked: no checkpoint, no verification.
    with pytest.raises(ProofInvalidError, match="filtered export"):
        verify_export(lines[:-1], keyring, allow_unanchored=True)
    # A line dropped from a filtered export (its gap rests on proofs too) is caught by the count.
    with pytest.raises(IncompleteError, match="counts 3"):
        verify_export([lines[0], *lines[2:]], keyring)


def test_a_gap_needs_proofs_on_both_sides(log5: LogBuilder, keyring: Keyring) -> None:
    """Without inclusion proofs a gap is a missing receipt (seq_gap); lines out of order too."""
    picked = [log5.entries[0], log5.entries[2]]
    with pytest.raises(SeqGapError):
        verify_export(log5.lines(picked, checkpoint=log5.checkpoint()), keyring)
    proven = log5.lines(picked, checkpoint=log5.checkpoint(), proof_size=5)
    unproven = log5.lines(picked, checkpoint=log5.checkpoint())
    with pytest.raises(SeqGapError):  # the line before the gap has no proof
        verify_export([unproven[0], proven[1], proven[2]], keyring)
    backwards = log5.lines([log5.entries[2], log5.entries[0]], proof_size=5)
    with pytest.raises(SeqGapError):
        verify_export(backwards, keyring)


def test_single_receipt_with_bundle(log5: LogBuilder, keyring: Keyring) -> None:
    entry = log5.entries[3]
    lines = log5.lines([entry], checkpoint=log5.checkpoint(), proof_size=5)
    report = verify_export(lines, keyring, bundle=entry.bundle)
    assert report.receipt is not None
    assert (report.receipt.receipt_id, report.receipt.seq) == (entry.receipt_id, 4)
    assert report.receipt.bundle_checked
    assert report.proven == 1


def test_receipt_lookup(log5: LogBuilder, keyring: Keyring) -> None:
    entry = log5.entries[1]
    lines = log5.lines(checkpoint=log5.checkpoint())
    report = verify_export(lines, keyring, receipt_id=entry.receipt_id, bundle=entry.bundle)
    assert report.receipt is not None
    assert report.receipt.leaf == entry.leaf
    with pytest.raises(NotFoundError):
        verify_export(lines, keyring, receipt_id="rcp-missing")
    with pytest.raises(ValueError, match="receipt_id"):
        verify_export(lines, keyring, bundle=entry.bundle)


def test_blank_lines_are_ignored(log5: LogBuilder, keyring: Keyring) -> None:
    lines = log5.lines(checkpoint=log5.checkpoint())
    assert verify_export(["\n", *lines, "\n", ""], keyring).complete


def test_line_after_checkpoint_is_malformed(log5: LogBuilder, keyring: Keyring) -> None:
    lines = log5.lines(checkpoint=log5.checkpoint())
    with pytest.raises(MalformedError) as info:
        verify_export([*lines, lines[-1]], keyring)
    assert info.value.context["line"] == 7


def test_tenant_is_pinned(log5: LogBuilder, keyring: Keyring) -> None:
    with pytest.raises(TenantMismatchError):
        verify_export(log5.lines(), keyring, tenant_id="globex")


def test_empty_exports(log: LogBuilder, keyring: Keyring) -> None:
    with pytest.raises(IncompleteError):  # an empty file proves nothing
        verify_export([], keyring)
    report = verify_export([], keyring, allow_unanchored=True)
    assert (report.receipts, report.first_seq, report.checkpoint) == (0, None, None)
    empty_checkpoint = log.checkpoint(0)
    assert verify_export([checkpoint_line(empty_checkpoint, 0)], keyring).checkpoint is not None
    log.extend(2)
    with pytest.raises(ProofInvalidError):
        verify_export([checkpoint_line(log.checkpoint(), 0)], keyring)


def test_a_cut_off_export_is_incomplete(log5: LogBuilder, keyring: Keyring) -> None:
    whole = log5.lines(checkpoint=log5.checkpoint())
    assert verify_export(whole, keyring).complete
    for cut in (whole[:-1], whole[:3], whole[:1]):  # the end line, and more, dropped
        with pytest.raises(IncompleteError) as info:
            verify_export(cut, keyring)
        assert info.value.code == "incomplete"
    # An end line that counts other lines than the export holds: always incomplete.
    miscounted = [*whole[:-1], checkpoint_line(log5.checkpoint(), 4)]
    with pytest.raises(IncompleteError, match="counts 4"):
        verify_export(miscounted, keyring, allow_unanchored=True)
    # The loud escape hatch: without the end line nothing anchors it, and the report says so.
    unanchored = verify_export(whole[:-1], keyring, allow_unanchored=True)
    assert unanchored.checkpoint is None and not unanchored.complete


def test_third_party_verifies_with_the_public_keyring(log5: LogBuilder, keyring: Keyring) -> None:
    report = verify_export(log5.lines(checkpoint=log5.checkpoint()), keyring.public())
    assert report.keyids == ("ed25519:e1",)
    assert report.complete


def test_log_spanning_a_key_rotation(
    log: LogBuilder, keyring: Keyring, private_key: Ed25519PrivateKey
) -> None:
    log.extend(3)
    rotated = rotate(keyring, "k2")
    log.signer = Signer(rotated, private_key)
    log.extend(3)
    report = verify_export(log.lines(checkpoint=log.checkpoint()), rotated)
    assert report.keyids == ("ed25519:e1", "hmac-sha256:k1", "hmac-sha256:k2")
    assert report.complete


def test_verify_receipt(log5: LogBuilder, keyring: Keyring) -> None:
    envelope = log5.entries[0].envelope
    verify_receipt(envelope, "acme", keyring)
    with pytest.raises(TenantMismatchError):
        verify_receipt(envelope, "globex", keyring)


def test_errors_carry_stable_codes_and_context(log5: LogBuilder, keyring: Keyring) -> None:
    lines = log5.lines()
    del lines[2]
    with pytest.raises(VerificationError) as info:
        verify_export(lines, keyring)
    assert info.value.code == "seq_gap"
    assert info.value.context["line"] == 3
    assert str(info.value).startswith("seq_gap: seq 4 follows seq 2")
