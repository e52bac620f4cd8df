"""Redaction detectors: find personal data and secrets in text, replace each hit with a marker.

The marker names the detector (`[redacted:email]`) and nothing else: redaction records which
fields and detectors fired and how often, never the values. What each detector looks for, and
the checks a candidate must pass, are in policies/patterns.py. Detectors run in a fixed order
(`DETECTOR_NAMES`), whatever order a rule lists them in, so the same text always redacts the
same way.

Detection runs on the text folded by policies/textnorm.py (zero-width characters removed,
digits of any script made ASCII, look-alike letters made Latin, …); redaction replaces the
corresponding span of the text as written, so the rest of it is left exactly as it was, and a
secret written with fullwidth digits is replaced whole, its zero-width characters included. A
text that is pure ASCII is its own folded form: it takes the same path it always took.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Final

from policies.crossing import reach_back, reach_forward, window
from policies.model import DETECTOR_NAMES
from policies.patterns import (
    CLASSES,
    COMPILED,
    MORE,
    PATTERNS,
    SCAN,
    Step,
    across_ok,
    luhn_valid,
    possible,
    steps,
)
from policies.regex_engine import ENGINE
from policies.textnorm import fold, normal_form

__all__ = [
    "DETECTOR_NAMES",
    "Redacted",
    "detectable",
    "luhn_valid",
    "redact_fields",
    "redact_text",
    "replacement",
    "scan",
]

# The first pass of each detector, by the names the tests and the reference evaluation use.
_PATTERNS: Final = PATTERNS
_COMPILED: Final = COMPILED
# Read at each redaction (not bound at import): a test takes the shortcut away to compare.
_MORE = MORE


def replacement(detector: str) -> str:
    return f"[redacted:{detector}]"


_MARKERS: Final = {name: replacement(name).encode() for name in DETECTOR_NAMES}


def detection_bytes(folded: str) -> bytes:
    """What the patterns run on: the folded text, one byte per character. A character that is
    still not ASCII can take no part in an (ASCII) match and is a non-word character to RE2,
    as its UTF-8 bytes were; "?" is all of that too, in one byte, so byte offsets are the
    folded text's character offsets. (A lone surrogate, valid JSON, becomes "?" as well.)"""
    return folded.encode("ascii", "replace")


def _data(text: str) -> bytes:
    return text.encode() if text.isascii() else detection_bytes(fold(text))


def find(name: str, step: Step, data: bytes) -> list[tuple[int, int]]:
    """The (start, end) of each match of one pass of detector `name` in `data` that passes its
    check, left to right, as redaction replaces them."""
    regex, check, upper, gate = step
    if gate is not None and not gate(data):
        return []
    searched = data.upper() if upper else data
    more = _MORE.get(name)
    last_start = None if more is None else more(searched)
    until = None if last_start is None else (lambda _d, at, last=last_start: at <= last)
    found = []
    for spans in ENGINE.spans(regex, searched, until):
        if check is None or check(data, spans):
            found.append(spans[0])
    return found


def _candidates(data: bytes, detectors: Collection[str]) -> set[str]:
    if "api_token" in detectors:
        candidates = set(detectors)  # RE2 is the cheapest test for tokens: go straight to it
    else:
        candidates = possible(data, detectors)
        if not candidates:
            return candidates  # the common case: no RE2 pass at all
    found = SCAN(data)  # one pass over every pattern
    return candidates.intersection([DETECTOR_NAMES[i] for i in found]) if found else set()


def scan(text: str, detectors: Collection[str] = DETECTOR_NAMES) -> frozenset[str]:
    """Those of `detectors` whose pattern occurs in `text` (before checksum checks): a
    superset of the detectors that will redact something, a cheap prefilter."""
    return frozenset(_candidates(_data(text), detectors))


def _pair_candidates(heading: str, content: str, detectors: Collection[str]) -> set[str]:
    """As `_candidates`, for a heading and a content and what crosses them."""
    if not (heading.isascii() and content.isascii()):
        heading, content = fold(heading), fold(content)
    if "api_token" not in detectors:
        # The cheap conditions see the joint's neighbourhood: two letters and two digits (an
        # IBAN's start) can meet there; "@" and digits are counted alike in any join.
        near = f"{heading}\n{content}\n{heading[-3:]}{content[:3]}"
        candidates = possible(detection_bytes(near), detectors)
        if not candidates:
            return candidates
    else:
        candidates = set(detectors)
    found = SCAN(_pair_bytes(heading, content))
    return candidates.intersection([DETECTOR_NAMES[i] for i in found]) if found else set()


