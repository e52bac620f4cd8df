"""Canonical receipt bytes: RFC 8785 plus the no-floats / ASCII-keys profile."""

from __future__ import annotations

import json
from typing import Any

import pytest
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from receipts import (
    GENESIS_PREV,
    CanonicalizationError,
    MalformedError,
    NotCanonicalError,
    bundle_field,
    canonicalize,
    check_bundle,
    decode_body,
    leaf_hash,
    read_header,
)
from receipts.canonical import MAX_SAFE_INTEGER, CanonicalTemplate
from receipts.errors import BundleMismatchError


def test_keys_sorted_no_whitespace_utf8_values() -> None:
    assert canonicalize({"b": [1, True, None], "a": "é☕", "A": {}}) == (
        '{"A":{},"a":"é☕","b":[1,true,null]}'.encode()
    )


def test_rfc8785_string_escapes() -> None:
    # RFC 8785 §3.2.2.2: only ", \ and control characters are escaped; "/" is not.
    value = "\u20ac$\u000f\u000aA'\u0042\u0022\u005c\\\"/"
    assert canonicalize(value) == b'"\xe2\x82\xac$\\u000f\\nA\'B\\"\\\\\\\\\\"/"'


@pytest.mark.parametrize(
    ("obj", "path"),
    [
        ({"score": 0.5}, "$.score"),
        ({"candidates": [{"memory_id": "m1"}, {"distance": 1.0}]}, "$.candidates[1].distance"),
        ([1, 2, float("nan")], "$[2]"),
        ({"odd key": {"x": 1e3}}, '$["odd key"].x'),
    ],
)
def test_floats_are_rejected_with_their_path(obj: object, path: str) -> None:
    with pytest.raises(CanonicalizationError) as info:
        canonicalize(obj)
    assert info.value.path == path
    assert "float" in str(info.value)


@pytest.mark.parametrize(
    ("obj", "path"),
    [
        ({"café": 1}, "$"),
        ({1: "x"}, "$"),
        ({"n": MAX_SAFE_INTEGER + 1}, "$.n"),
        ({"n": -MAX_SAFE_INTEGER - 1}, "$.n"),
        ({"s": "\ud800"}, "$.s"),
        ({"b": b"bytes"}, "$.b"),
        ({"set": {1}}, "$.set"),
    ],
)
def test_values_outside_the_profile_are_rejected(obj: object, path: str) -> None:
    with pytest.raises(CanonicalizationError) as info:
        canonicalize(obj)
    assert info.value.path == path


def test_tuples_and_boundary_integers_are_fine() -> None:
    assert canonicalize((MAX_SAFE_INTEGER, -MAX_SAFE_INTEGER, False)) == (
        b"[9007199254740991,-9007199254740991,false]"
    )


def test_decode_roundtrip() -> None:
    body = {"schema": "x", "n": 3, "s": "Zoë ☕\n", "l": [None, {"k": True}]}
    assert decode_body(canonicalize(body)) == body


@pytest.mark.parametrize(
    "raw",
    [
        b'{"b":1, "a":2}',  # whitespace
        b'{"b":1,"a":2}',  # key order
        b'{"a":1,"a":1}',  # duplicate key
        b'{"a":1.0}',  # float literal for an integer
        b'{"a":1e2}',
        b'{"a":0.5}',
        b'{"a":-0}',
        b'{"a":"\\u0041"}',  # needless escape
        b'{"a":"\\/"}',
        b'{"caf\xc3\xa9":1}',  # non-ASCII key
        b'{"a":NaN}',
        b'{"a":"\xff"}',  # not UTF-8
        b'{"a":9007199254740992}',  # beyond 2**53 - 1
        b'{"a":1}\n',  # trailing newline
    ],
)
def test_non_canonical_bytes_are_rejected(raw: bytes) -> None:
    with pytest.raises(NotCanonicalError) as info:
        decode_body(raw)
    assert info.value.code == "not_canonical"


@pytest.mark.parametrize(
    "raw", [b"", b"[1,2]", b'"text"', b"{", b"{}}", b"\xef\xbb\xbf{}", b"[" * 100_000]
)
def test_non_objects_are_malformed(raw: bytes) -> None:
    with pytest.raises(MalformedError) as info:
        decode_body(raw)
    assert info.value.code == "malformed"


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER)
    | st.text(st.characters(exclude_categories=["Cs"])),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.text(st.characters(max_codepoint=127), max_size=6), children, max_size=4
        )
    ),
    max_leaves=20,
)


@given(st.dictionaries(st.text(st.characters(max_codepoint=127)), json_values, max_size=5))
def test_canonical_bytes_roundtrip_and_other_serializations_fail(body: dict[str, Any]) -> None:
    raw = canonicalize(body)
    assert decode_body(raw) == body
    assert canonicalize(decode_body(raw)) == raw
    for other in (
        json.dumps(body, indent=1).encode(),
        json.dumps(body, ensure_ascii=True, sort_keys=True).encode(),
    ):
        if other != raw:
            with pytest.raises(NotCanonicalError):
                decode_body(other)


