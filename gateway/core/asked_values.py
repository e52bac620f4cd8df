"""What kind of value a question asks for, and which sentences of a remembered turn answer it:
the assembly defence read from the question's side (issue 33; `gateway.core.current_values`).

The defence by claims needs the extractor to read a statement's attribute, and on text nobody
wrote patterns for it often cannot ("I've had Luna for about 6 months now": whose attribute is
"had"?). A question names the attribute itself: "How long have I had my cat, Luna?" asks for a
span of time, of the thing its other words name. So the turns that answer it are those with a
value of that kind in a sentence saying the question's words, and of two such turns the newer
says the current value: the question, not a table, says what is compared. Why it should hold on
text nobody here read: the kinds are a closed class of English question openings ("how many",
"how long", "how often", "what time", "what day", "when is", "where") and of value shapes
(`typed_values`; and, read only for a question, `time_spans`, `ordinal_counts`, `places`); the
attribute is the question's own words, whatever they are.

Conservative, as the defence is. Not read: a question that sums, compares or asks for an
earlier value ("in total", "before", "how much more", "how much did I save"), which asks for more
than the current value; a question about a past event ("what time did I reach the clinic on
Monday?": past tense, and nothing of "current", "most recent", "so far" or a personal best),
where two values said at two times may both hold (a price paid, a price listed).

A question of another shape ("which", "who", "what car") asks for a name, read only when the
caller says so (`asked(names=True)`, from assemble/2026-12-05.3): a name has no dimension, and
one is in nearly every sentence, so two names in two turns about the question's words may be
two things both held ("I go to Ironside Gym", "tried a drop-in at Kestrel Gym"). The newer is
current only when its sentence, or the one before it, says a change (`NAME_CHANGED`: "now",
"switched", "instead", "moved", "joined", "left", ...): a closed class of English, whatever the
names are. A name the question itself says ("Which vet does Pepper see?") is no answer.

Most answers to which and what are no name: "part-time", "a cortado", "a heat pump", "window
seats", "off the market". Read when the caller says so (`asked(statements=True)`, from
assemble/2026-12-05.4), such a question, and one asking yes or no of the present ("Is our condo
currently for sale?", kind `state`), is answered by a sentence as a whole (`told`): of the
user's turns with a sentence about the question's words, the newest whose sentence (or one
beside it) says the user changed something is current, and an older one about the same words
saying nothing else that the newer says of them (where the same value would show) is earlier
(`gateway.core.current_values`). The value is never named, so what decides is the structure
alone: the question's words, a change word of a closed class (`_CHANGED`), said by the speaker
of their own (a first person, no one else, not hedged, not denied), and recency.

Updates (`asked(updates=True)`, from assemble/2026-12-06.1). A user tells a change as chat
tells it: tersely, across sentences ("RAN THE LAKEFRONT HALF YESTERDAY. 1:54:12!!! new PR"), of
a thing by its name ("reactivated my Summit Block membership"), in other words than the first
statement's ("112 guests" after "85 people", "the storage place" after "a storage unit"). Read
so: a turn's sentences about the question say what they say together; a name said in the
question's sentences of two or more of the user's turns is the question's thing; a sentence
saying its value changed (a verb of change or its direction: "goes up to", "raised", "extended
the deadline to") answers however few of the question's words it says; a count is of the
question's thing whatever noun counts it; a sentence opening with a question word ("how many
tables do I need if they seat 10?") states no value of the speaker's; and two sentences whose
values differ say two values, whatever words they share ("$85 an hour", "$110 an hour"). What
the assistant said back to an earlier statement retells it ("I have a cleaning booked with Dr.
Okafor"), and goes with it (`gateway.core.current_values`). Why it should hold on text
nobody here read: each is a property of how an update is told, not of what it tells, and the
word classes are closed (change words, question openings).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

from gateway.core.extraction.judgement import HEDGE_NOT_INTENT
from gateway.core.extraction.named_values import REPLACED
from gateway.core.extraction.statements import sentences
from gateway.core.extraction.triples import another_holder, names_another
from gateway.core.extraction.typed_values import (
    FUNCTION_WORDS,
    TypedValue,
    ordinal_counts,
    places,
    proper_names,
    stem,
    time_spans,
    typed_values,
)

__all__ = ["NAME_CHANGED", "AnswerKind", "Asked", "Said", "Told", "asked", "said", "told"]

AnswerKind = Literal[
    "count",
    "money",
    "amount",
    "duration",
    "frequency",
    "clock",
    "when",
    "day",
    "elapsed",
    "record",
    "place",
    "name",
    "state",
]

_MONEY_NOUNS = (
    r"price|cost|costs|salary|rent|budget|fee|fees|pay|paid|spend|spent|earn|earned|worth|"
    r"amount|income|bill|loan|mortgage|savings|raise|bonus|charge|charged|owe|sold"
)
# The first that matches names the kind; in this order, as "how many hours" is a span of time
# before it is a count.
_KINDS: tuple[tuple[re.Pattern[str], AnswerKind], ...] = (
    (
        re.compile(r"^how (?:many|much) (?:time|hours|minutes|days|weeks|months|years)\b"),
        "duration",
    ),
    (re.compile(r"^how long\b"), "duration"),
    (re.compile(r"^how often\b"), "frequency"),
    (re.compile(r"^how many\b"), "count"),
    (re.compile(r"^how much\b.*\b(?:" + _MONEY_NOUNS + r")\b"), "money"),
    (re.compile(r"^how much\b"), "amount"),
    (re.compile(r"^(?:what|which) time\b"), "clock"),
    (re.compile(r"^when (?:do|does|is|are)\b"), "when"),
    (re.compile(r"^(?:what|which) day\b"), "day"),
    (re.compile(r"^where\b"), "place"),
    (
        re.compile(r"^what(?:'s| is| was)\b.*\b(?:best|fastest|finish(?:ing)?|race) time\b"),
        "elapsed",
    ),
    (re.compile(r"^what(?:'s| is| was)\b.*\brecord\b"), "record"),
    (re.compile(r"^what(?:'s| is| was)\b.*\b(?:" + _MONEY_NOUNS + r")\b"), "money"),
    # Read only under an assembler that reads names (`asked(names=True)`): the rest of "who",
    # "which" and "what" ask for a thing, and of its values only names are read.
    (re.compile(r"^(?:who|whom|whose|which|what)\b"), "name"),
    # Read only under an assembler that reads statements (`asked(statements=True)`): a yes or
    # no of the present ("is our condo currently for sale?") is answered by a sentence whole.
    (re.compile(r"^(?:is|are|am|do|does)\b"), "state"),
)
# A question that sums, compares, or asks for what held before: the current value alone does
# not answer it, so no turn is left out for it.
_MORE_THAN_CURRENT = re.compile(
    r"\b(?:total|totals|altogether|combined|in all|sum|average|overall|difference|differ|"
    r"compare|compared|increase|increased|decrease|decreased|change|changed|before|previous|"
    r"previously|first|initial|initially|original|originally|used to|earlier|between|ago|"
    r"more|less|fewer|each of|both|last time|so far this|passed|elapsed|save|saved|saving|"
    r"savings|left|remaining|than|older|younger)\b"
)
# The question asks what holds now: in the present tense or the present perfect ("how many do I
# have", "how long have I had"), or naming the present or the latest ("currently", "most
# recent", "so far", a personal best). A question in the past tense without one of these asks
# about a past event ("how long did it take", "what time did I reach the clinic"), and two
# values said of it at two times may both hold (a price paid, a price listed).
_PRESENT = re.compile(r"\b(?:do|does|am|is|are|can|have|has)\b|'s\b|'re\b|'ve\b")
_PAST = re.compile(r"\b(?:did|was|were|had)\b")
# "Have I had", "has she had": the present perfect, not the past.
_PERFECT_HAD = re.compile(r"\b(?:have|has)(?: \w+)? had\b|'ve had\b")
_NOW = re.compile(
    r"\b(?:current|currently|now|right now|these days|most recent|most recently|latest|"
    r"so far|still|best|highest|lowest|fastest|longest|personal record)\b"
)
# The question's words that say what kind of value it asks for, or when, not what of.
_NOT_THE_ATTRIBUTE = frozenset(
    stem(w)
    for w in (
        *("current", "currently", "now", "recent", "recently", "latest", "most", "so", "far"),
        *("many", "much", "long", "often", "time", "times", "day", "days", "week", "weeks"),
        *("month", "months", "year", "years", "hour", "hours", "minute", "minutes", "amount"),
        *("what", "which", "when", "how", "do", "does", "did", "right", "these", "usually"),
    )
)
_WORD = re.compile(r"[A-Za-z][\w'’-]*")
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
# A name replaced, not only named: the words of `named_values.REPLACED` ("now", "instead",
# "switched", "started", "moved") and those saying one left a thing or joined another. A name
# has no dimension, so without one two names in two turns may be two things both held.
NAME_CHANGED = re.compile(
    REPLACED.pattern
    + r"|\b(?:traded|joined|left|quit|ported|migrated|officially|as of|after all|no longer|"
    r"signed up|go with)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Asked:
    """A question read: the kind of value it asks for and the stems of what it asks it of."""

    kind: AnswerKind
    stems: frozenset[str]
    # Whether it asks of someone else ("when is Yumi's wedding?"): then a value another person
    # holds may answer it; a question of the user's own is answered by none of theirs.
    of_another: bool = False
    # Whether names answer it (`asked(names=True)`): a question asking which or who, or where
    # ("Fridays are Casa Oaxaca nights now" says where takeout comes from).
    names: bool = False
    # Whether sentences read whole answer it (`asked(statements=True)`, `told`): a question
    # asking which, what, where or yes or no of what holds now, whose answer may be any phrase.
    statements: bool = False
    # Whether a name's change must be the speaker's own (`_changes`; with `statements` asked).
    own_changes: bool = False
    # Whether it asks of a person other than the user by the question's words ("What school is
    # Theo at now?"), whose change is then theirs to make: read whole, a name in a question of
    # the user's own ("is my Etsy shop open?") names a thing, and only the user's change is read.
    another: bool = False
    # Whether an update is read as chat says it (`asked(updates=True)`, from
    # assemble/2026-12-06.1): tersely, across a turn's sentences, of a thing by its name, in
    # other words than the first statement's (the module's notes, "Updates").
    updates: bool = False

    @property
    def claim(self) -> str:
        """The question's attribute as a receipt names it: `duration: cat luna`."""
        return f"{self.kind}: {' '.join(sorted(self.stems))}"

    def touches(self, text: str) -> bool:
        """Whether `text` says any of the question's attribute."""
        return self.may_touch(text) and bool(_stems(text) & self.stems)

    def may_touch(self, text: str) -> bool:
        """Whether `text` holds any of the question's stems as a string: a stem is a prefix
        of the word it was cut from, but for "-ies"/"-ied" cut to "-y", so a text without
        any cannot say them (and is not stemmed word by word to find so)."""
        folded = text.casefold()
        return any((s[:-1] if s.endswith("y") else s) in folded for s in self.stems)


