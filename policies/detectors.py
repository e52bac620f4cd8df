"""Redaction detectors: find personal data and secrets in text, replace each hit with a marker.

The marker names the detector (`[redacted:email]`) and nothing else: redaction records which
fields and detectors fired and how often, never the values. Patterns run on RE2 because memory
content is written by agents, i.e. untrusted: matching time stays linear in the text.

Candidates are then checked where a checksum exists, to keep false positives down: card numbers
must pass the Luhn check (ISO/IEC 7812-1 Annex B), IBANs the ISO 13616 mod-97 check. Detectors
run in a fixed order (`DETECTOR_NAMES`), whatever order a rule lists them in, so the same text
always redacts the same way.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Sequence
from typing import Any, Final

from policies.model import DETECTOR_NAMES
from policies.regex_engine import ENGINE, Spans

__all__ = [
    "DETECTOR_NAMES",
    "Redacted",
    "detectable",
    "luhn_valid",
    "redact_text",
    "replacement",
    "scan",
]


def replacement(detector: str) -> str:
    return f"[redacted:{detector}]"


_MARKERS: Final = {name: replacement(name).encode() for name in DETECTOR_NAMES}


def luhn_valid(digits: str) -> bool:
    """The Luhn (mod 10) check used by payment card numbers."""
    total = 0
    for index, char in enumerate(reversed(digits)):
        digit = ord(char) - 48
        if index % 2 == 1:
            digit = digit * 2 - 9 if digit > 4 else digit * 2
        total += digit
    return total % 10 == 0


# A check sees the text the pattern ran on (UTF-8 bytes, see redact_text) and the match's
# spans (`Spans`: the whole match first, then each group's, (-1, -1) when it took no part).
_NOT_DIGITS: Final = bytes(set(range(256)) - set(b"0123456789"))


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

_PATTERNS: Final[dict[str, tuple[str, Callable[[bytes, Spans], bool] | None]]] = {
    "api_token": (_TOKEN, _mixed_token),
    "email": (r"\b[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}\b", None),
    "iban": (r"\b[A-Z]{2}[0-9]{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b", _iban),
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
_COMPILED: Final[dict[str, tuple[Any, Callable[[bytes, Spans], bool] | None]]] = {
    name: (_compile(pattern), check) for name, (pattern, check) in _PATTERNS.items()
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


# Per detector, from a necessary condition of its pattern cheaper than RE2, the last position
# at which a match can start in a text, computed once per text: past it, the search for the
# next match (a pass over the rest of the text that finds nothing) is skipped. An email holds
# one "@"; a phone number at least 6 digits (three groups of two), a card number 13. (Once per
# text, not per match: asking "can a match still start here?" of the rest of the text at every
# match made redaction quadratic in texts of many rejected matches, e.g. a run of dates.)
_MORE: Final[dict[str, Callable[[bytes], int]]] = {
    "email": lambda data: data.rfind(b"@"),
    "phone": _digits_from_end(6),
    "card": _digits_from_end(13),
}


# One RE2::Set over every detector pattern: a single pass says which detectors can hit at all
# (the indexes of the patterns, in DETECTOR_NAMES order, that match somewhere). It runs once
# per candidate memory, so it is the engine's fast path when that is there.
_SCAN: Final = ENGINE.set_matcher([_PATTERNS[name][0] for name in DETECTOR_NAMES], "search")


_DIGITS: Final = b"0123456789"
_DIGIT_MARKS: Final = bytes(0x30 if byte in _DIGITS else 0x20 for byte in range(256))
_IBAN_START: Final = bytes.maketrans(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", b"A" * 26 + b"0" * 10)


def _possible(data: bytes, detectors: Iterable[str]) -> set[str]:
    """The `detectors` that might hit `data`, from necessary conditions cheaper than RE2.

    Each condition holds for any hit that survives its check: an email has an "@"; an IBAN
    has two capitals then two digits; a phone number has at least 9 digits and a card number
    13 (their checks count them). API tokens have no cheaper test than the RE2 pass itself, so
    they are always possible. Redaction only replaces a hit with a marker, which adds no
    digit, "@" or capital, so what is impossible before a redaction stays impossible after it.
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


