"""DSSE v1: PAE bytes and the envelope's JSON shape."""

from __future__ import annotations

import base64
import json

import pytest

from receipts import PAYLOAD_TYPE, Envelope, MalformedError, Signature, pae


def test_pae_spec_example() -> None:
    # The worked example of DSSE protocol.md.
    assert pae("http://example.com/HelloWorld", b"hello world") == (
        b"DSSEv1 29 http://example.com/HelloWorld 11 hello world"
    )


def test_pae_lengths_are_bytes_not_characters() -> None:
    assert pae("tÿpe", b"") == "DSSEv1 5 tÿpe 0 ".encode()
    assert pae(PAYLOAD_TYPE, b"{}") == b"DSSEv1 37 application/vnd.ctxgw.receipt.v1+json 2 {}"


def test_envelope_json_roundtrip() -> None:
    envelope = Envelope(
        payload=b'{"a":1}',
        payload_type=PAYLOAD_TYPE,
        signatures=(Signature("hmac-sha256:k1", b"\x00\x01"), Signature("ed25519:e1", b"\xff")),
    )
    obj = envelope.to_json()
    assert obj == {
        "payload": "eyJhIjoxfQ==",
        "payloadType": PAYLOAD_TYPE,
        "signatures": [
            {"keyid": "hmac-sha256:k1", "sig": "AAE="},
            {"keyid": "ed25519:e1", "sig": "/w=="},
        ],
    }
    assert Envelope.from_json(json.loads(json.dumps(obj))) == envelope


def test_url_safe_base64_is_accepted() -> None:
    obj = {"payload": "-_8=", "payloadType": PAYLOAD_TYPE, "signatures": []}
    assert Envelope.from_json(obj).payload == base64.urlsafe_b64decode("-_8=")


@pytest.mark.parametrize(
    "obj",
    [
        [],
        {"payload": "e30=", "payloadType": PAYLOAD_TYPE},
        {"payload": "e30=", "payloadType": PAYLOAD_TYPE, "signatures": [], "extra": 1},
        {"payload": "e30", "payloadType": PAYLOAD_TYPE, "signatures": []},
        {"payload": "e30=!", "payloadType": PAYLOAD_TYPE, "signatures": []},
        {"payload": 5, "payloadType": PAYLOAD_TYPE, "signatures": []},
        {"payload": "e30=", "payloadType": None, "signatures": []},
        {"payload": "e30=", "payloadType": PAYLOAD_TYPE, "signatures": {}},
        {"payload": "e30=", "payloadType": PAYLOAD_TYPE, "signatures": ["x"]},
        {"payload": "e30=", "payloadType": PAYLOAD_TYPE, "signatures": [{"keyid": "k"}]},
        {"payload": "e30=", "payloadType": PAYLOAD_TYPE, "signatures": [{"keyid": 1, "sig": ""}]},
        {"payload": "ZZZé", "payloadType": PAYLOAD_TYPE, "signatures": []},
    ],
)
def test_malformed_envelopes(obj: object) -> None:
    with pytest.raises(MalformedError):
        Envelope.from_json(obj)