@dataclass(frozen=True, slots=True)
class Said:
    """A value of the asked kind in a sentence, and how much of the question's attribute that
    sentence says (the share of its stems, 0 to 1); for a name, whether that sentence or the
    one before it says a change (`NAME_CHANGED`)."""

    value: TypedValue
    anchor: float
    change: bool = False


def _stems(text: str) -> frozenset[str]:
    """The stems of the content words ("'Ethereal Dreams'": its quotes are not the words')."""
    words = (w.strip("'’") for w in _WORD.findall(text))
    return frozenset(stem(w) for w in words if w and w.casefold() not in FUNCTION_WORDS)


def asked(
    task: str, names: bool = False, statements: bool = False, updates: bool = False
) -> Asked | None:
    """What the last question of `task` that reads asks for: its kind of value and of what; None
    when none does (each asks for a name and `names` is not set, for more than the current
    value, for a list, about a past event, or is of no shape here). With `names`, a question
    asking which or who reads names, and a where question names as well as places; with
    `statements` (and `names`), such a question and a yes or no of the present are answered by
    sentences whole (`told`) too; with `updates`, an update is read as chat says it
    (`Asked.updates`). A task may hold more than the question: a session step asks
    with its pinned task and then the user's last turn ("Thanks! By the way, how long have I
    had Luna?"), so each sentence is read, the last first."""
    for sentence in reversed(_SENTENCE.split(task)):
        if _MORE_THAN_CURRENT.search(sentence.casefold()):
            continue  # "in total, how many ...": the whole sentence asks for more
        # The question may open a later clause ("By the way, how long ...").
        starts = [0, *(m.end() for m in _CLAUSE.finditer(sentence))]
        for start in starts:
            read = _asked(sentence[start:], names and statements)
            if read is None or (read.kind == "name" and not names):
                continue
            whole = (
                names
                and statements
                and read.kind in ("name", "place", "state")
                and bool(_CURRENTLY.search(sentence) or _SPEAKER.search(sentence))
                and not _YEAR.search(sentence)
            )
            if read.kind == "state" and not whole:
                continue
            return replace(
                read,
                names=names and read.kind in ("name", "place"),
                statements=whole,
                own_changes=names and statements,
                updates=updates,
            )
    return None


