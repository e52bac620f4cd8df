"""A statement split into a subject, an attribute phrase and a typed value, by the sentence's
structure rather than by a listed phrasing.

- The value: each typed value of a clause (`typed_values`).
- The subject: the nearest subject before the value in its clause, the speaker's or another's
  (`holders`: someone else's value gives no statement). A named thing opening the clause
  ("Project Atlas is in 'Active' status") holds its state.
- The attribute phrase: the content words between the subject and the value ("my salary is",
  "I've completed", "tried making it at home"), and what narrows a count after it ("3
  engineers on the platform team", "2 cups of flour"). It is matched by similarity
  (`resolution`), so it need not be spelled the same way twice.

A clause is cut as `holders.clauses` cuts it; each clause holds its own values. A value said
of a dated event is that event's: a statement is narrowed by the dates its clause is said at.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from gateway.core.extraction.content_words import FUNCTION_WORDS, stem
from gateway.core.extraction.holders import (
    OTHERS,
    SPEAKER,
    SPEAKER_OWNS,
    TOKEN,
    has_subject,
    nearest_subject,
    read_clauses,
)
from gateway.core.extraction.typed_values import TypedValue, typed_values

__all__ = ["DATE_WORD", "MAX_VALUES", "Triple", "triples"]

# A clause with more values than this is a list (a pasted table, prices one after another):
# it states no one attribute's value, and reading each would cost its length every time.
MAX_VALUES = 6

_WHEN = re.compile(r"\b(?:on|at|is|are|every|to|for|moved to)\s*$", re.IGNORECASE)
_DELTA = re.compile(
    r"\b(?:lost|gained|gain|lose|losing|gaining|by|another|extra|additional|"
    r"than|more|less|minus|plus)\s+(?:about |around |nearly |almost |roughly )?$",
    re.IGNORECASE,
)
_WEEKDAYS = re.compile(r"^(?:every )?(?-i:[A-Z][a-z]+day)s?$")
_RELATIVE = frozenset({"which", "that", "who", "whose", "where", "whom"})
_WITH = re.compile(r"\bwith (?:a |an |the |about |around |only |just )?$", re.IGNORECASE)
# Named things whose state a clause states: a capitalized name, optionally after "the".
_NAMED = re.compile(r"^(?:the |our |my )?(?P<name>(?-i:[A-Z][\w'&-]*(?: [A-Z][\w'&-]*){0,3}))\b")
_STATE_VERBS = (
    r"(?:(?:'s|is|was|are|were|has been|have been|got|just got|went|stays|remains|became|"
    r"is now|was just|got officially|is officially|has)\b(?: (?:now|officially|temporarily|"
    r"currently|finally|just|been|back|in|put on|placed on|marked|set to|moved to))*)"
)
_STATE_VERB = re.compile("^" + _STATE_VERBS, re.IGNORECASE)
# A definite thing's state: "the gym near my office is closed", "our order got delayed", "the
# gym near my office reopened": the thing is the noun after the determiner, what follows a
# preposition only says which one.
_THING_STATE = re.compile(
    r"^(?:the|our|my) (?P<name>[a-z][\w-]*"
    r"(?: (?!(?:is|was|are|were|got|has|have|went|just)\b|[a-z]+ly\b|[a-z]+s\b)[a-z][\w-]*)?)"
    r"(?: (?:near|at|on|in|by|behind|next to|across from|around|down) [^,;]{1,40}?)?"
    r"(?: (?P<verb>" + _STATE_VERBS + r"))?\s*['\"‘“]?$",
    re.IGNORECASE,
)
# What a verb acting on something is followed by: "my manager approved my vacation".
_OBJECTS = frozenset(
    {"a", "an", "the", "my", "our", "your", "his", "her", "their", "its", "this", "that"}
    | {"these", "those", "some", "it", "them", "him", "me", "us"}
)
# What narrows a count: "on the platform team", "of flour"; a span of time does not.
_NARROWER = re.compile(
    r"^\s*(?:(?:a|an|per|each|every) (?:month|year|week|day) )?"  # a cadence first
    r"(?:on|in|at|for|of|from) (?:the |my |our |a |an )?(?P<words>(?:[A-Za-z][\w'-]* ?){1,3})"
)
# Verbs that say a value changed hands or is held, not what it is of ("paying $1,975").
_LIGHT_VERBS = frozenset(
    {"pay", "paid", "spend", "spent", "cost", "costs", "make", "made", "earn", "earned", "owe"}
    | {"got", "get", "need", "needs", "save", "saved", "put", "bring", "brought", "charge"}
)
_TIME_WORDS = frozenset(
    {"past", "last", "week", "weeks", "month", "months", "year", "years", "day", "days"}
    | {"moment", "total", "row", "time", "times", "now", "far", "while", "morning", "night"}
)


@dataclass(frozen=True, slots=True)
class Triple:
    """One statement: whose (`subject`: "user" or a named thing's slug), what (`words`: the
    attribute phrase's stems), and the typed value."""

    subject: str
    words: tuple[str, ...]
    value: TypedValue
    clause: str
    # What narrows it ("on the platform team", "of flour"): two statements narrowed to
    # different things are two claims, whatever else they share.
    narrower: tuple[str, ...] = ()
    verbal: bool = False  # its attribute phrase is only verbs: it names no attribute


def _content(tokens: list[str]) -> tuple[str, ...]:
    words: list[str] = []
    for token in tokens:
        folded = token.casefold().replace("’", "'")
        if folded in FUNCTION_WORDS or folded in SPEAKER or len(folded) < 3:
            continue
        words.append(stem(folded))
    return tuple(words)


def _narrower(clause: str, value: TypedValue) -> tuple[str, ...]:
    """What narrows a value: a name before its noun ("8 edX courses"), then a phrase after it
    ("12 courses on Coursera"): two counts narrowed to different things are two claims."""
    *modifiers, noun = TOKEN.findall(value.text) or [""]
    # Only of a common noun: "227 Larkspur Avenue", "Six Flags Magic Mountain" are names whole.
    named = (
        tuple(stem(t.casefold()) for t in modifiers if not t.islower()) if noun.islower() else ()
    )
    match = _NARROWER.match(clause[value.end :])
    if match is None:
        return named
    tokens: list[str] = []
    for token in match.group("words").split():
        folded = token.casefold()
        if folded in _TIME_WORDS:
            return named  # "in the past few weeks": a time, not a narrower thing
        if folded in FUNCTION_WORDS:
            break
        tokens.append(token)
    return named + _content(tokens)


def _verbal(tokens: list[str]) -> bool:
    """Whether an attribute phrase is only verbs ("I'm paying", "got pre-approved"): it says
    how a value was come by, not what it is the value of."""
    named = [t.casefold() for t in tokens if _content([t])]
    return all(t.endswith(("ing", "ed")) or t in _LIGHT_VERBS for t in named)


def _thing_state(clause: str, value: TypedValue) -> Triple | None:
    """A definite thing's state ("the gym near my office reopened", "our coffee shop is open
    again"), keyed by its head noun as the attribute table names a thing ("coffee shop": shop)."""
    thing = _THING_STATE.match(clause[: value.start])
    if thing is None or thing.group("name").split()[0] in FUNCTION_WORDS:
        return None
    # Without "is", "got", the state word is the verb, said as done ("reopened", "closed"),
    # not "my grandparents live in Ohio".
    if not thing.group("verb") and not value.text.casefold().endswith("ed"):
        return None
    # "approved my request", "complete coverage": an action on something, a modifier; not
    # "open again", "closed temporarily", "delayed until".
    following = next(iter(TOKEN.findall(clause[value.end :])), "").casefold()
    if following in _OBJECTS or not (
        following in FUNCTION_WORDS | _TIME_WORDS | {"", "again"} or following.endswith("ly")
    ):
        return None
    return Triple(thing.group("name").split()[-1].casefold(), ("state",), value, clause)


def _named_state(clause: str, value: TypedValue) -> Triple | None:
    """A thing's state: a definite thing's (`_thing_state`) or a named one's ("Project Atlas is
    in 'Active' status", "Project Atlas got suspended pending budget review")."""
    thing = _thing_state(clause, value)
    if thing is not None:
        return thing
    named = _NAMED.match(clause)
    if named is None or value.start < named.end():
        return None
    name = named.group("name")
    if name.split()[0].casefold() in SPEAKER | OTHERS | FUNCTION_WORDS:
        return None
    between = clause[named.end() : value.start].strip(" '\"‘“")
    if not _STATE_VERB.fullmatch(between):
        return None
    slug = re.sub(r"[^a-z0-9]+", "_", name.casefold()).strip("_")
    return Triple(slug, ("state",), value, clause) if slug else None


def _speaker_triple(
    clause: str, value: TypedValue, first: bool, carried: bool, role: str
) -> Triple | None:
    """The speaker's statement of `value`, or None when its subject is someone else."""
    if _DELTA.search(clause, 0, value.start):
        return None  # "lost 3 pounds", "by $200": a change by, not a value of
    left = TOKEN.findall(clause[: value.start])
    subject = nearest_subject(left, first and role == "user", role)
    if subject is None and carried and not has_subject(left):
        subject = (True, -1)  # the subject of the clause before
    if subject is None or not subject[0]:
        return None
    phrase = left[subject[1] + 1 :]
    if any(t.casefold() in _RELATIVE for t in phrase):
        return None  # "a friend who's turning 30": the value is the relative clause's
    words = _content(phrase)[-4:]
    owned = subject[1] >= 0 and left[subject[1]].casefold() in SPEAKER_OWNS | {"your"}
    if value.dimension == "percent" and not owned:
        return None  # "I got 20% off": a percentage is an attribute only as "my X is N%"
    if value.dimension == "day" and not _WEEKDAYS.search(value.text):
        return None  # a dated event, not a standing day; the table reads "X is on <date>"
    if value.dimension in {"day", "clock"} and (
        not words or not _WHEN.search(clause, 0, value.start)
    ):
        return None  # a bare day, or "by 4pm", says nothing of what it is the day of
    return Triple("user", words, value, clause, _narrower(clause, value), _verbal(phrase))


_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
# A date as `_dates` writes it into a narrower ("mar1" for "March 1st").
DATE_WORD = re.compile("(?:" + "|".join(_MONTHS) + r")\d{1,2}")
# A calendar date: "7/10", "7/22/2023", "May 6th", "March 5". Not "24/7", a ratio or a score.
_DATE = re.compile(
    r"(?<![\w/.])(?P<m>1[0-2]|0?[1-9])/(?P<d>3[01]|[12]\d|0?[1-9])(?:/(?:\d{4}|\d{2}))?(?![\w/])"
    r"|\b(?P<month>(?-i:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec))[a-z]*\.? "
    r"(?P<day>3[01]|[12]\d|0?[1-9])(?:st|nd|rd|th)?\b(?!:)"
)


def _dates(sentence: str) -> tuple[str, ...]:
    """The calendar dates a sentence names, each as one word ("jul10" for "7/10" and "July
    10th"): a value said of a dated event is that event's ("7 bass on my trip on 7/10", "9 that
    day" of 7/22: two trips, not a count that changed)."""
    found: list[str] = []
    for match in _DATE.finditer(sentence):
        if match.group("m"):
            month, day = _MONTHS[int(match.group("m")) - 1], int(match.group("d"))
        else:
            month, day = match.group("month").casefold(), int(match.group("day"))
        found.append(f"{month}{day}")
    return tuple(dict.fromkeys(found))


def triples(sentence: str, role: str) -> list[Triple]:
    """The statements of a sentence that states something (judged before): one per typed value
    whose subject is the speaker, or a named thing's state."""
    found: list[Triple] = []
    for read in read_clauses(sentence, role):
        clause = read.text
        opening = TOKEN.findall(clause)
        if opening and opening[0].casefold() in _RELATIVE:
            continue  # "which caps us at 10 seats" qualifies a noun before it
        # What is said before the clause names "them" ("two of them").
        values = typed_values(clause, sentence[: read.start])
        if len(values) > MAX_VALUES:
            continue  # a list of values, not a statement of one
        for value in values:
            if value.dimension.startswith("count_") and _WITH.search(clause, 0, value.start):
                continue  # "the Premium plan with 25 seats": the plan's, not the subject's
            if value.dimension == "state":
                triple = _named_state(clause, value)
            else:
                triple = _speaker_triple(clause, value, read.position == 0, read.carried, role)
            if triple is not None:
                found.append(_dated(triple, sentence, read.start, clause))
    return found


# What ends one stretch of a sentence a date holds for: "; ", " - ", a dash.
_PERIOD = re.compile(r"[;—–]|\s-\s")
# A clause that says its time by pointing back: "we caught 9 that day", "and then".
_THAT_TIME = re.compile(r"\bthat (?:day|night|morning|afternoon|evening|weekend|time)\b|\bthen\b")


def _dated(triple: Triple, sentence: str, start: int, clause: str) -> Triple:
    """`triple` narrowed by the dates its clause is said at: those from the start of its
    stretch of the sentence (`_PERIOD`) through its clause ("On 7/10, I caught 7"), or, when
    the clause points back ("that day"), the last said before it."""
    if triple.value.dimension in {"day", "clock"}:
        return triple
    stretch = max((m.end() for m in _PERIOD.finditer(sentence, 0, start)), default=0)
    dated = _dates(sentence[stretch : start + len(clause)])
    if not dated and _THAT_TIME.search(clause):
        dated = _dates(sentence[:start])[-1:]
    return replace(triple, narrower=(*dated, *triple.narrower)) if dated else triple
