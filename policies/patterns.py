"""What the redaction detectors look for: their RE2 patterns, the checks a match must pass, and
cheap necessary conditions that rule a detector out before any pattern runs.

Patterns run on RE2 because memory content is written by agents, i.e. untrusted: matching time
stays linear in the text. They are ASCII and see text folded by policies/textnorm.py (as
bytes, one byte per folded character), so a secret written with Unicode look-alikes matches as
its ASCII twin does. Candidates are then checked where a checksum exists: card numbers must
pass the Luhn check (ISO/IEC 7812-1 Annex B), IBANs the ISO 13616 mod-97 check.

Each detector has its historical pattern (`PATTERNS`, the first pass) and, for two of them, a
later pass over what the first left (`EXTRA`): IBANs written in lower or mixed case, and card
numbers grouped with dots. A later pass only accepts what the first pass cannot match at all
(a lower-case letter; a dot), so on any text without such a secret the detectors find exactly
what the first pass finds.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any, Final, NamedTuple

from policies.model import DETECTOR_NAMES
from policies.regex_engine import ENGINE, Spans

__all__ = [
    "CLASSES",
    "COMPILED",
    "EXTRA",
    "MORE",
    "PATTERNS",
    "SCAN",
    "Step",
    "across_ok",
    "luhn_valid",
    "possible",
    "steps",
]

Check = Callable[[bytes, Spans], bool]


def luhn_valid(digits: str) -> bool:
    """The Luhn (mod 10) check used by payment card numbers."""
    total = 0
    for index, char in enumerate(reversed(digits)):
        digit = ord(char) - 48
        if index % 2 == 1:
            digit = digit * 2 - 9 if digit > 4 else digit * 2
        total += digit
    return total % 10 == 0


# A check sees the text the pattern ran on (bytes, see detectors.redact_text) and the match's
# spans (`Spans`: the whole match first, then each group's, (-1, -1) when it took no part).
_DIGITS: Final = b"0123456789"
_NOT_DIGITS: Final = bytes(set(range(256)) - set(_DIGITS))


def _digits(data: bytes, spans: Spans) -> bytes:
    # The patterns that call this match ASCII only, so these are all the digits of the match.
    start, end = spans[0]
    return data[start:end].translate(None, _NOT_DIGITS)


def _matched(data: bytes, spans: Spans, group: int = 0) -> str:
    start, end = spans[group]
    return "" if start < 0 else data[start:end].decode("utf-8", "surrogatepass")


def _card(data: bytes, spans: Spans) -> bool:
    digits = _digits(data, spans)
    return 13 <= len(digits) <= 19 and len(set(digits)) > 1 and luhn_valid(digits.decode())


def _iban(data: bytes, spans: Spans) -> bool:
    compact = _matched(data, spans).replace(" ", "").upper()
    if not 15 <= len(compact) <= 34:
        return False
    rearranged = compact[4:] + compact[:4]
    return int("".join(str(int(c, 36)) for c in rearranged)) % 97 == 1


# IBAN lengths by country, from the SWIFT IBAN registry (ISO 13616). Upper-case IBANs are
# checked by mod 97 alone, as they always were; one with a lower-case letter must also have a
# registered country and its length: lower-case words and digits are prose far more often.
_IBAN_LENGTHS: Final = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22,
    "BI": 27, "BR": 29, "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DJ": 27,
    "DK": 18, "DO": 28, "EE": 20, "EG": 29, "ES": 24, "FI": 18, "FK": 18, "FO": 18, "FR": 27,
    "GB": 22, "GE": 22, "GI": 23, "GL": 18, "GR": 27, "GT": 28, "HN": 28, "HR": 21, "HU": 28,
    "IE": 22, "IL": 23, "IQ": 23, "IS": 26, "IT": 27, "JO": 30, "KW": 30, "KZ": 20, "LB": 28,
    "LC": 32, "LI": 21, "LT": 20, "LU": 20, "LV": 21, "LY": 25, "MC": 27, "MD": 24, "ME": 22,
    "MK": 19, "MN": 20, "MR": 27, "MT": 31, "MU": 30, "NI": 28, "NL": 18, "NO": 15, "OM": 23,
    "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22, "RU": 33, "SA": 24,
    "SC": 31, "SD": 18, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "SO": 23, "ST": 25, "SV": 28,
    "TL": 23, "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20, "YE": 30,
}  # fmt: skip


def _iban_any_case(data: bytes, spans: Spans) -> bool:
    start, end = spans[0]
    found = data[start:end]
    if found == found.upper():
        return False  # upper case: the first pass's, which has had its say
    compact = found.replace(b" ", b"").upper().decode()
    return len(compact) == _IBAN_LENGTHS.get(compact[:2]) and _iban(data, spans)


# Python's `re` is fine for these two: they are anchored, have no nested repetition, and only
# ever see one phone-shaped match (at most a few dozen characters), never untrusted text at large.
_DATE_PREFIX = re.compile(rb"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_DOTTED_QUAD = re.compile(rb"[0-9]{1,3}(?:\.[0-9]{1,3}){3}")


def _phone(data: bytes, spans: Spans) -> bool:
    start, end = spans[0]
    found = data[start:end]  # ASCII: the pattern matches nothing else
    digits = found.translate(None, _NOT_DIGITS)
    if not 9 <= len(digits) <= 15:
        return False
    if _DATE_PREFIX.match(found) or _DOTTED_QUAD.fullmatch(found):
        return False  # timestamps and IPv4 addresses have the same shape
    # A bare run of digits is an id or an amount far more often than a phone number; accept
    # only the national-number lengths (10, or 11 with a trunk or country prefix).
    return found != digits or len(digits) in (10, 11)


def _mixed_token(data: bytes, spans: Spans) -> bool:
    # Only the generic blob alternative is checked: a long run of letters and digits is a secret
    # only if it looks random, i.e. has digits, upper and lower case.
    if spans[1][0] < 0:  # group 1: the blob alternative, the pattern's only group
        return True
    body = _matched(data, spans, 1).rstrip("=")
    return any(c.isdigit() for c in body) and body.lower() != body and body.upper() != body


_SPLIT_NUMBER = re.compile(rb"[0-9][.,:]\Z")


def across_ok(name: str, data: bytes, start: int, end: int) -> bool:
    """One more condition on a match read across a heading and a content joined (`data` the
    joined text, or the stretch of it around the joint): a heading that ends with a number and
    a content that starts with one are far more often two numbers than one split in two, so a
    card, phone or IBAN across them must not start or end inside a number it does not take
    whole ("0.5" then "415 555 0134": not "5415 555 0134"), and a phone number across them must
    hold no date or IPv4 address (those are rejected where a phone number starts; across the
    joint, the date starts after a digit of the heading)."""
    if name not in ("card", "phone", "iban"):
        return True
    if _SPLIT_NUMBER.search(data, max(start - 2, 0), start):
        return False
    if _SPLIT_NUMBER.search(data[end : end + 2][::-1]):
        return False
    found = data[start:end]
    return name != "phone" or not (_DATE_PREFIX.search(found) or _DOTTED_QUAD.search(found))


_TOKEN = "|".join(
    (
        r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_\-]{20,}",  # OpenAI / Anthropic style secret keys
        r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}",  # Stripe
        r"\bgh[pousr]_[A-Za-z0-9]{36,}",  # GitHub tokens
        r"\bgithub_pat_[A-Za-z0-9_]{22,}",
        r"\bxox[abprs]-[A-Za-z0-9\-]{10,}",  # Slack
        r"\bAKIA[0-9A-Z]{16}\b",  # AWS access key id
        r"\bAIza[0-9A-Za-z_\-]{35}",  # Google API key
        r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",  # JWT
        r"(?i:bearer)\s+[A-Za-z0-9._~+/\-]{20,}=*",
        r"\b[0-9a-fA-F]{32,}\b",  # long hex: keys, session ids
        r"(\b[A-Za-z0-9+/_\-]{40,}={0,2})",  # base64-ish blobs, checked below
    )
)

_IBAN_PATTERN = r"\b[A-Z]{2}[0-9]{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b"
# Card numbers grouped with dots as they are printed (4-4-4-4, 4-4-4-4-3, 4-6-5, 4-6-4): a
# group of 4 first (not 3: dotted phone numbers, "415.555.0134", start with one), then groups
# of 4 to 6, and maybe a short last one.
_DOTTED_CARD = r"\b[0-9]{4}(?:\.[0-9]{4,6}){1,3}(?:\.[0-9]{1,4})?\b"

PATTERNS: Final[dict[str, tuple[str, Check | None]]] = {
    "api_token": (_TOKEN, _mixed_token),
    "email": (r"\b[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}\b", None),
    "iban": (_IBAN_PATTERN, _iban),
    "card": (r"\b(?:[0-9][ \-]?){12,18}[0-9]\b", _card),
    "phone": (
        # An optional +country code and (area code), then 3 to 5 groups of digits.
        r"(?:\+[0-9]{1,3}[ .\-]?(?:\([0-9]{1,4}\)[ .\-]?)?|\([0-9]{1,4}\)[ .\-]?|\b)"
        r"[0-9]{2,4}(?:[ .\-]?[0-9]{2,4}){2,4}\b",
        _phone,
    ),
}


def _compile(pattern: str) -> Any:
    return ENGINE.compile(pattern.encode())


# Compiled once, on first import: these are fixed patterns, not configuration.
COMPILED: Final[dict[str, tuple[Any, Check | None]]] = {
    name: (_compile(pattern), check) for name, (pattern, check) in PATTERNS.items()
}


# Letters (either case) to "A", digits to "0": where an IBAN can start, "AA00".
_IBAN_START: Final = bytes.maketrans(
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", b"A" * 52 + b"0" * 10
)


def _some_lower_case(data: bytes) -> bool:
    # A letter in lower case somewhere, and two letters then two digits (an IBAN's start).
    return data != data.upper() and b"AA00" in data.translate(_IBAN_START)


class Step(NamedTuple):
    """One pass of a detector: its compiled pattern and check, whether it runs on the text in
    upper case (the check still sees the text as it is), and a cheap condition without which
    it cannot match (None: none)."""

    regex: Any
    check: Check | None
    upper: bool = False
    gate: Callable[[bytes], bool] | None = None


EXTRA: Final[dict[str, tuple[Step, ...]]] = {
    "iban": (Step(COMPILED["iban"][0], _iban_any_case, upper=True, gate=_some_lower_case),),
    "card": (Step(_compile(_DOTTED_CARD), _card, gate=lambda data: b"." in data),),
}
_STEPS: Final[dict[str, tuple[Step, ...]]] = {
    name: (Step(*COMPILED[name]), *EXTRA.get(name, ())) for name in DETECTOR_NAMES
}


def steps(name: str) -> tuple[Step, ...]:
    """The passes of detector `name`, in the order they run."""
    return _STEPS[name]


# Per detector, the ASCII characters a match can hold (what a match across a heading and a
# content is made of: see policies/crossing.py).
_ALNUM: Final = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
CLASSES: Final[dict[str, str]] = {
    "api_token": _ALNUM + "._~+/-=_ \t\n\r\f\v",
    "email": _ALNUM + "._%+-@",
    "iban": _ALNUM + " ",
    "card": "0123456789 -.",
    "phone": "0123456789 .-()+",
}


def _digits_from_end(least: int) -> Callable[[bytes], int]:
    def last_start(data: bytes) -> int:
        # The position of the `least`-th digit from the end: a match that holds `least` digits
        # starts at or before it. One pass over the text, however many matches follow.
        marked = data.translate(_DIGIT_MARKS)
        position = len(data)
        for _ in range(least):
            position = marked.rfind(b"0", 0, position)
            if position < 0:
                return -1
        return position

    return last_start


_DIGIT_MARKS: Final = bytes(0x30 if byte in _DIGITS else 0x20 for byte in range(256))

# Per detector, from a necessary condition of its pattern cheaper than RE2, the last position
# at which a match can start in a text, computed once per text: past it, the search for the
# next match (a pass over the rest of the text that finds nothing) is skipped. An email holds
# one "@"; a phone number at least 6 digits (three groups of two), a card number 13. (Once per
# text, not per match: asking "can a match still start here?" of the rest of the text at every
# match made redaction quadratic in texts of many rejected matches, e.g. a run of dates.)
MORE: Final[dict[str, Callable[[bytes], int]]] = {
    "email": lambda data: data.rfind(b"@"),
    "phone": _digits_from_end(6),
    "card": _digits_from_end(13),
}


def _any_pass(name: str) -> str:
    """One pattern that matches wherever any pass of detector `name` can."""
    pattern = PATTERNS[name][0]
    if name == "iban":
        return f"(?i:{pattern})"  # the later pass runs on the text in upper case
    if name == "card":
        return f"(?:{pattern})|(?:{_DOTTED_CARD})"
    return pattern


# One RE2::Set over every detector: a single pass says which detectors can hit at all (the
# indexes, in DETECTOR_NAMES order, of those whose passes match somewhere). It runs once per
# candidate memory, so it is the engine's fast path when that is there.
SCAN: Final = ENGINE.set_matcher([_any_pass(name) for name in DETECTOR_NAMES], "search")


def possible(data: bytes, detectors: Iterable[str]) -> set[str]:
    """The `detectors` that might hit `data` (folded), from conditions cheaper than RE2.

    Each condition holds for any hit that survives its check: an email has an "@"; an IBAN
    has two letters then two digits; a phone number has at least 9 digits and a card number
    13 (their checks count them). API tokens have no cheaper test than the RE2 pass itself, so
    they are always possible. Redaction only replaces a hit with a marker, which adds no
    digit or "@", and no letter next to a digit, so what is impossible before a redaction
    stays impossible after it.
    """
    found = set()
    digits = -1
    for name in detectors:
        if name == "email":
            if b"@" in data:
                found.add(name)
        elif name == "api_token":
            found.add(name)
        else:
            if digits < 0:
                digits = len(data) - len(data.translate(None, _DIGITS))
            if name == "iban":
                # Other bytes map to themselves, never to "A" or "0" unless they were one.
                if digits >= 2 and b"AA00" in data.translate(_IBAN_START):
                    found.add(name)
            elif digits >= (13 if name == "card" else 9):
                found.add(name)
    return found