_CLAUSE = re.compile(r"[,;:]\s+")
# "What events has Caroline joined?", "which books do I own?": a plural asks for a list, and
# every name in it holds at once.
_MANY = re.compile(r"^(?:which|what) (?!does\b|goes\b)[a-z-]{2,}[^siu'’\s]s\b")
# Read whole (assemble/2026-12-05.4 on), a plural is a list only as the head of its phrase, the
# word after it a verb: "which farmers market is my stall at?" asks for one market, "what kids
# programs are we in?" for a list; "which of my offices" asks for one of them.
_MANY_HEADED = re.compile(
    r"^(?:which|what)(?! of\b)(?: [a-z'-]+){0,3}? [a-z-]+[^siu'’\s]s"
    r"(?= (?:is|are|was|were|do|does|did|have|has|had|can)\b|\W*$)"
)
# The speaker: of a question, the user asking of their own; of a sentence saying a change, the
# one who made it ("we pivoted", "I'm converted", "my plan").
_SPEAKER = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|me|my|we|we're|we've|our|us)\b", re.IGNORECASE)
# Read whole, a question must ask of the user's own (in the present, as every question read
# here is: "Which seat do I prefer when I fly?"), whose change is the user's own to say, or say
# it asks what holds now or is planned: a sentence whole says nothing of a value's time, so
# "What do Melanie's kids like?" (of any time) is not read so, and "What is Theo's school
# now?" is.
_CURRENTLY = re.compile(
    r"\b(?:now|currently|current|these days|right now|at the moment|at present|at this point|"
    r"anymore|still|lately|planning|plan to|plans)\b",
    re.IGNORECASE,
)
# A year in the question asks of that time, not of now ("What is John currently doing as a
# volunteer in August 2023?").
_YEAR = re.compile(r"\b(?:19|20)\d{2}\b")
# And a preposition may open the question: "in what format do I read?", "at which gym?".
_PREPOSITION = re.compile(r"^(?:in|at|on|for|with|from|to|by|of) (?=(?:what|which|whose)\b)")
# Words a question may open with before its question word ("also, how many ...", "so what time").
_OPENERS = re.compile(
    r"^(?:(?:also|and|so|but|oh|ok|okay|well|btw|anyway|actually|hey|hi|then|quick question)"
    r"\b[ ,]*)+"
)


