"""Values of the shapes a statement's typed values (`typed_values`) leave out, read only when a
question asks for one (`gateway.core.asked_values`): spans of time ("about 6 months", "three
times a week", "25:50"), the counts ordinals state ("my 5th project"), places ("above my bed",
"to Paris") and names ("Dr. Okafor", "iPhone"). In a statement each is as often something else
than the value of an attribute (how long something took, a rank, where something happened, any
name a sentence says); under a question that asks for one, it is what answers.
"""

from __future__ import annotations

import re

from gateway.core.extraction.content_words import FUNCTION_WORDS, stem
from gateway.core.extraction.typed_values import (
    NOT_COUNTED_STEMS,
    TYPED_NUMBER_WORDS,
    TypedValue,
    size_of,
)

__all__ = ["ordinal_counts", "places", "proper_names", "time_spans"]

# Spans of time, which `typed_values` leaves out: in a statement a span is more often how long
# something took than the value of an attribute (read as values, they joined unrelated
# statements: bench/RESULTS.md, issue 33). A question can ask for one ("how long", "how
# often", "best time"), and then the spans are what answer it (`gateway.core.asked_values`).
_SPAN_COUNT = (
    r"(?:\d+(?:\.\d+)?|an?|" + "|".join(TYPED_NUMBER_WORDS) + r"|thirty|forty|fifty|sixty|"
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
    return _SPAN_WORDS.get(folded) or size_of(folded)


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
        if noun in NOT_COUNTED_STEMS and dimension != "times":
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
