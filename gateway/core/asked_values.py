"""What kind of value a question asks for, and of what: the assembly defence read from the
question's side (issue 33; `gateway.core.current_values`). Which sentences of a remembered turn
answer it is `gateway.core.turn_answers`'.

The defence by claims needs the extractor to read a statement's attribute, and on text nobody
wrote patterns for it often cannot ("I've had Luna for about 6 months now": whose attribute is
"had"?). A question names the attribute itself: "How long have I had my cat, Luna?" asks for a
span of time, of the thing its other words name. So the turns that answer it are those with a
value of that kind in a sentence saying the question's words, and of two such turns the newer
says the current value: the question, not a table, says what is compared. Why it should hold on
text nobody here read: the kinds are a closed class of English question openings ("how many",
"how long", "how often", "what time", "what day", "when is", "where") and of value shapes
(`typed_values`; and, read only for a question, `asked_shapes`: `time_spans`, `ordinal_counts`,
`places`); the attribute is the question's own words, whatever they are.

Conservative, as the defence is. Not read: a question that sums, compares or asks for an
earlier value ("in total", "before", "how much more", "how much did I save"), which asks for more
than the current value; a question about a past event ("what time did I reach the clinic on
Monday?": past tense, and nothing of "current", "most recent", "so far" or a personal best),
where two values said at two times may both hold (a price paid, a price listed).

A question of another shape ("which", "who", "what car") asks for a name, read only when the
caller says so (`asked(names=True)`, from assemble/2026-12-05.3): a name has no dimension, and
one is in nearly every sentence, so a name answers only when it is said with a change
(`gateway.core.turn_answers`).

Most answers to which and what are no name: "part-time", "a cortado", "a heat pump", "window
seats", "off the market". Read when the caller says so (`asked(statements=True)`, from
assemble/2026-12-05.4), such a question, and one asking yes or no of the present ("Is our condo
currently for sale?", kind `state`), is answered by a sentence as a whole
(`turn_answers.told`). With `asked(updates=True)` (from assemble/2026-12-06.1), an update is
read as chat tells it (`Asked.updates`; `gateway.core.turn_answers`, "Updates").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Literal

from gateway.core.extraction.asked_shapes import proper_names
from gateway.core.extraction.content_words import FUNCTION_WORDS, stem
from gateway.core.extraction.holders import names_another

__all__ = ["SENTENCE", "SPEAKER", "AnswerKind", "Asked", "asked", "stems_of"]

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
SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


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
    # Whether a name's change must be the speaker's own (`turn_answers._changes`; with
    # `statements` asked).
    own_changes: bool = False
    # Whether it asks of a person other than the user by the question's words ("What school is
    # Theo at now?"), whose change is then theirs to make: read whole, a name in a question of
    # the user's own ("is my Etsy shop open?") names a thing, and only the user's change is read.
    another: bool = False
    # Whether an update is read as chat says it (`asked(updates=True)`, from
    # assemble/2026-12-06.1): tersely, across a turn's sentences, of a thing by its name, in
    # other words than the first statement's (the module's notes, "Updates").
    updates: bool = False
    # Whether the user's turns nearest it are weighed for one replacing another
    # (`asked(weighed=True)`, from assemble/2026-12-06.3; `gateway.core.replacing_turns`): a
    # question asking of the speaker's own ("my", "I", "we") and of no one else's.
    weighed: bool = False

    @property
    def claim(self) -> str:
        """The question's attribute as a receipt names it: `duration: cat luna`."""
        return f"{self.kind}: {' '.join(sorted(self.stems))}"

    def touches(self, text: str) -> bool:
        """Whether `text` says any of the question's attribute."""
        return self.may_touch(text) and bool(stems_of(text) & self.stems)

    def may_touch(self, text: str) -> bool:
        """Whether `text` holds any of the question's stems as a string: a stem is a prefix
        of the word it was cut from, but for "-ies"/"-ied" cut to "-y", so a text without
        any cannot say them (and is not stemmed word by word to find so)."""
        folded = text.casefold()
        return any((s[:-1] if s.endswith("y") else s) in folded for s in self.stems)


def stems_of(text: str) -> frozenset[str]:
    """The stems of the content words ("'Ethereal Dreams'": its quotes are not the words')."""
    words = (w.strip("'’") for w in _WORD.findall(text))
    return frozenset(stem(w) for w in words if w and w.casefold() not in FUNCTION_WORDS)


def asked(
    task: str,
    names: bool = False,
    statements: bool = False,
    updates: bool = False,
    weighed: bool = False,
) -> Asked | None:
    """What the last question of `task` that reads asks for: its kind of value and of what; None
    when none does (each asks for a name and `names` is not set, for more than the current
    value, for a list, about a past event, or is of no shape here). With `names`, a question
    asking which or who reads names, and a where question names as well as places; with
    `statements` (and `names`), such a question and a yes or no of the present are answered by
    sentences whole (`told`) too; with `updates`, an update is read as chat says it
    (`Asked.updates`); with `weighed`, the user's turns nearest a question of their own are
    weighed for one replacing another (`gateway.core.replacing_turns`). A task may hold more
    than the question: a session step asks with its pinned task and then the user's last turn
    ("Thanks! By the way, how long have I had Luna?"), so each sentence is read, the last
    first."""
    for sentence in reversed(SENTENCE.split(task)):
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
                and bool(_CURRENTLY.search(sentence) or SPEAKER.search(sentence))
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
                weighed=weighed and bool(SPEAKER.search(sentence)) and not read.another,
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
SPEAKER = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|me|my|we|we're|we've|our|us)\b", re.IGNORECASE)
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
    stems = stems_of(question) - _NOT_THE_ATTRIBUTE
    many = _MANY_HEADED if whole else _MANY
    if kind is None or not stems or (kind == "name" and many.match(folded)):
        return None
    # A name question about a named one ("Which vet does Biscuit see?") is answered by what
    # is said of it ("Biscuit has her checkup with Dr. Alvarez"): her values answer it.
    another = names_another(question)
    of_another = another or (kind in ("name", "place", "state") and bool(proper_names(question)))
    return Asked(kind, stems, of_another, another=another)