# Text that exercises every escape class: quotes, backslashes, each control character, DEL,
# U+2028/U+2029 and non-BMP characters (UTF-16 surrogate pairs in RFC 8785 terms).
tricky_text = st.text(
    st.sampled_from(['"', "\\", "/", "\x7f", "\u2028", "\u2029", "é", "😀", "\U00010000"])
    | st.characters(max_codepoint=0x1F)
    | st.characters(exclude_categories=["Cs"]),
    max_size=12,
)
profile_values = st.recursive(
    st.none() | st.booleans() | st.integers(-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER) | tricky_text,
    lambda children: (
        st.lists(children, max_size=4)
        | st.tuples(children, children)
        | st.dictionaries(
            st.text(st.characters(max_codepoint=127), max_size=6), children, max_size=5
        )
    ),
    max_leaves=30,
)


@settings(max_examples=1000)
@given(profile_values)
def test_the_fast_path_writes_exactly_what_rfc8785_writes(value: Any) -> None:
    # canonicalize() uses msgspec within the profile; the rfc8785 package is the reference for
    # RFC 8785 itself, and the C JSON encoder (the fast path before) writes the same bytes.
    found = canonicalize(value)
    assert found == rfc8785.dumps(value)
    assert found == json.dumps(
        value, ensure_ascii=False, sort_keys=True, separators=(",", ":")
    ).encode("utf-8")


def test_values_the_fast_path_leaves_to_the_full_check() -> None:
    class Name(str):
        pass

    assert canonicalize({"a": Name("x")}) == b'{"a":"x"}'
    with pytest.raises(CanonicalizationError) as found:
        canonicalize({"a": [1, {"b": "ok", "c": "bad \ud800"}]})
    assert found.value.path == "$.a[1].c"


def _header_body(**changes: object) -> dict[str, Any]:
    body: dict[str, Any] = {
        "schema": "ctxgw.receipt/v1",
        "receipt_id": "r1",
        "tenant_id": "acme",
        "log": {"seq": 1, "prev": GENESIS_PREV},
        "bundle": bundle_field(b"hello"),
    }
    body.update(changes)
    return body


def test_read_header_and_bundle_check() -> None:
    header = read_header(_header_body())
    assert (header.receipt_id, header.tenant_id, header.seq) == ("r1", "acme", 1)
    check_bundle(header, b"hello")
    with pytest.raises(BundleMismatchError):
        check_bundle(header, b"hello!")
    with pytest.raises(BundleMismatchError):
        check_bundle(header, b"hellO")


@pytest.mark.parametrize(
    "changes",
    [
        {"schema": "ctxgw.receipt/v2"},
        {"receipt_id": ""},
        {"tenant_id": 7},
        {"tenant_id": "acme\nctxgw/other"},
        {"log": {"seq": 0, "prev": GENESIS_PREV}},
        {"log": {"seq": True, "prev": GENESIS_PREV}},
        {"log": {"seq": 1, "prev": "AB" * 32}},
        {"log": [1]},
        {"bundle": {"sha256": "00", "bytes": 5}},
        {"bundle": {"sha256": "00" * 32, "bytes": -1}},
    ],
)
def test_bad_headers_are_malformed(changes: dict[str, object]) -> None:
    with pytest.raises(MalformedError):
        read_header(_header_body(**changes))


def test_leaf_hash_is_rfc6962() -> None:
    # RFC 6962 leaf of the empty string (transparency-dev rfc6962_test.go "RFC6962 Empty Leaf").
    assert leaf_hash(b"").hex() == (
        "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d"
    )
    assert leaf_hash(b"L123456").hex() == (
        "395aa064aa4c29f7010acfe3f25db9485bbd4b91897b6ad7ad547639252b4d56"
    )


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(
        st.text(alphabet=st.characters(max_codepoint=127), max_size=8),
        st.one_of(st.none(), st.booleans(), st.integers(-(2**53) + 1, 2**53 - 1), st.text()),
        max_size=8,
    ),
    st.text(alphabet=st.characters(max_codepoint=127), min_size=1, max_size=8),
    st.one_of(
        st.integers(0, 2**53 - 1), st.text(), st.dictionaries(st.sampled_from("ab"), st.text())
    ),
)
def test_a_template_filled_is_the_canonical_form_of_the_whole(
    obj: dict[str, Any], key: str, value: Any
) -> None:
    # Values that spell the placeholder (NUL + key) are among the texts generated: the template
    # must notice and fall back rather than splice into the wrong place.
    obj = {**obj, "decoy": "\u0000" + key} if len(obj) % 3 == 0 else obj
    template = CanonicalTemplate({k: v for k, v in obj.items() if k != key}, key)
    whole = {**{k: v for k, v in obj.items() if k != key}, key: value}
    assert template.fill(value) == canonicalize(whole)
