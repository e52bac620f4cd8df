"""Which live fact holds when a new one arrives (ARCHITECTURE §12). Pure: values in, decisions out.

Two rules, tried in this order:

- ``claim_key``: a claim key names a single-valued fact (``account.plan``), so of all live
  versions of one namespace carrying it exactly one holds: the newest by ``valid_from`` (when the
  fact became true), then ``created_at``, then ``memory_id``. Two that became true at the same
  instant with different texts cannot be ordered: that is a conflict, and both stay live.
- ``similarity`` (compiled facts without a claim key): token-set Jaccard of the two texts at or
  above a threshold, within one memory type. A newer text that only narrows the older one (every
  word of the older is in it) adds a detail rather than replacing a value, so it does not
  supersede: "lives in Ohio" and "lives in Columbus, Ohio" are both true.

Dates are left out of the word sets: a compiled fact's content carries its date, and two
statements of one fact on different days are the same fact.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

__all__ = [
    "CLAIM_KEY",
    "Claimant",
    "Conflict",
    "Decision",
    "Judgement",
    "Rule",
    "jaccard",
    "judge_claim",
    "judge_similar",
    "mentions",
    "narrows",
    "stale_phrases",
    "states",
    "words",
]

CLAIM_KEY = re.compile(r"^[a-z][a-z0-9_.]{0,63}$")
Rule = Literal["explicit", "claim_key", "similarity", "source", "value", "resolved"]

_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
_WORD = re.compile(r"[^\W_]+", re.UNICODE)


@dataclass(frozen=True, slots=True)
class Claimant:
    """A live version as the rules see it."""

    memory_id: str
    memory_type: str
    text: str  # heading and content
    claim_key: str | None
    valid_from: datetime | None
    created_at: datetime
    content_sha256: str
    value: str | None = None  # the claim's value as stated, when the extractor knows it
    previous: str | None = None  # the value a change "from X to Y" replaced

    @property
    def order(self) -> tuple[datetime, datetime, str]:
        return (self.valid_from or self.created_at, self.created_at, self.memory_id)

    @property
    def instant(self) -> datetime:
        return self.valid_from or self.created_at


@dataclass(frozen=True, slots=True)
class Decision:
    older: str
    newer: str
    rule: Rule
    claim_key: str | None = None
    score: float | None = None
    threshold: float | None = None


@dataclass(frozen=True, slots=True)
class Conflict:
    first: str  # the smaller id: a pair is stored once
    second: str
    claim_key: str


@dataclass(frozen=True, slots=True)
class Judgement:
    decisions: tuple[Decision, ...] = ()
    conflicts: tuple[Conflict, ...] = ()


def words(text: str) -> frozenset[str]:
    """The word set a similarity is measured on: casefolded, dates left out."""
    return frozenset(_WORD.findall(_DATE.sub(" ", text).casefold()))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def narrows(older: frozenset[str], newer: frozenset[str]) -> bool:
    """The newer text keeps every word of the older and adds some: a refinement, not a change."""
    return older < newer


def _pair(a: str, b: str, claim_key: str) -> Conflict:
    return Conflict(min(a, b), max(a, b), claim_key)


def judge_claim(new: Claimant, live: Iterable[Claimant]) -> Judgement:
    """The decisions `new` brings about among the live versions of its claim key (`live`,
    without `new`): the newest stands, the others are superseded by it, except those that became
    true at the newest's instant with another text, which are in conflict with it."""
    assert new.claim_key is not None
    everyone = sorted({c.memory_id: c for c in [*live, new]}.values(), key=lambda c: c.order)
    newest = everyone[-1]
    decisions: list[Decision] = []
    conflicts: list[Conflict] = []
    for other in everyone[:-1]:
        if other.instant == newest.instant and other.content_sha256 != newest.content_sha256:
            conflicts.append(_pair(other.memory_id, newest.memory_id, new.claim_key))
        else:
            decisions.append(
                Decision(other.memory_id, newest.memory_id, "claim_key", new.claim_key)
            )
    return Judgement(tuple(decisions), tuple(conflicts))


