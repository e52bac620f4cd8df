"""The one normalization every redaction detector reads text through, and its map back.

The detectors (policies/patterns.py) are ASCII patterns, and memory text is written by agents:
a secret can be written so that it looks the same to a reader and matches nothing, with
zero-width characters inside it, fullwidth or Arabic-Indic digits, a Cyrillic "а" in an email,
an en dash between the groups of a card number. So detection runs on a folded copy of the text
and redaction replaces the corresponding span of the text as written, through an offset map.

Each character is folded on its own (so the map is a list of spans, one per folded character):

- format characters (category Cf: zero-width space and joiners, word joiner, BOM, soft hyphen,
  bidirectional controls, tags) and the Hangul fillers (default-ignorable letters) are removed;
- combining marks (Mn, Mc, Me) are removed; in the map they belong to the character before
  them, so redacting that character takes its marks with it;
- decimal digits of every script (Nd) become ASCII digits, dashes (Pd) and the minus sign "-",
  space separators (Zs) a space, line and paragraph separators a newline;
- anything else is decomposed by compatibility (NFKD: fullwidth and mathematical letters and
  digits, "＠" and "﹫", ligatures, circled digits, accented letters) and what that gives is
  folded again, its marks dropped. This is NFKC's compatibility mapping; composing again, as
  NFKC would, is left out on purpose: it would turn "e" + U+0301 back into "é", which no ASCII
  pattern matches, so a combining mark could still hide a letter;
- Latin look-alikes from other scripts (Cyrillic, Greek, Armenian) become the Latin letter they
  are confused with, and a few dot look-alikes ".": a small table taken from Unicode TR39's
  confusables.txt (https://www.unicode.org/Public/security/latest/confusables.txt), limited to
  the characters of the detectors' alphabets.

Everything else is kept as it is. Texts are compared for nothing but detection: the folded text
is never shown, stored or recorded. Pure ASCII text is its own normal form (the fast path).
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from collections.abc import Sequence
from itertools import accumulate
from typing import Final

__all__ = ["CONFUSABLES", "NormalForm", "fold", "fold_char", "normal_form", "offset_map"]

# From TR39 confusables.txt (the source character → its Latin prototype), for the letters of
# the detectors' alphabets; characters that decompose (Ё, ї, Ά…) reach these through NFKD.
CONFUSABLES: Final[dict[str, str]] = {
    # Cyrillic, lower case
    "а": "a", "с": "c", "ԁ": "d", "е": "e", "һ": "h", "і": "i", "ј": "j", "ӏ": "l",
    "о": "o", "р": "p", "ԛ": "q", "ѕ": "s", "у": "y", "ү": "y", "х": "x", "ԝ": "w",
    # Cyrillic, upper case
    "А": "A", "В": "B", "С": "C", "Е": "E", "Н": "H", "І": "I", "Ӏ": "I", "Ј": "J",
    "К": "K", "М": "M", "О": "O", "Р": "P", "Ԛ": "Q", "Ѕ": "S", "Т": "T", "У": "Y",
    "Ү": "Y", "Х": "X", "Ԝ": "W",
    # Greek
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M",
    "Ν": "N", "Ο": "O", "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X", "Ϲ": "C", "ϒ": "Y",
    "α": "a", "γ": "y", "ι": "i", "ν": "v", "ο": "o", "ρ": "p", "υ": "u", "ϲ": "c", "ϳ": "j",
    # Armenian
    "հ": "h", "ո": "n", "ս": "u", "օ": "o",
    # Latin letters outside ASCII that read as ASCII ones
    "ı": "i", "ȷ": "j", "ɑ": "a", "ɡ": "g",
    # Minus and dot look-alikes that are not dashes (Pd) and do not decompose to "."
    "−": "-", "˗": "-", "⁃": "-", "➖": "-",
    "·": ".", "•": ".", "‧": ".", "∙": ".", "⋅": ".", "・": ".", "。": ".",
}  # fmt: skip

# Default-ignorable letters (category Lo, so not caught as Cf): the Hangul fillers.
_IGNORABLE: Final = frozenset("\u115f\u1160\u3164\uffa0")


def fold_char(char: str) -> str:
    """The folded form of one character: "" when it is removed, else one or more characters."""
    if char.isascii():
        return char
    found = CONFUSABLES.get(char)
    if found is not None:
        return found
    category = unicodedata.category(char)
    if category == "Cf" or category[0] == "M" or char in _IGNORABLE:
        return ""
    if category == "Nd":
        return str(unicodedata.decimal(char))
    if category == "Pd":
        return "-"
    if category == "Zs":
        return " "
    if category in ("Zl", "Zp"):
        return "\n"
    decomposed = unicodedata.normalize("NFKD", char)
    if decomposed == char:
        return char
    # NFKD is idempotent: each character it gives decomposes no further, so this recursion
    # goes one level deep.
    return "".join(map(fold_char, decomposed))


class _Table(dict[int, str]):
    """Code point → folded form, for str.translate, filled as characters are met (bounded: an
    adversary's text of every code point must not grow it without end)."""

    def __missing__(self, code: int) -> str:
        folded = fold_char(chr(code))
        if len(self) < _TABLE_LIMIT:
            self[code] = folded
        return folded


_TABLE_LIMIT: Final = 1 << 16
_TABLE: Final = _Table({code: chr(code) for code in range(128)})
# Runs of non-ASCII characters, the only ones folding can change (Python's `re` is linear on
# a single character class).
_NON_ASCII: Final = re.compile(r"([^\x00-\x7f]+)")


# Folded runs by run (words, mostly: a text's non-ASCII runs repeat), bounded as `_TABLE` is.
_RUNS: Final[dict[str, str]] = {}
_RUNS_LIMIT: Final = 1 << 14
_RUN_LENGTH: Final = 32


def _fold_run(run: str) -> str:
    folded = run.translate(_TABLE)
    if len(run) <= _RUN_LENGTH and len(_RUNS) < _RUNS_LIMIT:
        _RUNS[run] = folded
    return folded


def fold(text: str) -> str:
    """`text` as the detectors read it (the folded text alone, without the map)."""
    if text.isascii():
        return text
    parts = _NON_ASCII.split(text)  # ASCII, non-ASCII, ASCII, …: only the odd ones change
    runs = _RUNS
    parts[1::2] = [runs.get(run) or _fold_run(run) for run in parts[1::2]]
    return "".join(parts)


# The same runs cut into chunks, so that mapping an offset back never walks a long run.
_CHUNKS: Final = re.compile(r"([^\x00-\x7f]{1,64})")


class NormalForm:
    """A text's folded form (`text`), and the way back to the text as written (`source`): the
    folded character at `i` stands for one character of the source and the combining marks
    that follow it (`span`). A removed character stands for nothing: it lies between spans.

    The map is kept by segment (a run of ASCII, which maps to itself, or a chunk of at most 64
    other characters), made when first asked for, and worked out within a chunk only for the
    offsets asked for: folding costs what `fold` costs, a text with nothing to redact never
    has its map made, and mapping back never walks more than a chunk."""

    __slots__ = ("_folded", "_sources", "source", "text")

    def __init__(self, source: str) -> None:
        self.source = source
        self.text = fold(source)
        self._folded: list[int] | None = None

    def _segments(self) -> list[int]:
        """Where each segment starts in the folded text (kept: `_folded`) and in the source
        (`_sources`, with the source's end last). Segments alternate: ASCII, then a chunk of
        other characters (either maybe empty)."""
        parts = _CHUNKS.split(self.source)
        lengths = list(map(len, parts))
        folded = lengths.copy()
        folded[1::2] = [len(part.translate(_TABLE)) for part in parts[1::2]]
        self._sources = list(accumulate(lengths, initial=0))
        self._folded = list(accumulate(folded, initial=0))[:-1]
        return self._folded

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The source span of the folded characters [start, end) (start < end)."""
        if self.text is self.source:  # pure ASCII: the identity
            return start, end
        return self._source(start)[0], self._source(end - 1)[1]

    def _source(self, at: int) -> tuple[int, int]:
        """The source span of the folded character at `at`, its marks included."""
        starts = self._folded if self._folded is not None else self._segments()
        # The last segment starting at or before `at`: of segments that start at the same
        # place, the one after those that fold to nothing, which holds `at`.
        segment = bisect_right(starts, at) - 1
        source = self.source
        if segment % 2 == 0:  # ASCII
            position = self._sources[segment] + at - starts[segment]
        else:
            folded = starts[segment]
            for position in range(self._sources[segment], self._sources[segment + 1]):
                folded += len(_TABLE[ord(source[position])])
                if folded > at:
                    break
        end = position + 1
        # The marks that follow (maybe after removed characters) belong to this character.
        for following in range(position + 1, len(source)):
            char = source[following]
            if _TABLE[ord(char)]:
                break
            if unicodedata.category(char)[0] == "M":
                end = following + 1
        return position, end

    @property
    def starts(self) -> Sequence[int]:
        """Per folded character, where its source starts (the whole map, for tests)."""
        return offset_map(self.source)[0]

    @property
    def ends(self) -> Sequence[int]:
        """Per folded character, where its source ends, its marks included."""
        return offset_map(self.source)[1]


def normal_form(text: str) -> NormalForm:
    """`text` folded (`fold(text)` is its `text`), with the way back to `text`."""
    return NormalForm(text)


def offset_map(text: str) -> tuple[Sequence[int], Sequence[int]]:
    """The whole map of `normal_form(text)`, character by character: (starts, ends), one of
    each per folded character. The specification `NormalForm.span` follows; slow."""
    if text.isascii():
        return range(len(text)), range(1, len(text) + 1)
    starts: list[int] = []
    ends: list[int] = []
    for at, char in enumerate(text):
        folded = _TABLE[ord(char)]
        if folded:
            starts.extend([at] * len(folded))
            ends.extend([at + 1] * len(folded))
        elif ends and unicodedata.category(char)[0] == "M":
            # A combining mark belongs to the character before it (every folded character
            # that character gave, when it gave several).
            origin = starts[-1]
            back = len(ends) - 1
            while back >= 0 and starts[back] == origin:
                ends[back] = at + 1
                back -= 1
    return starts, ends