def _asked(question: str, whole: bool = False) -> Asked | None:
    folded = _OPENERS.sub("", " ".join(question.casefold().replace("’", "'").split()))
    if whole:
        folded = _PREPOSITION.sub("", folded)
    if _MORE_THAN_CURRENT.search(folded):
        return None
    past = _PAST.search(_PERFECT_HAD.sub(" ", folded))
    if not _NOW.search(folded) and (past or not _PRESENT.search(folded)):
        return None
    kind = next((k for pattern, k in _KINDS if pattern.search(folded)), None)
    stems = _stems(question) - _NOT_THE_ATTRIBUTE
    many = _MANY_HEADED if whole else _MANY
    if kind is None or not stems or (kind == "name" and many.match(folded)):
        return None
    # A name question about a named one ("Which vet does Biscuit see?") is answered by what
    # is said of it ("Biscuit has her checkup with Dr. Alvarez"): her values answer it.
    another = names_another(question)
    of_another = another or (kind in ("name", "place", "state") and bool(proper_names(question)))
    return Asked(kind, stems, of_another, another=another)


# What a sentence must hold to hold a value of a kind, found at a regex's cost rather than the
# finders': a number (digits or a word), or a span of time's unit. Kinds absent: no hint.
_NUMBER_HINT = re.compile(
    r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|"
    r"thirty|forty|fifty|dozen|single|once|twice|half)\b",
    re.IGNORECASE,
)
_SPAN_HINT = re.compile(
    r"second|minute|hour|day|week|month|year|decade|night|daily|once|twice|\d:\d", re.IGNORECASE
)
_HINTS: dict[AnswerKind, re.Pattern[str]] = {
    "count": _NUMBER_HINT,
    "money": re.compile(r"[$€£¥]\s?\d"),
    "amount": _NUMBER_HINT,
    "record": re.compile(r"\d-\d"),
    "clock": re.compile(r"\d\s?[ap]\.?m", re.IGNORECASE),
    "duration": _SPAN_HINT,
    "frequency": _SPAN_HINT,
    "elapsed": re.compile(r"\d:\d"),
}


