"""The normalized bundle, its canonical bytes (RFC 8785) and its digest.

The normalized form is the bundle document with every default written out (stages, modes,
combining, on_error), detectors in their fixed order and set-like lists sorted. Comments, key
order, quoting and YAML layout are gone, so they cannot change the digest; any change of meaning
does. It carries no floats: receipts embed these bytes and RFC 8785 receipts carry integers only,
so numbers such as confidence thresholds are decimal strings ("0.9").

The normalized form is itself a valid bundle document, so `load_canonical` rebuilds a Bundle from
stored bytes through the same linter (needed to replay a receipt under the policy it recorded).
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime, timedelta
from decimal import Decimal
from typing import NoReturn

import rfc8785

from policies.conditions import AllOf, AnyOf, Condition, FieldCondition, Not
from policies.issues import IssueLog, PolicyLintError
from policies.jsonsafe import JsonValue, format_datetime, format_decimal, format_duration
from policies.lint_rules import build_bundle
from policies.loader import node_from_json
from policies.model import Bundle, Rule

__all__ = ["bundle_digest", "canonical_bytes", "load_canonical", "normalize"]


def normalize(bundle: Bundle) -> dict[str, JsonValue]:
    """The bundle as a JSON document with all defaults filled in and no floats."""
    return {
        "apiVersion": bundle.api_version,
        "kind": "PolicyBundle",
        "metadata": {
            "name": bundle.name,
            "revision": bundle.revision,
            "description": bundle.description,
        },
        "spec": {
            "mode": bundle.mode,
            "combining": bundle.combining,
            "default_decision": bundle.default_decision,
            "on_error": bundle.on_error,
            # Only when set: every bundle written before the setting existed keeps its digest.
            **({} if bundle.withheld_count == "hidden" else {"withheld_count": "shown"}),
            "rules": [_rule(rule) for rule in bundle.rules],
        },
    }


def canonical_bytes(bundle: Bundle) -> bytes:
    """RFC 8785 (JSON Canonicalization Scheme) bytes of the normalized bundle."""
    return bytes(rfc8785.dumps(normalize(bundle)))


def bundle_digest(bundle: Bundle) -> str:
    return digest_of(canonical_bytes(bundle))


def digest_of(canonical: bytes) -> str:
    return "sha256:" + hashlib.sha256(canonical).hexdigest()


def load_canonical(canonical: bytes, filename: str = "<canonical>") -> Bundle:
    """Rebuild the Bundle whose canonical bytes these are; raises PolicyLintError otherwise."""
    log = IssueLog(filename)
    try:
        document = json.loads(
            canonical.decode("utf-8"),
            parse_float=_reject_float,
            parse_constant=_reject_float,
            object_pairs_hook=_unique_keys,
        )
    except (UnicodeDecodeError, ValueError) as exc:
        log.report(1, 1, "P003", f"canonical bundle is not valid JSON: {exc}")
        raise PolicyLintError(log.issues()) from None
    bundle = build_bundle(node_from_json(document), log)
    if bundle is None:
        raise PolicyLintError(log.issues())
    if canonical_bytes(bundle) != canonical:
        log.report(1, 1, "P023", "bytes are a valid bundle but not its canonical form")
        raise PolicyLintError(log.issues())
    return bundle


def _reject_float(text: str) -> NoReturn:
    raise ValueError(f"canonical bundles carry no floats or constants, found {text}")


def _unique_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    found: dict[str, object] = {}
    for key, value in pairs:
        if key in found:
            raise ValueError(f"duplicate key {key!r}")
        found[key] = value
    return found


def _rule(rule: Rule) -> dict[str, JsonValue]:
    out: dict[str, JsonValue] = {
        "id": rule.id,
        "stage": rule.stage,
        "effect": rule.effect,
        "mode": rule.mode,
        "reason": rule.reason,
    }
    if rule.when is not None:
        out["when"] = _condition(rule.when)
    if rule.effect == "redact":
        out["detectors"] = list(rule.detectors)
    if rule.max_items is not None:
        out["max_items"] = rule.max_items
    if rule.max_tokens is not None:
        out["max_tokens"] = rule.max_tokens
    return out


def _condition(condition: Condition) -> dict[str, JsonValue]:
    if isinstance(condition, AllOf):
        return {"all": [_condition(child) for child in condition.conditions]}
    if isinstance(condition, AnyOf):
        return {"any": [_condition(child) for child in condition.conditions]}
    if isinstance(condition, Not):
        return {"not": _condition(condition.condition)}
    assert isinstance(condition, FieldCondition)
    out: dict[str, JsonValue] = {"field": condition.field, "op": condition.op}
    if condition.value is not None:
        value = condition.value
        out["value"] = (
            [_value(item) for item in value] if isinstance(value, tuple) else _value(value)
        )
    return out


def _value(value: object) -> JsonValue:
    if isinstance(value, bool):  # pragma: no cover - the linter admits no booleans
        raise TypeError("booleans have no canonical form here")
    if isinstance(value, str | int):
        return value
    if isinstance(value, Decimal):
        return format_decimal(value)
    if isinstance(value, datetime):
        return format_datetime(value)
    if isinstance(value, timedelta):
        return format_duration(value)
    raise TypeError(f"no canonical form for {type(value).__name__}")
