"""Which sentences of a remembered turn answer a question (`gateway.core.asked_values`), and
what they say of it: its values of the asked kind (`said`) or, for a question whose answer may
be any phrase, its sentences read whole (`told`). The turns that answer a question are those
with a value of its kind in a sentence saying the question's words, and of two such turns the
newer says the current value: the question, not a table, says what is compared (the decisions:
`gateway.core.current_values`).

A name has no dimension, and one is in nearly every sentence, so two names in two turns about
the question's words may be two things both held ("I go to Ironside Gym", "tried a drop-in at
Kestrel Gym"). The newer is current only when its sentence, or the one before it, says a change
(`NAME_CHANGED`: "now", "switched", "instead", "moved", "joined", "left", ...): a closed class
of English, whatever the names are. A name the question itself says ("Which vet does Pepper
see?") is no answer.

Read whole (`told`), of the user's turns with a sentence about the question's words, the newest
whose sentence (or one beside it) says the user changed something is current, and an older one
about the same words saying nothing else that the newer says of them (where the same value would
show) is earlier (`gateway.core.current_values`). The value is never named, so what decides is
the structure alone: the question's words, a change word of a closed class (`_CHANGED`), said by
the speaker of their own (a first person, no one else, not hedged, not denied), and recency.

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

from gateway.core.asked_values import SENTENCE, SPEAKER, AnswerKind, Asked, stems_of
from gateway.core.extraction.asked_shapes import (
    ordinal_counts,
    places,
    proper_names,
    time_spans,
)
from gateway.core.extraction.content_words import stem
from gateway.core.extraction.holders import another_holder, names_another
from gateway.core.extraction.judgement import HEDGE_NOT_INTENT
from gateway.core.extraction.named_values import REPLACED
from gateway.core.extraction.statements import sentences
from gateway.core.extraction.typed_values import TypedValue, typed_values

__all__ = ["ASKING", "NAME_CHANGED", "Said", "Told", "said", "told"]

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
class Said:
    """A value of the asked kind in a sentence, and how much of the question's attribute that
    sentence says (the share of its stems, 0 to 1); for a name, whether that sentence or the
    one before it says a change (`NAME_CHANGED`)."""

    value: TypedValue
    anchor: float
    change: bool = False


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
    split = sentences(text) if question.names else SENTENCE.split(text)
    for sentence in split:
        if not question.may_touch(sentence) or (question.updates and ASKING.search(sentence)):
            before = sentence
            continue
        values = [
            v
            for v in _of_kind(question.kind, sentence, question.names)  # most sentences hold none
            if (question.of_another or another_holder(sentence, v.text, role) is None)
            and not (v.dimension == "name" and stems_of(v.text) <= question.stems)
        ]
        if question.updates and question.kind == "count":
            # What is counted is the question's thing, whatever noun a turn counts it by: "85
            # people" then "112 guests" on one guest list.
            values = [replace(v, dimension="count") for v in values]
        shared = len(stems_of(sentence) & question.stems) if values else 0
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
ASKING = re.compile(r"^\W*(?:how|what|what's|whats|which|who|where|when|why)\b", re.IGNORECASE)
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
                SPEAKER.search(sentence) is not None
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
        stems = stems_of(sentence) - _LIGHT if question.may_touch(sentence) else frozenset()
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
                    rest=stems - question.stems - stems_of(" ".join(names)),
                    names=names,
                    near_names=frozenset(n.text for i in near for n in proper_names(split[i])),
                )
            )
    return found
