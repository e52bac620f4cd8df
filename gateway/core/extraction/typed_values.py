"""Typed values in running text, and the dimension each is a value of: an amount of money, a
quantity with a unit (its dimension: weight, distance, score, ...), a count of a noun (its
dimension: the noun), a win-loss record, a day, a clock time, a state word.

The dimension is what two statements must share to be values of one attribute: "185 pounds"
and "172 pounds" are both weights whatever the sentence calls them, "20 videos" and "30
videos" both counts of videos, "$145,000" and "$168,000" both money. The units and state words
are closed classes of English, not the vocabulary of any one conversation.

Values of shapes a statement's typed values leave out, read only when a question asks for them
(spans of time, ordinals, places, names), are `asked_shapes`'; the words an attribute is named
by, and their stems, are `content_words`'.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from gateway.core.extraction.content_words import FUNCTION_WORDS, stem
from gateway.core.extraction.vocabulary import DAY, MONEY, NUMBER_WORDS, WEEKDAY

__all__ = [
    "HIDDEN",
    "NOT_COUNTED_STEMS",
    "STATES",
    "TYPED_NUMBER_WORDS",
    "TypedValue",
    "dimension_of",
    "partitive",
    "says_nothing",
    "size_of",
    "typed_values",
]

_WORD = re.compile(r"[A-Za-z][\w'-]*")


# What a redaction rule puts where it hid a value (`policies.detectors.replacement`): the
# assembly defence reads turns as the policy shows them, and a hidden value is no value there.
HIDDEN = re.compile(r"\[redacted\b", re.IGNORECASE)


def says_nothing(value: str) -> bool:
    """A value of function words alone ("still", "few", "both", "I"): no value, and nearly every
    sentence says it. Or a value the policy hid ("[redacted:email]"): read as a value, it would
    tell the agent, by what the bundle leaves out, whether it differs from one shown."""
    if HIDDEN.search(value):
        return True
    words = _WORD.findall(value.casefold())
    return bool(words) and all(w in FUNCTION_WORDS for w in words) and not re.search(r"\d", value)


# A unit names the dimension of the quantity it follows.
_UNITS = {
    **dict.fromkeys(("pounds", "pound", "lbs", "lb", "kg", "kgs", "kilos", "kilograms"), "weight"),
    **dict.fromkeys(("miles", "mile", "km", "kilometers", "kilometres"), "distance"),
    **dict.fromkeys(("feet", "foot", "ft", "inches", "inch", "cm", "centimeters"), "length"),
    **dict.fromkeys(("points", "pts"), "score"),
    **dict.fromkeys(("percent", "%"), "percent"),
    **dict.fromkeys(("degrees",), "degrees"),
    **dict.fromkeys(("mph",), "speed"),
    **dict.fromkeys(("times",), "times"),
    **dict.fromkeys(("dozen",), "dozen"),
    **dict.fromkeys(("stars",), "stars"),
    **dict.fromkeys(("followers", "subscribers"), "followers"),
}
# Spans of time and words that follow a number without being what is counted.
_NOT_COUNTED = frozenset(
    {
        *("second", "minute", "hour", "day", "week", "month", "year", "decade", "night"),
        *("weekend", "ago", "morning", "evening", "afternoon", "century", "age"),
        *("more", "other", "different", "few", "extra", "additional", "new", "of", "or", "and"),
        *("to", "in", "on", "at", "for", "the", "a", "an", "and", "am", "pm", "ish", "or"),
        *("way", "step", "tip", "idea", "thing", "option", "example", "reason", "type", "kind"),
        *("part", "piece", "item", "point", "question", "time", "x", "k", "s"),
    }
)
# The table's number words, and the few more a typed value reads ("a single seat").
TYPED_NUMBER_WORDS = {**NUMBER_WORDS, "single": 1, "fifteen": 15, "twenty": 20}
# State words: what a thing's status is (a closed class, as the units are).
STATES = frozenset(
    {
        *("active", "inactive", "suspended", "paused", "resumed", "cancelled", "canceled"),
        *("closed", "reopened", "open", "completed", "complete", "finished", "approved"),
        *("rejected", "pending", "enabled", "disabled", "archived", "shelved", "delayed"),
        *("postponed", "launched", "live", "shipped", "deprecated", "retired", "frozen"),
        *("terminated", "expired", "renewed", "reinstated", "blocked", "resolved", "abandoned"),
        *("discontinued", "halted", "restarted", "on hold", "in progress", "under review"),
    }
)

_DIGITS = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_QUANTITY = re.compile(
    r"(?<![\w$€£¥.,:/-])(?P<n>" + _DIGITS + "|" + "|".join(TYPED_NUMBER_WORDS) + r")"
    r"(?:\s?(?P<pct>%)| (?P<words>(?:(?-i:[A-Z][\w'-]*|[a-z][\w'-]*) ?){1,4}))",
    re.IGNORECASE,
)
# A partitive: "of" and what owns the set counted from ("the", "my", "Emma's").
_PARTITIVE = re.compile(
    r"of (?:the|my|our|your|his|her|their|these|those|(?-i:[A-Z])[\w-]*['’]s) ", re.IGNORECASE
)
_OF_THEM = re.compile(r"of (?:them|these|those)\b", re.IGNORECASE)
_WORDS_AFTER = re.compile(r"(?:[A-Za-z][\w'’-]* ?){1,4}")
_MODEL = re.compile(r"(?-i:[A-Z][\w-]*) $")
_DEFINITE = re.compile(r"\b(?:the|these|those|his|her|their|its|which|secondary|grade) $", re.I)
_YEAR = re.compile(r"(?:19|20)\d\d")
_MONEY = re.compile(MONEY + r"(?!\d|,\d)", re.IGNORECASE)
# A win-loss record: "3-2 so far", "a 5-2 record", "went 7-3 this season"; not "3-4 pm".
_RECORD = re.compile(
    r"(?<![\w.:/-])(?P<w>[1-9]\d?|0)-(?P<l>[1-9]\d?|0)(?![\w.:/-])"
    r"(?= (?:record|so far|this season|on the season|in the league)\b)"
)
_DAY = re.compile(r"\b(?:" + DAY + r")|\b" + WEEKDAY + r"\b", re.IGNORECASE)
_CLOCK = re.compile(r"\b\d{1,2}(?::\d{2})?\s?[ap]\.?m\b\.?", re.IGNORECASE)
_STATE = re.compile(
    r"(?<![\w-])['\"‘“]?(?P<state>" + "|".join(sorted(STATES, key=len, reverse=True)) + r")"
    r"['\"’”]?(?![\w-])",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class TypedValue:
    """A value found in a clause: where it stands, its text as stated, its dimension, and its
    size for an amount (money, a quantity) or None."""

    start: int
    end: int
    text: str
    dimension: str
    size: float | None = None
    # A count of part of a set ("3 of Emma's recipes"): it counts what the verb did with some
    # of them, never how many there are.
    partitive: bool = False


NOT_COUNTED_STEMS = frozenset({*_NOT_COUNTED, *(stem(w) for w in _NOT_COUNTED)})


def size_of(raw: str) -> float | None:
    folded = raw.casefold().replace(",", "")
    if folded in TYPED_NUMBER_WORDS:
        return float(TYPED_NUMBER_WORDS[folded])
    try:
        return float(folded)
    except ValueError:
        return None


def _money_size(text: str) -> float | None:
    match = re.search(r"(\d[\d,]*(?:\.\d+)?)\s?(k|m|million|billion|thousand)?", text, re.I)
    if match is None:
        return None
    number = float(match.group(1).replace(",", ""))
    scale = {"k": 1e3, "thousand": 1e3, "m": 1e6, "million": 1e6, "billion": 1e9}
    return number * scale.get((match.group(2) or "").casefold(), 1.0)


def _quantity(match: re.Match[str], said_before: str) -> TypedValue | None:
    """A number and what follows it: a unit's dimension, or the noun counted, the last of the
    content words after it ("15 Crash Course videos", "two free night's stays"), or for "two of
    them" the last plural noun said before it (`said_before`: the sentence before the clause);
    None for a span of time or a number that counts nothing named."""
    size = size_of(match.group("n"))
    before = match.string[: match.start()]
    if size is None or _MODEL.search(before) or _DEFINITE.search(before):
        return None  # "the Technics 1200 turntables", "the two people": no count stated
    if match.group("pct"):
        return TypedValue(match.start(), match.end(), match.group(0), "percent", size)
    if _OF_THEM.match(match.string, match.start("words")):
        return _of_them(match, size, said_before + " " + before)
    offset, words, partitive = _counted(match)
    run = 0
    for index, word in enumerate(words):
        folded = word.casefold().strip("'’")
        if folded in _UNITS and index == 0:
            end = offset + len(word)
            return TypedValue(
                match.start(), end, match.string[match.start() : end], _UNITS[folded], size
            )
        if folded in FUNCTION_WORDS or not folded.replace("'", "").replace("-", "").isalpha():
            break
        if stem(folded) in NOT_COUNTED_STEMS and not folded.endswith(("'s", "’s")):
            return None  # "40 year old": a span of time inside the phrase
        run = index + 1
    if run == 0 or _YEAR.fullmatch(match.group("n")) or match.group("n").casefold() == "one":
        return None  # "a 2015 Toyota Camry": a year; "one shelf": no count worth a claim
    noun = stem(words[run - 1].strip("'’"))
    if noun in NOT_COUNTED_STEMS or len(noun) < 3:
        return None
    end = offset + len(" ".join(words[:run]))
    text = match.string[match.start() : end]
    return TypedValue(match.start(), end, text, f"count_{noun}", size, partitive)


def _counted(match: re.Match[str]) -> tuple[int, list[str], bool]:
    """Where the words naming what a number counts start, those words, and whether they follow
    a partitive ("3 of Emma's recipes", "two of the books": the noun after the owner)."""
    partitive = _PARTITIVE.match(match.string, match.start("words"))
    if partitive is None:
        return match.start("words"), match.group("words").split(), False
    after = _WORDS_AFTER.match(match.string, partitive.end())
    return partitive.end(), after.group(0).split() if after else [], True


def _of_them(match: re.Match[str], size: float, said_before: str) -> TypedValue | None:
    """ "Two of them": a count of part of what the last plural noun said before names."""
    noun = _antecedent(said_before)
    pronoun = _OF_THEM.match(match.string, match.start("words"))
    if noun is None or pronoun is None or _YEAR.fullmatch(match.group("n")):
        return None
    end = pronoun.end()
    text = match.string[match.start() : end]
    return TypedValue(match.start(), end, text, f"count_{stem(noun)}", size, partitive=True)


_PLURAL = re.compile(r"(?<![\w'’-])([a-z][a-z-]{2,}(?<![su'’]s)(?<!ss)s)(?![\w'’-])")
# Words before a word in -s that make it a verb ("she loves", "it costs").
_SUBJECTS = frozenset({"he", "she", "it", "who", "that", "which", "everyone", "nobody"})


def _antecedent(text: str) -> str | None:
    """The last plural noun of `text` ("recipes" of "I've been loving Emma's recipes"): what a
    later "two of them" counts."""
    folded = text.casefold()
    for match in reversed(list(_PLURAL.finditer(folded))):
        word = match.group(1)
        previous = folded[: match.start()].split()[-1:]
        if word in FUNCTION_WORDS or stem(word) in NOT_COUNTED_STEMS:
            continue
        if previous and previous[0] in _SUBJECTS:
            continue
        return word
    return None


def partitive(value: str) -> bool:
    """Whether a stated value counts part of a set ("3 of Emma's recipes")."""
    found = typed_values(value)
    return bool(found) and found[0].partitive


def dimension_of(value: str) -> str | None:
    """The dimension of a stated value, read again from its text (a known claim's value)."""
    if re.fullmatch(r"\d{1,2}-\d{1,2}", value.strip()):
        return "record"  # its context ("so far", "record") is not in the value
    found = typed_values(value)
    return found[0].dimension if found else None


def _plain(dimension: str) -> Callable[[re.Match[str]], TypedValue | None]:
    def build(match: re.Match[str]) -> TypedValue | None:
        text = match.group("state") if dimension == "state" else match.group(0).strip()
        size = _money_size(text) if dimension == "money" else None
        return TypedValue(match.start(), match.end(), text, dimension, size)

    return build


# Tried in this order, none overlapping: money and records before the bare numbers inside them.
_FINDERS = (
    (_MONEY, _plain("money")),
    (_RECORD, _plain("record")),
    (_CLOCK, _plain("clock")),
    (_DAY, _plain("day")),
    (_QUANTITY, None),  # `_quantity`, with the clause's antecedent
    (_STATE, _plain("state")),
)


def typed_values(clause: str, said_before: str = "") -> list[TypedValue]:
    """The typed values of `clause`, in order, none overlapping; "two of them" counts the
    last plural noun said before it, in the clause or in `said_before` (the sentence before
    the clause), or nothing without one."""
    found: list[TypedValue] = []
    taken = bytearray(len(clause) + 1)  # the characters a value found stands on
    for regex, build in _FINDERS:
        for match in regex.finditer(clause):
            value = _quantity(match, said_before) if build is None else build(match)
            if value is not None and not any(taken[value.start : value.end]):
                found.append(value)
                taken[value.start : value.end] = b"\x01" * (value.end - value.start)
    return sorted(found, key=lambda v: v.start)