def _of_kind(kind: AnswerKind, sentence: str, names: bool) -> list[TypedValue]:
    hint = _HINTS.get(kind)
    if hint is not None and not hint.search(sentence):
        return []
    if kind == "place":
        found = places(sentence)
        if names:  # a name a place phrase holds is that place, not a second value
            found += [
                n
                for n in proper_names(sentence)
                if not any(p.start <= n.start < p.end or n.start <= p.start < n.end for p in found)
            ]
        return found
    if kind == "name":
        return proper_names(sentence)
    if kind == "state":  # no value of its own shape: read whole (`told`)
        return []
    if kind in ("duration", "frequency", "elapsed"):
        return [v for v in time_spans(sentence) if v.dimension == kind]
    found = typed_values(sentence)
    if kind == "count":
        counts = [v for v in found if v.dimension not in ("money", "clock", "day", "state")]
        return counts + ordinal_counts(sentence)
    if kind == "when":  # a date or a time of day: each its own dimension
        return [v for v in found if v.dimension in ("clock", "day")]
    if kind == "amount":
        return [v for v in found if v.size is not None]
    return [v for v in found if v.dimension == kind]


def said(question: Asked, text: str, role: str) -> Sequence[Said]:
    """The values of the asked kind in `text` (said by `role`), each with its sentence's
    anchor; a sentence that says none of the question's attribute answers nothing (and is not
    read for values: most sentences of a long turn are about other things, and reading values
    costs their length), and a value someone else holds ("my sister's base is $190,000")
    answers nothing of the user's own. A name the question itself says ("Which vet does my
    cat Juniper go to?": Juniper) answers nothing of it."""
    found: list[Said] = []
    if not question.may_touch(text):
        return found
    before = ""
    # A name is read in the extractor's sentences, where a title's period ends none ("Dr.
    # Alvarez"); the other kinds in the split the bundles of assemble/2026-12-05.2 were cut by.
    split = sentences(text) if question.names else _SENTENCE.split(text)
    for sentence in split:
        if not question.may_touch(sentence) or (question.updates and _ASKING.search(sentence)):
            before = sentence
            continue
        values = [
            v
            for v in _of_kind(question.kind, sentence, question.names)  # most sentences hold none
            if (question.of_another or another_holder(sentence, v.text, role) is None)
            and not (v.dimension == "name" and _stems(v.text) <= question.stems)
        ]
        if question.updates and question.kind == "count":
            # What is counted is the question's thing, whatever noun a turn counts it by: "85
            # people" then "112 guests" on one guest list.
            values = [replace(v, dimension="count") for v in values]
        shared = len(_stems(sentence) & question.stems) if values else 0
        if shared:
            anchor = round(shared / len(question.stems), 3)
            if question.names:
                change = (
                    # Read whole, a change is the speaker's own, not hedged ("if I mostly fly
                    # out of Seattle" after "my sister just switched to Delta" changes nothing
                    # of mine).
                    _changes(sentence, question.of_another) or _changes(before, question.of_another)
                    if question.own_changes
                    else bool(NAME_CHANGED.search(sentence) or NAME_CHANGED.search(before))
                )
            else:  # a value of a dimension: the sentence says it changed
                change = question.updates and _value_changed(sentence)
            found.extend(Said(v, anchor, change) for v in values)
        before = sentence
    return found


