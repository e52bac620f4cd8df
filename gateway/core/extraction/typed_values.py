"""Typed values in running text, and the dimension each is a value of: an amount of money, a
quantity with a unit (its dimension: weight, distance, score, ...), a count of a noun (its
dimension: the noun), a win-loss record, a day, a clock time, a state word.

The dimension is what two statements must share to be values of one attribute: "185 pounds"
and "172 pounds" are both weights whatever the sentence calls them, "20 videos" and "30
videos" both counts of videos, "$145,000" and "$168,000" both money. The units and state words
are closed classes of English, not the vocabulary of any one conversation.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass

from gateway.core.extraction.vocabulary import DAY, MONEY, NUMBER_WORDS, WEEKDAY

__all__ = [
    "FUNCTION_WORDS",
    "STATES",
    "TypedValue",
    "dimension_of",
    "ordinal_counts",
    "partitive",
    "places",
    "proper_names",
    "says_nothing",
    "stem",
    "time_spans",
    "typed_values",
]

# English function words and light adverbs: what an attribute's name is not made of.
FUNCTION_WORDS = frozenset(
    {
        *("a", "an", "the", "this", "that", "these", "those", "my", "our", "your", "his", "her"),
        *("their", "its", "i", "we", "you", "he", "she", "they", "it", "me", "us", "them"),
        *("is", "are", "was", "were", "be", "been", "being", "am", "'m", "'re", "'s", "'ve"),
        *("have", "has", "had", "do", "does", "did", "got", "get", "gets", "will", "would"),
        *("and", "or", "but", "so", "of", "in", "on", "at", "to", "for", "from", "with", "by"),
        *("as", "about", "into", "over", "than", "then", "now", "just", "already", "still"),
        *("currently", "actually", "really", "finally", "officially", "also", "too", "very"),
        *("far", "up", "down", "out", "around", "roughly", "approximately", "only", "even"),
        *("all", "some", "any", "more", "most", "much", "many", "lot", "lots", "total"),
        *("since", "until", "after", "before", "while", "when", "where", "which", "who"),
        *("what", "how", "why", "there", "here", "if", "because", "like", "including", "per"),
        *("i'm", "i've", "we're", "we've", "it's", "i'd", "i'll", "we'll", "not", "no", "yes"),
        *("by", "way", "anyway", "btw", "well", "oh", "hey", "hi", "thanks", "new", "current"),
        *("at", "least", "almost", "nearly", "about", "recently", "lately", "today", "ago"),
        *("few", "both", "several", "each", "either", "neither", "other", "others", "same"),
    }
)

_WORD = re.compile(r"[A-Za-z][\w'-]*")


# What a redaction rule puts where it hid a value (`policies.detectors.replacement`): the
# assembly defence reads turns as the policy shows them, and a hidden value is no value there.
_HIDDEN = re.compile(r"\[redacted\b", re.IGNORECASE)


def says_nothing(value: str) -> bool:
    """A value of function words alone ("still", "few", "both", "I"): no value, and nearly every
    sentence says it. Or a value the policy hid ("[redacted:email]"): read as a value, it would
    tell the agent, by what the bundle leaves out, whether it differs from one shown."""
    if _HIDDEN.search(value):
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
_NUMBER_WORDS = {**NUMBER_WORDS, "single": 1, "fifteen": 15, "twenty": 20}
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
    r"(?<![\w$€£¥.,:/-])(?P<n>" + _DIGITS + "|" + "|".join(_NUMBER_WORDS) + r")"
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


@functools.lru_cache(maxsize=1 << 16)  # pure, and most words of a conversation recur
def stem(word: str) -> str:
    """A crude stem, enough to meet "tried"/"try", "videos"/"video", "making"/"make"."""
    word = word.casefold().removesuffix("'s").removesuffix("’s")
    for suffix, instead in (("ies", "y"), ("ied", "y"), ("ing", ""), ("ed", ""), ("es", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)] + instead
            break
    else:
        if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
            word = word[:-1]
    return word.rstrip("e") if len(word) > 3 else word


_NOT_COUNTED_STEMS = frozenset({*_NOT_COUNTED, *(stem(w) for w in _NOT_COUNTED)})


def _size(raw: str) -> float | None:
    folded = raw.casefold().replace(",", "")
    if folded in _NUMBER_WORDS:
        return float(_NUMBER_WORDS[folded])
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
    size = _size(match.group("n"))
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
        if stem(folded) in _NOT_COUNTED_STEMS and not folded.endswith(("'s", "’s")):
            return None  # "40 year old": a span of time inside the phrase
        run = index + 1
    if run == 0 or _YEAR.fullmatch(match.group("n")) or match.group("n").casefold() == "one":
        return None  # "a 2015 Toyota Camry": a year; "one shelf": no count worth a claim
    noun = stem(words[run - 1].strip("'’"))
    if noun in _NOT_COUNTED_STEMS or len(noun) < 3:
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
        if word in FUNCTION_WORDS or stem(word) in _NOT_COUNTED_STEMS:
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


# Spans of time, which `typed_values` leaves out: in a statement a span is more often how long
# something took than the value of an attribute (read as values, they joined unrelated
# statements: bench/RESULTS.md, issue 33). A question can ask for one ("how long", "how
# often", "best time"), and then the spans are what answer it (`gateway.core.asked_values`).
_SPAN_COUNT = (
    r"(?:\d+(?:\.\d+)?|an?|" + "|".join(_NUMBER_WORDS) + r"|thirty|forty|fifty|sixty|"
    r"a couple of|a few|half an?)"
)
_UNIT_DAYS = {
    "second": 1 / 86400,
    "minute": 1 / 1440,
    "hour": 1 / 24,
    "day": 1.0,
    "night": 1.0,
    "week": 7.0,
    "weekend": 7.0,
    "month": 30.0,
    "year": 365.0,
    "decade": 3650.0,
}
_SPAN_UNIT = r"(?P<unit>second|minute|hour|day|week|month|year|decade)s?"
_DURATION = re.compile(
    r"(?<![\w$.:-])(?P<n>"
    + _SPAN_COUNT
    + r")(?P<half>[ -]and[ -]a[ -]half)?[ -]"
    + _SPAN_UNIT
    + r"(?P<after> and a half)?(?![\w-])",
    re.IGNORECASE,
)
_FREQUENCY = re.compile(
    r"(?<![\w-])(?:(?P<n>once|twice|thrice|" + _SPAN_COUNT + r" times?)(?: a| per| each| every)"
    r" (?P<per>day|night|week|weekend|month|year)|every (?P<other>other )?(?P<each>day|night|week|"
    r"weekend|month|year|morning|evening)|(?P<adverb>daily|nightly|weekly|monthly|yearly))(?![\w-])",
    re.IGNORECASE,
)
_ELAPSED = re.compile(r"(?<![\d:.$])\d{1,2}:\d{2}(?::\d{2})?(?![\d:])(?!\s?[ap]\.?m\b)", re.I)
_SPAN_WORDS = {"a": 1.0, "an": 1.0, "a couple of": 2.0, "a few": 3.0, "half a": 0.5}
_SPAN_WORDS |= {"half an": 0.5, "once": 1.0, "twice": 2.0, "thrice": 3.0, "thirty": 30.0}
_SPAN_WORDS |= {"forty": 40.0, "fifty": 50.0, "sixty": 60.0}


def _span_size(raw: str) -> float | None:
    folded = " ".join(raw.casefold().split()).removesuffix(" times").removesuffix(" time")
    return _SPAN_WORDS.get(folded) or _size(folded)


def time_spans(text: str) -> list[TypedValue]:
    """The spans of time of `text`, in order: durations ("about 6 months", "an hour and a
    half": dimension `duration`, size in days), frequencies ("three times a week", "every
    other day", "daily": `frequency`, times a week) and elapsed times ("25:50": `elapsed`,
    size in seconds)."""
    found: list[TypedValue] = []
    for match in _DURATION.finditer(text):
        size = _span_size(match.group("n"))
        if size is not None:
            size = (
                size + (0.5 if match.group("half") or match.group("after") else 0.0)
            ) * _UNIT_DAYS[match.group("unit").casefold()]
        found.append(TypedValue(match.start(), match.end(), match.group(0), "duration", size))
    for match in _FREQUENCY.finditer(text):
        found.append(
            TypedValue(match.start(), match.end(), match.group(0), "frequency", _weekly(match))
        )
    for match in _ELAPSED.finditer(text):
        parts = [int(p) for p in match.group(0).split(":")]
        seconds = sum(p * 60**i for i, p in enumerate(reversed(parts)))
        found.append(
            TypedValue(match.start(), match.end(), match.group(0), "elapsed", float(seconds))
        )
    found.sort(key=lambda v: (v.start, -v.end))
    # A frequency holds a duration's words ("once a week"): the longer span is the value.
    kept: list[TypedValue] = []
    for value in found:
        if kept and value.start < kept[-1].end:
            continue
        kept.append(value)
    return kept


def _weekly(match: re.Match[str]) -> float | None:
    """How many times a week a frequency says."""
    if match.group("adverb"):
        per = match.group("adverb").casefold().removesuffix("ly").replace("dai", "day")
        return 7.0 / _UNIT_DAYS["day" if per == "night" else per]
    if match.group("each"):
        each = match.group("each").casefold()
        days = _UNIT_DAYS.get(each, 1.0) * (2 if match.group("other") else 1)
        return 7.0 / days
    times = _span_size(match.group("n"))
    per = _UNIT_DAYS[match.group("per").casefold()]
    return None if times is None else times * 7.0 / per


# "My 5th project", "the 10th time": an ordinal of the speaker's own series counts what it
# numbers so far. Read only when a question asks how many (`gateway.core.asked_values`): in a
# statement an ordinal is as often a rank or a name ("5th Avenue", "my 2nd choice").
_ORDINAL = re.compile(
    r"(?<![\w.,/-])(?P<n>\d{1,3})(?:st|nd|rd|th)\b (?P<words>(?:[A-Za-z][\w'-]* ?){1,3})",
    re.IGNORECASE,
)
_MONTH_BEFORE = re.compile(
    r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.? $", re.IGNORECASE
)


def _content_run(words: str) -> list[str]:
    """The words that open `words` up to a function word or one not of letters: the noun
    phrase after an ordinal or a preposition ("oil painting" of "oil painting since ...")."""
    run: list[str] = []
    for word in words.split():
        if word.casefold() in FUNCTION_WORDS or not word.replace("-", "").isalpha():
            break
        run.append(word)
    return run


def ordinal_counts(text: str) -> list[TypedValue]:
    """The counts ordinals state ("my 5th project": `count_project`, 5; "the 10th time":
    `times`, 10), in order; a date's ordinal ("May 5th") counts nothing."""
    found: list[TypedValue] = []
    for match in _ORDINAL.finditer(text):
        if _MONTH_BEFORE.search(text[: match.start()]):
            continue
        run = _content_run(match.group("words"))
        if not run:
            continue
        noun = stem(run[-1])
        dimension = "times" if run[-1].casefold() == "time" else f"count_{noun}"
        if noun in _NOT_COUNTED_STEMS and dimension != "times":
            continue
        end = match.start("words") + len(" ".join(run))
        size = float(match.group("n"))
        found.append(TypedValue(match.start(), end, text[match.start() : end], dimension, size))
    return found