def judge_similar(new: Claimant, live: Sequence[Claimant], threshold: float) -> Judgement:
    """The decisions `new` brings about among live facts of its type without a claim key: each
    one at least `threshold` alike is superseded by whichever of the two is newer, unless the
    newer only narrows it. When `new` itself is the older of a pair, it is the one superseded
    (by the most alike, then newest) and nothing else changes."""
    mine = words(new.text)
    decisions: list[Decision] = []
    beaten_by: list[tuple[float, Claimant]] = []
    for other in live:
        if other.memory_id == new.memory_id or other.memory_type != new.memory_type:
            continue
        theirs = words(other.text)
        score = round(jaccard(mine, theirs), 3)
        if score < threshold:
            continue
        if other.order < new.order:
            if not narrows(theirs, mine):
                decisions.append(
                    Decision(other.memory_id, new.memory_id, "similarity", None, score, threshold)
                )
        elif not narrows(mine, theirs):
            beaten_by.append((score, other))
    if beaten_by:
        score, winner = max(beaten_by, key=lambda pair: (pair[0], pair[1].order))
        return Judgement(
            (Decision(new.memory_id, winner.memory_id, "similarity", None, score, threshold),)
        )
    return Judgement(tuple(sorted(decisions, key=lambda d: d.older)))


def mentions(text: str, value: str) -> bool:
    """`text` states `value` as a whole phrase (case aside, and a space, hyphen or underscore
    between its words alike): "two cats" is in "board two cats?", "Team Atlas" in
    "#team-atlas", "Pro" is not in "Product"."""
    return _phrase(value.casefold()).search(text.casefold()) is not None


@functools.lru_cache(maxsize=4096)  # a value is looked for in many texts
def _phrase(value: str) -> re.Pattern[str]:
    words = [re.escape(w) for w in re.split(r"[ _-]+", value) if w]
    return re.compile(r"(?<![\w$])" + r"[ _-]+".join(words) + r"(?!\w)")


# "Sven Eriksson" is also "Sven"; "Dr. Abernathy" also "Abernathy".
_PERSON = re.compile(
    r"^(?:(?:Dr|Mr|Ms|Mrs|Prof)\. (?P<surname>[A-Z][a-z]{2,})|(?P<given>[A-Z][a-z]{2,}) [A-Z][a-z]+)$"
)
# Words that open a group's name, not a person's ("Team Atlas" is not called "Team").
_COLLECTIVES = frozenset({"Team", "Group", "Club", "Project", "Squad", "Company", "The"})
# Claim keys whose first part is the speaker or a kind of value, not a named subject.
_OWNERS = frozenset({"user", "account", "count", "rate", "plan"})


def stale_phrases(value: str) -> tuple[str, ...]:
    """The phrases a turn states a superseded value by: the value itself, and for a person's
    name the name alone people are referred to by after the first mention ("we escalated to
    Sven" for "Sven Eriksson", "Abernathy retired" for "Dr. Abernathy")."""
    person = _PERSON.match(value)
    called = person and (person.group("given") or person.group("surname"))
    if not called or called in _COLLECTIVES:
        return (value,)
    return (value, called)


def states(text: str, phrase: str, value: str, claim_key: str | None) -> bool:
    """`text` states the superseded `value` of `claim_key` by `phrase` (one of its
    `stale_phrases`). A given name counts only capitalized; a state word ("disabled",
    "paused") only beside its subject's name ("new_checkout ... stays disabled"), since the
    word alone says nothing about which thing it is the state of."""
    if phrase != value:
        if re.search(r"(?<![\w$])" + re.escape(phrase) + r"(?!\w)", text) is None:
            return False
    elif not mentions(text, value):
        return False
    subject = (claim_key or "").partition(".")[0]
    if not subject or subject in _OWNERS or value != value.casefold():
        return True
    # The subject as its key spells it, or in the plural ("parent" in "my parents").
    words = [re.escape(w) for w in subject.split("_") if w]
    named = r"(?<![\w$])" + r"[ _-]+".join(words) + r"(?:s|es)?(?!\w)"
    return re.search(named, text.casefold()) is not None