# A question opening with a question word asks of something and states no value of the
# speaker's: "what's a good board game for two people", "how many tables do I need if they seat
# 10". A request may carry one ("can you plan my Saturdays now that I wake up at 8:30?"): read.
_ASKING = re.compile(r"^\W*(?:how|what|what's|whats|which|who|where|when|why)\b", re.IGNORECASE)
# A value said to have changed: a verb of change or its direction ("goes up to $172", "raised",
# "extended the deadline to"), not a word saying it is current ("now", "just", "new"), which a
# first statement says as often as an update.
_VALUE_CHANGE = re.compile(
    r"\b(?:(?:went|goes|going|gone|is going|has gone) (?:up|down)|up to|down to|promoted|"
    r"(?:rais|increas|decreas|chang|updat|reduc|lower|bump|switch|extend|postpon|reschedul|"
    r"delay|lift|mov|jump)(?:ed|ing|ped|ping)|pushed|pulled|dropped|cut)\b",
    re.IGNORECASE,
)


def _value_changed(sentence: str) -> bool:
    """Whether a sentence says its value is a new one, not hedged ("might go up to $180")."""
    return not HEDGE_NOT_INTENT.search(sentence) and bool(_VALUE_CHANGE.search(sentence))


@dataclass(frozen=True, slots=True)
class Told:
    """A sentence about the question's attribute, read whole for a question whose answer may be
    any phrase: whether it or one beside it says the speaker changed something of their own,
    which of the question's stems it says, the stems it says beside them and beside its names
    (where its value is, whatever the value is), its names and those said beside it."""

    sentence: str
    change: bool
    said: frozenset[str]  # the question's stems it says
    rest: frozenset[str]
    names: frozenset[str]
    near_names: frozenset[str]  # and those of the sentences beside it