# Where a thing is or where one went: a spatial preposition and what it names ("above my bed",
# "next to the window"), or a place's name after "to", "in", "at" or "from" ("to Paris"). Read
# only when a question asks where (`gateway.core.asked_values`): in statements nearly every
# sentence says where something happened.
_SPATIAL = re.compile(
    r"\b(?:above|below|under|underneath|beneath|behind|beside|next to|over|across from|"
    r"opposite|on top of|in front of) (?:my|the|our|your|his|her|their) (?P<words>(?:[A-Za-z][\w'-]* ?){1,4})",
    re.IGNORECASE,
)
_DESTINATION = re.compile(
    r"\b(?:to|in|at|from|visited|visiting) (?P<name>(?-i:[A-Z][a-z][\w'-]*)(?: (?-i:[A-Z][a-z][\w'-]*)){0,2})",
)


def places(text: str) -> list[TypedValue]:
    """The places `text` names (dimension `place`), in order: spatial phrases ("above my bed")
    and places' names after a preposition of place or motion ("to Paris")."""
    found: list[TypedValue] = []
    for match in _SPATIAL.finditer(text):
        run = _content_run(match.group("words"))
        if run:
            end = match.start("words") + len(" ".join(run))
            found.append(TypedValue(match.start(), end, text[match.start() : end], "place"))
    for match in _DESTINATION.finditer(text):
        if not any(v.start <= match.start() < v.end for v in found):
            name = match.group("name")
            found.append(TypedValue(match.start("name"), match.end("name"), name, "place"))
    return sorted(found, key=lambda v: v.start)


