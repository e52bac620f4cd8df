"""Checkpoints as signed notes: format, interop with Go's sumdb/note, verification, consistency."""

from __future__ import annotations

import base64
import hashlib

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from receipts import (
    Checkpoint,
    CheckpointInvalidError,
    ConsistencyInvalidError,
    UnknownKeyError,
    consistency_proof,
    leaf_hash,
    log_origin,
    parse_checkpoint,
    root,
    sign_checkpoint,
    verify_checkpoint,
    verify_checkpoint_consistency,
)
from receipts.checkpoint import open_note, sign_note

# The example of golang.org/x/mod/sumdb/note (package doc and note_test.go). Ed25519 is
# deterministic, so producing the same bytes proves the wire format is the Go one.
GO_SIGNER_KEY = "PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz"
GO_VERIFIER_KEY = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW"
GO_TEXT = (
    "If you think cryptography is the answer to your problem,\n"
    "then you don't know what your problem is.\n"
)
GO_NOTE = (
    GO_TEXT + "\n— PeterNeumann "
    "x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n"
)

LEAVES = [leaf_hash(bytes([i])) for i in range(10)]


def _go_private_key() -> Ed25519PrivateKey:
    raw = base64.b64decode(GO_SIGNER_KEY.split("+", 4)[4])
    assert raw[0] == 1  # the note algorithm byte for Ed25519
    return Ed25519PrivateKey.from_private_bytes(raw[1:])


def test_signed_note_matches_go_byte_for_byte() -> None:
    assert sign_note(GO_TEXT, _go_private_key(), "PeterNeumann") == GO_NOTE


def test_go_note_verifies_with_the_go_verifier_key() -> None:
    name, key_hash, key = GO_VERIFIER_KEY.split("+")
    public_key = _go_private_key().public_key()
    raw = public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    assert base64.b64decode(key) == b"\x01" + raw
    assert hashlib.sha256(name.encode() + b"\n" + b"\x01" + raw).digest()[:4].hex() == key_hash
    assert open_note(GO_NOTE, {name: public_key}) == GO_TEXT
    with pytest.raises(CheckpointInvalidError):
        open_note(GO_NOTE.replace("cryptography", "cryptographY"), {name: public_key})


def test_checkpoint_text_format(private_key: Ed25519PrivateKey) -> None:
    tree_root = root(LEAVES)
    text = sign_checkpoint("ctxgw/acme", 10, tree_root, private_key, "e1")
    body, signature_block = text.split("\n\n")
    assert body == f"ctxgw/acme\n10\n{base64.b64encode(tree_root).decode()}"
    assert signature_block.startswith("— e1 ")
    assert signature_block.endswith("\n")
    assert text == sign_checkpoint("ctxgw/acme", 10, tree_root, private_key, "e1")  # deterministic
    assert parse_checkpoint(text) == Checkpoint("ctxgw/acme", 10, tree_root)
    keys = {"e1": private_key.public_key()}
    assert verify_checkpoint(text, keys, origin="ctxgw/acme") == Checkpoint(
        "ctxgw/acme", 10, tree_root
    )


def test_log_origin() -> None:
    assert log_origin("acme") == "ctxgw/acme"
    assert log_origin("acme", prefix="example.com/ctxgw") == "example.com/ctxgw/acme"
    with pytest.raises(ValueError, match="origin"):
        log_origin("acme\n5")


def _cp(private_key: Ed25519PrivateKey, size: int, origin: str = "ctxgw/acme") -> str:
    return sign_checkpoint(origin, size, root(LEAVES[:size]), private_key, "e1")


def test_verification_failures(private_key: Ed25519PrivateKey) -> None:
    keys = {"e1": private_key.public_key()}
    text = _cp(private_key, 10)
    # Edited body: the signature no longer verifies.
    with pytest.raises(CheckpointInvalidError):
        verify_checkpoint(text.replace("\n10\n", "\n11\n"), keys)
    with pytest.raises(CheckpointInvalidError):
        verify_checkpoint(text, keys, origin="ctxgw/globex")
    # Unknown signer name, or the right name with another key: nothing verifies.
    with pytest.raises(UnknownKeyError):
        verify_checkpoint(text, {"other": private_key.public_key()})
    with pytest.raises(UnknownKeyError):
        verify_checkpoint(text, {"e1": Ed25519PrivateKey.generate().public_key()})


def test_unknown_cosigners_are_ignored(private_key: Ed25519PrivateKey) -> None:
    witness = Ed25519PrivateKey.generate()
    text = _cp(private_key, 4)
    cosigned = text + sign_note(text.split("\n\n")[0] + "\n", witness, "witness").split("\n\n")[1]
    assert cosigned.count("\n— ") == 2
    keys = {"e1": private_key.public_key()}
    assert verify_checkpoint(cosigned, keys).size == 4
    both = {**keys, "witness": witness.public_key()}
    assert verify_checkpoint(cosigned, both).size == 4


@pytest.mark.parametrize(
    "text",
    [
        "ctxgw/acme\n1\n",
        "ctxgw/acme\n1\nAAAA\n\n— e1 AAAAAAAA\n",  # root not 32 bytes
        "ctxgw/acme\n01\n" + base64.b64encode(bytes(32)).decode() + "\n\n— e1 AAAAAAAA\n",
        "ctxgw/acme\n-1\n" + base64.b64encode(bytes(32)).decode() + "\n\n— e1 AAAAAAAA\n",
        "\n1\n" + base64.b64encode(bytes(32)).decode() + "\n\n— e1 AAAAAAAA\n",
        "ctxgw/acme\n1\n" + base64.b64encode(bytes(32)).decode() + "\next\n\n— e1 AAAAAAAA\n",
        "ctxgw/acme\n1\n" + base64.b64encode(bytes(32)).decode() + "\n\n- e1 AAAAAAAA\n",
        "ctxgw/acme\n1\n" + base64.b64encode(bytes(32)).decode() + "\n\n— e1 AAAA\n",
        "ctxgw/acme\n1\n" + base64.b64encode(bytes(32)).decode() + "\n\n— e1 AAAAAAAA",
        "ctxgw/\tacme\n1\n" + base64.b64encode(bytes(32)).decode() + "\n\n— e1 AAAAAAAA\n",
    ],
)
def test_malformed_checkpoints(text: str) -> None:
    with pytest.raises(CheckpointInvalidError):
        parse_checkpoint(text)


def test_consistency_between_checkpoints(private_key: Ed25519PrivateKey) -> None:
    keys = {"e1": private_key.public_key()}
    old, new = _cp(private_key, 6), _cp(private_key, 10)
    proof = consistency_proof(6, LEAVES)
    verify_checkpoint_consistency(old, new, proof, keys)
    verify_checkpoint_consistency(new, new, [], keys)
    # An old checkpoint presented as the newest.
    with pytest.raises(ConsistencyInvalidError):
        verify_checkpoint_consistency(new, old, proof, keys)
    # A fork: same size, another history.
    forked = sign_checkpoint("ctxgw/acme", 10, root(LEAVES[::-1]), private_key, "e1")
    with pytest.raises(ConsistencyInvalidError):
        verify_checkpoint_consistency(old, forked, proof, keys)
    # Another tenant's log.
    with pytest.raises(CheckpointInvalidError):
        verify_checkpoint_consistency(old, _cp(private_key, 10, "ctxgw/globex"), proof, keys)
