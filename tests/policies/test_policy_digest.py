"""Digest and canonical form: stable under formatting, changed by meaning, loadable, float-free."""

from __future__ import annotations

import json

import pytest
import rfc8785

from policies import (
    PolicyLintError,
    bundle_digest,
    canonical_bytes,
    default_bundle,
    load_bundle,
    load_canonical,
    normalize,
)
from policies.shipped import SHIPPED, shipped_bundle

BASE = """\
apiVersion: ctxgw/v1
kind: PolicyBundle
metadata: {name: digest, revision: "1"}
spec:
  default_decision: allow
  rules:
    - id: hr
      effect: deny
      reason: HR only
      when:
        all:
          - {field: memory.namespace, op: in, value: [hr, people]}
          - {field: request.role, op: not_in, value: [hr_assistant]}
    - id: low
      effect: deny
      reason: unsure
      when: {field: memory.confidence, op: lt, value: 0.25}
    - id: pii
      effect: redact
      detectors: [phone, email]
    - id: old
      effect: deny
      reason: stale
      when: {field: memory.created_at, op: older_than, value: 2w}
"""

# The same meaning, written differently: comments, flow/block style, key order, quoting,
# explicit defaults, reordered set-like lists, equivalent numbers and durations.
REFORMATTED = """\
# a comment
kind: "PolicyBundle"
apiVersion: 'ctxgw/v1'
metadata:
  revision: '1'
  name: digest   # trailing comment
spec:
  mode: enforce
  combining: deny-overrides
  on_error: deny
  default_decision: "allow"
  rules:
    - {id: hr, stage: admit, effect: deny, reason: "HR only", when: {all: [{field: memory.namespace, op: in, value: [people, hr, hr]}, {op: not_in, field: request.role, value: ["hr_assistant"]}]}}
    - id: low
      reason: unsure
      effect: deny
      when:
        field: memory.confidence
        op: lt
        value: "0.250"
    - {id: pii, stage: transform, effect: redact, detectors: [email, phone, email], mode: enforce}
    - id: old
      effect: deny
      reason: stale
      when: {field: memory.created_at, op: older_than, value: 14d}
"""


def test_formatting_does_not_change_the_digest() -> None:
    assert load_bundle(BASE).digest == load_bundle(REFORMATTED).digest
    assert load_bundle(BASE).canonical == load_bundle(REFORMATTED).canonical


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("value: 0.25", "value: 0.26"),
        ("op: lt, value: 0.25", "op: lte, value: 0.25"),
        ("[hr, people]", "[hr]"),
        ("reason: HR only", "reason: HR staff only"),
        ("detectors: [phone, email]", "detectors: [email]"),
        ("value: 2w", "value: 15d"),
        ("default_decision: allow", "default_decision: deny"),
        ('revision: "1"', 'revision: "2"'),
        (
            "      effect: deny\n      reason: unsure",
            "      effect: deny\n      mode: log_only\n      reason: unsure",
        ),
    ],
)
def test_meaning_changes_the_digest(old: str, new: str) -> None:
    assert old in BASE
    assert load_bundle(BASE.replace(old, new, 1)).digest != load_bundle(BASE).digest


def test_rule_order_is_meaning() -> None:
    swapped = (
        BASE.replace("    - id: hr", "    - id: TMP")
        .replace("    - id: low", "    - id: hr")
        .replace("    - id: TMP", "    - id: low")
    )
    assert load_bundle(swapped).digest != load_bundle(BASE).digest


def test_digest_is_sha256_of_rfc8785_of_the_normalized_bundle() -> None:
    import hashlib

    loaded = load_bundle(BASE)
    assert loaded.canonical == rfc8785.dumps(normalize(loaded.bundle))
    assert loaded.digest == "sha256:" + hashlib.sha256(loaded.canonical).hexdigest()
    assert loaded.digest == bundle_digest(loaded.bundle)


def test_canonical_form_fills_defaults_and_has_no_floats() -> None:
    document = json.loads(load_bundle(BASE).canonical)
    spec = document["spec"]
    assert (spec["mode"], spec["combining"], spec["on_error"]) == (
        "enforce",
        "deny-overrides",
        "deny",
    )
    low = spec["rules"][1]
    assert low["when"] == {"field": "memory.confidence", "op": "lt", "value": "0.25"}
    assert low["stage"] == "admit" and low["mode"] == "enforce"
    assert spec["rules"][2]["detectors"] == ["email", "phone"]
    assert spec["rules"][3]["when"]["value"] == "14d"
    json.loads(load_bundle(BASE).canonical, parse_float=lambda text: pytest.fail(f"float {text}"))


@pytest.mark.parametrize("name", SHIPPED)
def test_canonical_round_trip(name: str) -> None:
    loaded = shipped_bundle(name)
    rebuilt = load_canonical(loaded.canonical)
    assert rebuilt == loaded.bundle
    assert canonical_bytes(rebuilt) == loaded.canonical
    assert bundle_digest(rebuilt) == loaded.digest


def test_round_trip_of_every_value_kind() -> None:
    source = (
        BASE
        + """\
    - id: times
      effect: deny
      reason: r
      when:
        any:
          - {field: memory.expires_at, op: lt, value: "2026-01-01T10:00:00.5+02:00"}
          - {field: memory.tokens, op: in, value: [3, 1, 2]}
          - {field: memory.heading, op: regex, value: "(?i)^secret"}
          - {not: {field: memory.source_ref, op: glob, value: "vault://*"}}
          - {field: memory.labels, op: contains_all, value: [b, a]}
          - {field: now, op: gt, value: 2027-01-01T00:00:00Z}
    - {id: cap, effect: cap, max_items: 3, max_tokens: 500, when: {field: memory.memory_type, op: eq, value: episodic}}
"""
    )
    loaded = load_bundle(source)
    rebuilt = load_canonical(loaded.canonical)
    assert rebuilt == loaded.bundle
    assert bundle_digest(rebuilt) == loaded.digest
    times = json.loads(loaded.canonical)["spec"]["rules"][4]["when"]["any"]
    assert times[0]["value"] == "2026-01-01T08:00:00.5Z"
    assert times[1]["value"] == [1, 2, 3]


def test_default_bundle_loads_from_package_resources() -> None:
    loaded = default_bundle()
    assert loaded.bundle.name == "default"
    assert loaded.bundle.default_decision == "allow"
    assert all(rule.mode == "log_only" for rule in loaded.bundle.rules if rule.effect == "redact")
    assert loaded.warnings == ()


@pytest.mark.parametrize(
    "canonical",
    [
        b"not json",
        b'{"apiVersion":"ctxgw/v1","kind":"PolicyBundle","metadata":{"name":"x"},"spec":{"default_decision":"allow","x":1.5}}',
        b'{"a":1,"a":2}',
    ],
)
def test_load_canonical_rejects_bad_bytes(canonical: bytes) -> None:
    with pytest.raises(PolicyLintError):
        load_canonical(canonical)


def test_load_canonical_rejects_valid_but_non_canonical_bytes() -> None:
    document = json.loads(load_bundle(BASE).canonical)
    pretty = json.dumps(document, indent=2).encode()
    with pytest.raises(PolicyLintError, match="not its canonical form"):
        load_canonical(pretty)
    load_canonical(rfc8785.dumps(document))