# A word of a name: capitalized or with a capital inside ("T-Mobile", "iPhone", "KubeCon"), a
# title ("Dr."), or a model number closing one ("Ioniq 5", "X1 Carbon"). Read only when a
# question asks which or who (`gateway.core.asked_values`): in statements nearly every
# sentence names something.
_NAME_TOKEN = re.compile(r"[\w&'’.-]+")
_TITLES = frozenset({"dr", "mr", "mrs", "ms", "mx", "prof"})
_NOT_NAMES = frozenset(
    {
        *("i", "i'm", "i've", "i'd", "i'll", "i’m", "i’ve", "ok", "okay", "omg", "lol", "btw"),
        *("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"),
        *("mondays", "tuesdays", "wednesdays", "thursdays", "fridays", "saturdays", "sundays"),
        *("january", "february", "march", "april", "may", "june", "july", "august"),
        *("september", "october", "november", "december", "jan", "feb", "mar", "apr", "jun"),
        *("jul", "aug", "sep", "sept", "oct", "nov", "dec"),
    }
)


def proper_names(sentence: str) -> list[TypedValue]:
    """The names one sentence states (dimension `name`), in order: runs of capitalized words,
    possessives cut ("Okonkwo's practice": "Okonkwo"). A sentence's first word is capitalized
    whatever it is, so it opens a name only when another capitalized word follows it; days,
    months and "I" name nothing here; a sentence in capitals is shouted, not named."""
    letters = [c for c in sentence if c.isalpha()]
    if letters and sum(c.isupper() for c in letters) > len(letters) / 2:
        return []
    found: list[TypedValue] = []
    run: list[re.Match[str]] = []

    def close() -> None:
        words = list(run)
        at_start = bool(words) and not sentence[: words[0].start()].strip(" \"'‘“([")
        if words and not (at_start and len(words) == 1):
            start, end = words[0].start(), words[-1].end()
            text = sentence[start:end].rstrip(".'’\"”").removesuffix("'s").removesuffix("’s")
            if text.casefold() not in _TITLES:
                found.append(TypedValue(start, start + len(text), text, "name"))
        run.clear()

    for match in _NAME_TOKEN.finditer(sentence):
        token = match.group(0).strip(".'’-")
        folded = token.casefold()
        gap = sentence[run[-1].end() : match.start()] if run else " "
        if gap != " ":
            close()
        opening = not run and not sentence[: match.start()].strip(" \"'‘“([")
        capital = (
            token[:1].isalpha()
            and any(c.isupper() for c in token)
            and folded not in _NOT_NAMES
            # A sentence's first word is capitalized whatever it is: "My", "So" open no name.
            and not (opening and folded in FUNCTION_WORDS)
        )
        if capital or (run and token.isdigit()):
            run.append(match)
        else:
            close()
    close()
    return found