def _candidates(data: bytes, detectors: Collection[str]) -> set[str]:
    if "api_token" in detectors:
        possible = set(detectors)  # RE2 is the cheapest test for tokens: go straight to it
    else:
        possible = _possible(data, detectors)
        if not possible:
            return possible  # the common case: no RE2 pass at all
    found = _SCAN(data)  # one pass over every pattern
    return possible.intersection([DETECTOR_NAMES[i] for i in found]) if found else set()


def scan(text: str, detectors: Collection[str] = DETECTOR_NAMES) -> frozenset[str]:
    """Those of `detectors` whose pattern occurs in `text` (before checksum checks): a
    superset of the detectors that will redact something, a cheap prefilter."""
    # Bytes, as in redact_text: a lone surrogate (valid JSON, so an agent can store one) must
    # not make the strict UTF-8 encoder raise in the middle of an evaluation.
    return frozenset(_candidates(text.encode("utf-8", "surrogatepass"), detectors))


def detectable(
    detectors: Collection[str],
) -> Callable[[Sequence[str], Sequence[str]], list[frozenset[str]]]:
    """A function of headings and contents (one pair per memory): per memory, those of
    `detectors` that can hit its heading or content (a superset, as `scan` gives, and empty for
    most texts), in its cheapest form for a fixed set of detectors, built once and applied to
    many memories. (One pass over both texts costs less than two; the newline between them can
    only add candidates, e.g. "bearer" then a token: a superset, as a pre-check may be.)"""
    names = frozenset(detectors)
    if names == {"email"}:
        return lambda headings, contents: [
            names if "@" in heading or "@" in content else _NOTHING
            for heading, content in zip(headings, contents, strict=True)
        ]
    if "api_token" in names:  # as _candidates does, without its sets: RE2 clears most texts
        return lambda headings, contents: [
            names.intersection(map(DETECTOR_NAMES.__getitem__, found))
            if (found := _SCAN((heading + "\n" + content).encode("utf-8", "surrogatepass")))
            else _NOTHING
            for heading, content in zip(headings, contents, strict=True)
        ]
    return lambda headings, contents: [
        frozenset(_candidates((heading + "\n" + content).encode("utf-8", "surrogatepass"), names))
        for heading, content in zip(headings, contents, strict=True)
    ]


_NOTHING: Final[frozenset[str]] = frozenset()


class Redacted:
    """The result of redacting one text: the new text and hits per detector."""

    __slots__ = ("counts", "text")

    def __init__(self, text: str, counts: tuple[tuple[str, int], ...]) -> None:
        self.text = text
        self.counts = counts


def redact_text(text: str, detectors: Collection[str], *, scanned: bool = False) -> Redacted:
    """Apply `detectors` (in the fixed detector order) to `text`.

    `scanned` says the caller already kept only the detectors `scan` found in this text (or
    in a text containing it), so the RE2 prefilter pass is skipped.

    Works on the UTF-8 bytes: RE2's Python wrapper maps every match position back to str
    offsets, which costs more than the matching; the patterns are ASCII, so bytes match alike.
    """
    data = text.encode("utf-8", "surrogatepass")
    # Rule out most detectors, often all, before running any of them.
    wanted = _possible(data, detectors) if scanned else _candidates(data, detectors)
    if not wanted:
        return Redacted(text, ())
    counts: list[tuple[str, int]] = []
    for name in DETECTOR_NAMES:
        if name not in wanted:
            continue
        regex, check = _COMPILED[name]
        marker = _MARKERS[name]
        pieces: list[bytes] = []
        position = 0
        more = _MORE.get(name)
        last_start = None if more is None else more(data)
        until = None if last_start is None else (lambda _d, at, last=last_start: at <= last)
        for spans in ENGINE.spans(regex, data, until):
            if check is not None and not check(data, spans):
                continue
            start, end = spans[0]
            pieces += (data[position:start], marker)
            position = end
        if pieces:
            pieces.append(data[position:])
            data = b"".join(pieces)
            counts.append((name, len(pieces) // 2))
    if not counts:
        return Redacted(text, ())
    return Redacted(data.decode("utf-8", "surrogatepass"), tuple(counts))
