"""Golden vectors: a known-good receipt, keyring, export and checkpoint, and known-bad variants.

The files in vectors/ are the format's reference: a change in the bytes this package produces
(or accepts) shows up here first. They were produced by `_build_vectors` with the fixed test
keys of conftest.py; `test_vectors_are_reproducible` proves the code still produces exactly
them. After a deliberate format change, regenerate with::

    CTXGW_REGENERATE_VECTORS=1 .venv/bin/pytest tests/receipts/test_golden_vectors.py

and review the diff like code. (merkle_ct.json is not generated: it holds published vectors.)
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from receipts import (
    GENESIS_PREV,
    BundleMismatchError,
    Envelope,
    Keyring,
    Signature,
    Signer,
    VerificationError,
    canonicalize,
    decode_body,
    load_private_key,
    private_key_pem,
    public_keyring,
    verify_export,
    verify_receipt,
)
from tests.receipts.conftest import refusal_body

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from tests.receipts.conftest import LogBuilder

VECTORS = Path(__file__).parent / "vectors"
GENERATED = (
    "keyring.json",
    "keyring.public.json",
    "ed25519-e1.pem",
    "receipt_good.json",
    "receipts_bad.json",
    "export_good.jsonl",
    "checkpoint_good.txt",
    "checkpoint_old.txt",
    "bundle_rcp-acme-0003.txt",
    "export_refusal.jsonl",
)


def _pretty(obj: object) -> bytes:
    return (json.dumps(obj, indent=2, ensure_ascii=False) + "\n").encode()


def _refusal_log(new_log: Callable[[str], LogBuilder]) -> LogBuilder:
    """Tenant initech: a refusal at seq 1, then a context receipt chained to it."""
    log = new_log("initech")
    log.append(refusal_body("initech", 1, GENESIS_PREV, "rcp-initech-0001"))
    return log.extend(1)


def _bad_variants(
    log: LogBuilder, globex: LogBuilder, refusals: LogBuilder
) -> list[dict[str, Any]]:
    signer = log.signer
    good, other = log.entries[2], log.entries[1]
    env = good.envelope
    hmac_sig, ed_sig = env.signatures
    body = json.loads(good.body)

    def edited(change: Callable[[dict[str, Any]], None]) -> bytes:
        copy = json.loads(good.body)
        change(copy)
        return canonicalize(copy)

    good_bundle = body["bundle"]
    tampered = edited(lambda b: b["excluded"].pop())  # what a forger with the HMAC secret signs
    reserialized = json.dumps(body, indent=1, ensure_ascii=False).encode()
    with_float = good.body.replace(
        b'"budget":{"budget_tokens":800,', b'"budget":{"budget_tokens":800,"ratio":0.5,'
    )
    assert with_float != good.body
    cases: list[tuple[str, str, str, Envelope]] = [
        ("body_byte_changed", "signature_mismatch", "acme",
         Envelope(good.body.replace(b"open tickets", b"open tickeTs"), env.payload_type,
                  env.signatures)),
        ("body_reserialized", "not_canonical", "acme",
         Envelope(reserialized, env.payload_type, env.signatures)),
        ("body_reserialized_and_resigned", "not_canonical", "acme",
         signer.sign(reserialized, "acme")),
        ("float_in_signed_body", "not_canonical", "acme", signer.sign(with_float, "acme")),
        ("included_reordered", "signature_mismatch", "acme",
         Envelope(edited(lambda b: b["included"].reverse()), env.payload_type, env.signatures)),
        ("excluded_entry_removed", "signature_mismatch", "acme",
         Envelope(edited(lambda b: b["excluded"].pop()), env.payload_type, env.signatures)),
        ("signatures_of_another_receipt", "signature_mismatch", "acme",
         Envelope(good.body, env.payload_type, other.envelope.signatures)),
        ("hmac_with_another_tenants_subkey", "signature_mismatch", "acme",
         Envelope(good.body, env.payload_type, signer.sign(good.body, "globex").signatures[:1])),
        ("ed25519_signature_corrupted", "signature_mismatch", "acme",
         Envelope(good.body, env.payload_type,
                  (hmac_sig, Signature(ed_sig.keyid, bytes([ed_sig.sig[0] ^ 1]) + ed_sig.sig[1:])))),
        ("hmac_signature_relabelled_ed25519", "signature_mismatch", "acme",
         Envelope(good.body, env.payload_type, (Signature("ed25519:e1", hmac_sig.sig),))),
        ("unknown_key_id", "unknown_key", "acme",
         Envelope(good.body, env.payload_type,
                  (Signature("hmac-sha256:k9", hmac_sig.sig), Signature("ed25519:e9", ed_sig.sig)))),
        ("payload_type_changed", "malformed", "acme",
         Envelope(good.body, "application/json", env.signatures)),
        ("no_signatures", "malformed", "acme", Envelope(good.body, env.payload_type, ())),
        # Each signature is required: Ed25519 always, HMAC with a keyring that holds its secret.
        ("ed25519_signature_dropped", "signature_missing", "acme",
         Envelope(good.body, env.payload_type, (hmac_sig,))),
        ("hmac_signature_dropped", "signature_missing", "acme",
         Envelope(good.body, env.payload_type, (ed_sig,))),
        ("body_changed_ed25519_dropped_hmac_recomputed", "signature_missing", "acme",
         Envelope(tampered, env.payload_type, signer.sign(tampered, "acme").signatures[:1])),
        ("receipt_of_another_tenant", "tenant_mismatch", "acme", globex.entries[0].envelope),
    ]  # fmt: skip
    refusal = json.loads(refusals.entries[0].body)

    def refusal_signed(change: Callable[[dict[str, Any]], None]) -> Envelope:
        # Signed by the right key: only the shape check can catch these.
        copy = json.loads(json.dumps(refusal))
        change(copy)
        return signer.sign(canonicalize(copy), "initech")

    cases += [
        ("refusal_with_a_nonempty_bundle_hash", "malformed", "initech",
         refusal_signed(lambda b: b.update(bundle={"sha256": "00" * 32, "bytes": 0}))),
        ("refusal_claiming_a_bundle", "malformed", "initech",
         refusal_signed(lambda b: b.update(bundle=good_bundle))),
        ("refusal_naming_no_rule", "malformed", "initech",
         refusal_signed(lambda b: b.pop("refused"))),
        ("refusal_with_an_empty_rule_id", "malformed", "initech",
         refusal_signed(lambda b: b["refused"].update(rule_id=""))),
    ]  # fmt: skip
    return [
        {"name": name, "code": code, "tenant_id": tenant, "envelope": envelope.to_json()}
        for name, code, tenant, envelope in cases
    ]


def _build_vectors(
    keyring: Keyring, private_key: Ed25519PrivateKey, new_log: Callable[[str], LogBuilder]
) -> dict[str, bytes]:
    log = new_log("acme").extend(5)
    globex = new_log("globex").extend(1)
    refusals = _refusal_log(new_log)
    good = log.entries[2]
    return {
        "keyring.json": (json.dumps(keyring.to_json(), indent=2, sort_keys=True) + "\n").encode(),
        "keyring.public.json": public_keyring(keyring),
        "ed25519-e1.pem": private_key_pem(private_key),
        "receipt_good.json": _pretty(
            {
                "tenant_id": "acme",
                "body": good.body.decode(),
                "leaf": good.leaf.hex(),
                "envelope": good.envelope.to_json(),
            }
        ),
        "receipts_bad.json": _pretty(_bad_variants(log, globex, refusals)),
        "export_good.jsonl": "".join(log.lines(checkpoint=log.checkpoint())).encode(),
        "checkpoint_good.txt": log.checkpoint().encode(),
        "checkpoint_old.txt": log.checkpoint(3).encode(),
        "bundle_rcp-acme-0003.txt": good.bundle,
        "export_refusal.jsonl": "".join(refusals.lines(checkpoint=refusals.checkpoint())).encode(),
    }


def test_vectors_are_reproducible(
    keyring: Keyring, private_key: Ed25519PrivateKey, new_log: Callable[[str], LogBuilder]
) -> None:
    built = _build_vectors(keyring, private_key, new_log)
    assert tuple(built) == GENERATED
    if os.environ.get("CTXGW_REGENERATE_VECTORS") == "1":
        for name, data in built.items():
            (VECTORS / name).write_bytes(data)
    for name, data in built.items():
        assert (VECTORS / name).read_bytes() == data, f"vectors/{name} differs from the code"


def test_golden_keyring_and_key() -> None:
    keyring = Keyring.load(VECTORS / "keyring.json")
    private_key = load_private_key((VECTORS / "ed25519-e1.pem").read_bytes())
    Signer(keyring, private_key)  # the key is the keyring's active Ed25519 key


def test_golden_receipt_verifies() -> None:
    keyring = Keyring.load(VECTORS / "keyring.json")
    vector = json.loads((VECTORS / "receipt_good.json").read_text())
    envelope = Envelope.from_json(vector["envelope"])
    verify_receipt(envelope, vector["tenant_id"], keyring)
    verify_receipt(envelope, vector["tenant_id"], keyring.public())
    assert envelope.payload == vector["body"].encode()
    assert decode_body(envelope.payload)["log"]["seq"] == 3
    from receipts import leaf_hash

    assert leaf_hash(envelope.payload).hex() == vector["leaf"]


@pytest.mark.parametrize(
    "case", json.loads((VECTORS / "receipts_bad.json").read_text()), ids=lambda c: c["name"]
)
def test_golden_bad_receipts_fail_with_their_code(case: dict[str, Any]) -> None:
    keyring = Keyring.load(VECTORS / "keyring.json")
    envelope = Envelope.from_json(case["envelope"])
    with pytest.raises(VerificationError) as info:
        verify_receipt(envelope, case["tenant_id"], keyring)
    assert info.value.code == case["code"]


@pytest.mark.parametrize(
    "name",
    ["ed25519_signature_dropped", "body_changed_ed25519_dropped_hmac_recomputed"],
)
def test_golden_receipts_without_ed25519_fail_with_the_public_keyring_too(name: str) -> None:
    cases = {c["name"]: c for c in json.loads((VECTORS / "receipts_bad.json").read_text())}
    envelope = Envelope.from_json(cases[name]["envelope"])
    with pytest.raises(VerificationError) as info:
        verify_receipt(envelope, "acme", Keyring.load(VECTORS / "keyring.public.json"))
    assert info.value.code == "signature_missing"


def test_golden_export_verifies() -> None:
    keyring = Keyring.load(VECTORS / "keyring.json")
    with (VECTORS / "export_good.jsonl").open(encoding="utf-8") as lines:
        report = verify_export(
            lines,
            keyring,
            checkpoint_text=(VECTORS / "checkpoint_old.txt").read_text(),
            bundle=(VECTORS / "bundle_rcp-acme-0003.txt").read_bytes(),
            receipt_id="rcp-acme-0003",
        )
    assert (report.receipts, report.complete, report.proven) == (5, True, 5)
    assert report.receipt is not None
    assert report.receipt.bundle_checked
    assert report.hmac_checked
    assert report.keyids == ("ed25519:e1", "hmac-sha256:k1")


def test_golden_export_verifies_with_the_public_keyring() -> None:
    """What an auditor holds: Ed25519 public keys only. Every Ed25519 signature is checked; the
    HMAC ones are carried, not checked, and the report says so."""
    public = Keyring.load(VECTORS / "keyring.public.json")
    assert public.hmac == ()
    with (VECTORS / "export_good.jsonl").open(encoding="utf-8") as lines:
        report = verify_export(lines, public)
    assert (report.receipts, report.complete) == (5, True)
    assert (report.hmac_checked, report.keyids, report.unchecked_keyids) == (
        False,
        ("ed25519:e1",),
        ("hmac-sha256:k1",),
    )


def test_golden_refusal_export_verifies() -> None:
    """A refusal chains, signs and proves like any receipt; the bundle it delivered is empty."""
    keyring = Keyring.load(VECTORS / "keyring.json")
    lines = (VECTORS / "export_refusal.jsonl").read_text(encoding="utf-8").splitlines()
    report = verify_export(lines, keyring, bundle=b"", receipt_id="rcp-initech-0001")
    assert (report.tenant_id, report.receipts, report.complete) == ("initech", 2, True)
    assert report.receipt is not None and report.receipt.bundle_checked
    refusal = decode_body(Envelope.from_json(json.loads(lines[0])["envelope"]).payload)
    assert refusal["kind"] == "refusal" and refusal["bundle"]["bytes"] == 0
    with pytest.raises(BundleMismatchError):
        verify_export(lines, keyring, bundle=b"anything", receipt_id="rcp-initech-0001")
