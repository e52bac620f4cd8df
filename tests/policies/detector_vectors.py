"""The detectors' test vectors, taken from where they are tested (test_policy_detectors.py's
parametrized cases), so that the Unicode and golden tests vary exactly those examples."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tests.policies.test_policy_detectors as cases


def _parametrized(test: Callable[..., Any]) -> list[str]:
    (mark,) = [mark for mark in getattr(test, "pytestmark", []) if mark.name == "parametrize"]
    return [str(value) for value in mark.args[1]]


# Per detector, its positives and the sentence each is tested in ({} the secret).
POSITIVES: dict[str, list[str]] = {
    "email": _parametrized(cases.test_email),
    "phone": _parametrized(cases.test_phone),
    "card": _parametrized(cases.test_card_passes_luhn),
    "iban": _parametrized(cases.test_iban),
    "api_token": _parametrized(cases.test_api_token),
}
CONTEXTS: dict[str, str] = {
    "email": "write to {}.",
    "phone": "call {} now",
    "card": "card {} on file",
    "iban": "pay to {}.",
    "api_token": "token: {} end",
}
NEGATIVES: dict[str, list[str]] = {
    "email": _parametrized(cases.test_not_email),
    "phone": _parametrized(cases.test_not_phone),
    "card": [f"number {n}" for n in _parametrized(cases.test_card_luhn_negatives)],
    "iban": ["GB82 WEST 1234 5698 7654 33"],
    "api_token": _parametrized(cases.test_not_api_token),
}