# A change, for a sentence read whole: the name reading's words, their other forms ("starting",
# "switching") and the verbs saying one stopped, resumed or swapped a thing. The value is never
# the cue here, so the change word carries the whole decision.
_CHANGED = re.compile(
    NAME_CHANGED.pattern
    + r"|\b(?:starting|switching|moving|changing|replacing|transferring|upgrading|trading|"
    r"joining|leaving|quitting|stopped|stopping|gave up|given up|giving up|cancell?ed|dropped|"
    r"resumed|reactivated|swapped|pivoted|converted)\b",
    re.IGNORECASE,
)
# Words beside the question's that say no value, so that two sentences saying them do not say
# one value twice: pronouns and modals the function words leave, and the words a digest's lines
# open with ("Session of 4 turns", "- t1 user:").
_LIGHT = frozenset(
    stem(w) for w in ("him", "he's", "she's", "they're", "can", "could", "should", "might", "must")
) | frozenset(stem(w) for w in ("may", "let", "going", "gonna", "go", "user", "turn", "session"))
# What may stand before a change word that opens a sentence whose subject chat left out:
# "finally switched to ...", "ok so moved the ...".
_ELIDED = re.compile(
    r"^(?:(?:so|and|then|ok|okay|just|finally|officially|also|well|anyway|update)\W+)*$",
    re.IGNORECASE,
)
# A change word denied ("haven't switched", "not going with"): the three words before it.
_DENIED = re.compile(r"(?:\b(?:not|never|no)\b|n['’]t\b)(?:\W+\w+){0,2}\W*$", re.IGNORECASE)


def _changes(sentence: str, another: bool) -> bool:
    """Whether `sentence` says the speaker (or the one the question asks of) changed something:
    a change word (`_CHANGED`), not denied, in a sentence that is not hedged ("might switch",
    "thinking of moving"), and, unless the question asks of another, that names no one else
    ("my sister just switched to Delta" is her change) and names the speaker with the change
    word's clause having no other subject, or opens with the change, its subject left out as
    chat leaves it ("Switched to Neovim last week", "New PR!")."""
    if HEDGE_NOT_INTENT.search(sentence):
        return False
    if not another and names_another(sentence):
        return False
    return any(
        not _DENIED.search(sentence[: m.start()])
        and (
            another
            or _ELIDED.match(sentence[: m.start()]) is not None
            or (
                _SPEAKER.search(sentence) is not None
                and another_holder(sentence, m.group(0), "user") is None
            )
        )
        for m in _CHANGED.finditer(sentence)
    )


def told(question: Asked, text: str) -> Sequence[Told]:
    """The sentences of `text` that say any of the question's attribute, each read whole
    (`Told`), in the extractor's sentences; a change is read in the sentence or either beside
    it. None when the question is not read so."""
    found: list[Told] = []
    if not question.statements or not question.may_touch(text):
        return found
    # A line ends a sentence too: a digest's lines, a list's items.
    split = [s for line in text.splitlines() for s in sentences(line)]
    changed: dict[int, bool] = {}  # by sentence: a sentence beside two is read once

    def changes(at: int) -> bool:
        if at not in changed:
            changed[at] = _changes(split[at], question.another)
        return changed[at]

    for at, sentence in enumerate(split):
        stems = _stems(sentence) - _LIGHT if question.may_touch(sentence) else frozenset()
        if stems & question.stems:
            # The change may be said beside the sentence naming the attribute: "change of
            # plans for the sabbatical. I'm going to New Zealand instead".
            near = range(max(0, at - 1), min(len(split), at + 2))
            names = frozenset(n.text for n in proper_names(sentence))
            found.append(
                Told(
                    sentence=sentence,
                    change=any(changes(i) for i in near),
                    said=stems & question.stems,
                    # A name is compared as a name (`names`): "paused my membership at Summit
                    # Block" and "reactivated my Summit Block membership" share the thing,
                    # not its state.
                    rest=stems - question.stems - _stems(" ".join(names)),
                    names=names,
                    near_names=frozenset(n.text for i in near for n in proper_names(split[i])),
                )
            )
    return found