def _pair_bytes(heading: str, content: str) -> bytes:
    """What the RE2 set scans for a heading and a content (folded): the two, a newline between
    them (api tokens read across one: "Bearer" ending the heading), then the two joined, where
    a secret split between them is whole: all of them, or of a long text only as far as a
    match across the joint can reach into it, and a character more. (Two passes of RE2 over
    short texts cost less than working out in Python how far that is.)"""
    if not (heading and content):
        return detection_bytes(f"{heading}\n{content}")
    end = heading if len(heading) <= _LONG else heading[-reach_back(heading) - 1 :]
    start = content if len(content) <= _LONG else content[: reach_forward(content) + 1]
    return detection_bytes(f"{heading}\n{content}\n{end}{start}")


_LONG: Final = 512


def _pair_scan(heading: str, content: str) -> Sequence[int]:
    """The RE2 set's answer for a heading and a content, folded first unless pure ASCII."""
    if heading.isascii() and content.isascii():
        if heading and content and len(heading) <= _LONG and len(content) <= _LONG:
            return SCAN(f"{heading}\n{content}\n{heading}{content}".encode())
        return SCAN(_pair_bytes(heading, content))
    return SCAN(_pair_bytes(fold(heading), fold(content)))


def detectable(
    detectors: Collection[str],
) -> Callable[[Sequence[str], Sequence[str]], list[frozenset[str]]]:
    """A function of headings and contents (one pair per memory): per memory, those of
    `detectors` that can hit its heading or content, or a secret split between them (a
    superset, as `scan` gives, and empty for most texts), in its cheapest form for a fixed set
    of detectors, built once and applied to many memories."""
    names = frozenset(detectors)
    if names == {"email"}:  # an email in either text, or across them, has an "@" in one
        return lambda headings, contents: [
            names
            if "@" in heading
            or "@" in content
            or (
                not (heading.isascii() and content.isascii())  # "＠" and "﹫" fold to "@"
                and ("@" in fold(heading) or "@" in fold(content))
            )
            else _NOTHING
            for heading, content in zip(headings, contents, strict=True)
        ]
    if "api_token" in names:  # as _pair_candidates does, inline: RE2 clears most texts
        return lambda headings, contents: [
            names.intersection(map(DETECTOR_NAMES.__getitem__, found))
            if (found := _pair_scan(heading, content))
            else _NOTHING
            for heading, content in zip(headings, contents, strict=True)
        ]
    return lambda headings, contents: [
        frozenset(found) if (found := _pair_candidates(h, c, names)) else _NOTHING
        for h, c in zip(headings, contents, strict=True)
    ]


_NOTHING: Final[frozenset[str]] = frozenset()


class Redacted:
    """The result of redacting one text: the new text and hits per detector."""

    __slots__ = ("counts", "text")

    def __init__(self, text: str, counts: tuple[tuple[str, int], ...]) -> None:
        self.text = text
        self.counts = counts


class Redaction:
    """One text being redacted, pass by pass: its text as written, its folded form and the
    bytes the patterns read (the folded form's), kept in step."""

    __slots__ = ("data", "folded", "form", "text")

    def __init__(self, text: str) -> None:
        self.set(text)

    def set(self, text: str) -> None:
        self.text = text
        if text.isascii():  # its own folded form: nothing to map back
            self.folded, self.form, self.data = text, None, text.encode()
        else:
            self.form = normal_form(text)
            self.folded = self.form.text
            self.data = detection_bytes(self.folded)

    def replace(self, hits: list[tuple[int, int]], name: str) -> None:
        """Replace the spans `hits` of the folded text (ascending, disjoint) with the marker."""
        marker = _MARKERS[name]
        if self.text.isascii():  # the folded text is the text: splice the bytes, as always
            data, position = self.data, 0
            pieces: list[bytes] = []
            for start, end in hits:
                pieces += (data[position:start], marker)
                position = end
            pieces.append(data[position:])
            self.data = b"".join(pieces)
            self.text = self.folded = self.data.decode()
            return
        form, text = self.form, self.text
        assert form is not None
        parts: list[str] = []
        position = 0
        for start, end in hits:
            first, last = form.span(start, end)
            # Two matches can share a source character only when it folded to several.
            first = max(first, position)
            parts += (text[position:first], marker.decode())
            position = max(last, first)
        parts.append(text[position:])
        self.set("".join(parts))


def _span(text: Redaction, start: int, end: int) -> tuple[int, int]:
    """The span of `text` as written of its folded characters [start, end)."""
    return (start, end) if text.form is None else text.form.span(start, end)


def _redact_alone(state: Redaction, wanted: Collection[str]) -> list[tuple[str, int]]:
    """Run the `wanted` detectors (fixed order, pass by pass) on one text; hits per detector."""
    counts: list[tuple[str, int]] = []
    for name in DETECTOR_NAMES:
        if name not in wanted:
            continue
        found = 0
        for step in steps(name):
            hits = find(name, step, state.data)
            if hits:
                state.replace(hits, name)
                found += len(hits)
        if found:
            counts.append((name, found))
    return counts


def redact_text(text: str, detectors: Collection[str], *, scanned: bool = False) -> Redacted:
    """Apply `detectors` (in the fixed detector order) to `text`.

    `scanned` says the caller already kept only the detectors `scan` found in this text (or
    in a text containing it), so the RE2 prefilter pass is skipped.

    Works on bytes: RE2's Python wrapper maps every match position back to str offsets, which
    costs more than the matching; the patterns are ASCII, so bytes match alike.
    """
    state = Redaction(text)
    # Rule out most detectors, often all, before running any of them.
    wanted = possible(state.data, detectors) if scanned else _candidates(state.data, detectors)
    counts = _redact_alone(state, wanted) if wanted else None
    return Redacted(state.text, tuple(counts)) if counts else Redacted(text, ())


def redact_fields(
    heading: str, content: str, detectors: Collection[str], *, scanned: bool = False
) -> tuple[Redacted, Redacted]:
    """Apply `detectors` to a memory's heading and content, and to a secret split between them
    (its first part ending the heading, the rest starting the content).

    Each text is first redacted exactly as `redact_text` redacts it alone, so whatever either
    holds on its own is found and counted as it always was. Then, detector by detector in the
    fixed order, a match across what is left of the two (the heading's end joined to the
    content's start) is replaced in both, its part in each by the marker, and counted once in
    each. `scanned` says the caller kept only the detectors `detectable` found for this pair."""
    head, body = Redaction(heading), Redaction(content)
    # `scanned`: the caller ran the pre-check on the pair (`detectable`).
    wanted = set(detectors) if scanned else _pair_candidates(heading, content, detectors)
    if not wanted:
        return Redacted(heading, ()), Redacted(content, ())
    counts = tuple(_redact_alone(text, possible(text.data, wanted)) for text in (head, body))
    # What can cross: a detector whose characters meet at the joint, from the same cheap
    # conditions (which see the joint's neighbourhood).
    joint = head.data[-1:] + body.data[:1]
    crossing = [name for name in wanted if len(joint) == 2 and joint in _MEET[name]]
    if crossing:
        near = b"%b\n%b\n%b%b" % (head.data, body.data, head.data[-5:], body.data[:5])
        crossing = list(possible(near, crossing))
        bearer = b"bearer" in near.lower() if "api_token" in crossing else False
        for name in DETECTOR_NAMES:
            if name in crossing and _across(name, (head, body), bearer):
                for field_counts in counts:
                    _add(field_counts, name, 1)
    return (
        Redacted(head.text, tuple(counts[0])) if counts[0] else Redacted(heading, ()),
        Redacted(body.text, tuple(counts[-1])) if counts[-1] else Redacted(content, ()),
    )


# Per detector, the pairs of characters (the heading's last, the content's first) between which
# a match of it can cross.
_MEET: Final = {
    name: frozenset(bytes((a, b)) for a in chars.encode() for b in chars.encode())
    for name, chars in CLASSES.items()
}


def _add(counts: list[tuple[str, int]], name: str, found: int) -> None:
    """Add `found` hits of detector `name` to `counts`, kept in the fixed detector order."""
    total = dict(counts)
    total[name] = total.get(name, 0) + found
    counts[:] = [(other, total[other]) for other in DETECTOR_NAMES if other in total]


# The joints a secret split between heading and content is read across: none (the two texts
# side by side), and for api tokens also a line break ("Bearer" ending the heading, the token
# starting the content), the one separator a detector pattern reads past.
_JOINTS: Final = {name: ("", "\n") if name == "api_token" else ("",) for name in DETECTOR_NAMES}


def _across(name: str, texts: tuple[Redaction, Redaction], bearer: bool) -> bool:
    """Replace the match of detector `name` (pass by pass, joint by joint) across the heading
    and the content, if there is one: at most one match can cross where they meet, and once
    it is replaced, markers meet there. `bearer`: whether "bearer" occurs in the two."""
    head, body = texts
    for joint in _JOINTS[name]:
        heading, content = head.folded, body.folded
        found = window(name, (heading, content), joint, bearer=bearer)
        if found is None:
            continue
        stretch, low = found
        data = detection_bytes(stretch)
        if name not in possible(data, (name,)):
            continue
        cut = len(heading) - low  # where the heading ends in the stretch
        for step in steps(name):
            for start, end in find(name, step, data):
                if start < cut and end > cut + len(joint):
                    if not across_ok(name, data, start, end):
                        break
                    first = _span(head, start + low, len(heading))[0]
                    last = _span(body, 0, end - cut - len(joint))[1]
                    marker = replacement(name)
                    head.set(head.text[:first] + marker)
                    body.set(marker + body.text[last:])
                    return True
    return False
