"""The `rules` extractor: episodes (turns) become typed facts, deterministically, without a model.

One sentence gives at most one fact. What counts:

- the user's own statements: identity (name, employer, role, team, location, plan), preferences
  ("my favorite X is", "I prefer"), quantities ("I have two cats", "we're at 17 houseplants"),
  possessions and settings ("my X is Y", "our X is Y"), state changes ("switched to", "moved to",
  "upgraded", "cancelled", "sold", "now"), procedures ("always / never …", "to deploy, run …",
  "from now on …") and decisions ("we decided", "going forward");
- the assistant's confirmations of an action ("Done. Your plan is now Premium."): the turn opens
  with a confirmation word, and its sentences saying what now holds are facts.

What does not: questions, hedges ("maybe", "I think", "might"), plans not yet made, reported
speech ("she said"), negations and the past that no longer holds ("I used to"). Over-extraction
is the costlier mistake: a wrong claim key supersedes a fact that still holds.

A fact is single-valued when its pattern names an attribute (``user.employer``, ``user.team``,
``count.cat``, ``<owner>.<attribute>``): that is its claim key, and a newer fact for the key
supersedes it. Other facts (preferences in general, procedures, decisions) carry none and are
superseded only by a near-identical newer text.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from gateway.core.supersession import CLAIM_KEY

__all__ = ["RULES", "Episode", "Fact", "extract"]

RULES = ("rules", "2026-12-01.1")  # name, version: bump the version when an output can change

FactType = Literal["semantic", "procedural"]


@dataclass(frozen=True, slots=True)
class Episode:
    """One turn to compile: who said it, when, what, and the ids a fact from it names."""

    sources: tuple[str, ...]  # the turn id, and the memory id of its remembered copy if any
    role: str
    text: str
    occurred_at: datetime


@dataclass(frozen=True, slots=True)
class Fact:
    memory_type: FactType
    heading: str
    content: str
    confidence: float
    claim_key: str | None
    valid_from: datetime
    sources: tuple[str, ...]
    # The claim's value as stated ("Starter", "two cats") and, for a change "from X to Y", the
    # value it replaced: what a superseded raw turn is recognized by.
    value: str | None = None
    previous: str | None = None


_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[\"'(]?[A-Z0-9$])")
_CONFIRMATION = re.compile(
    r"^(done|updated|confirmed|noted|all set|got it|changed|booked|rebooked|switched|saved)\b",
    re.IGNORECASE,
)
_HEDGE = re.compile(
    r"\b(maybe|perhaps|might|probably|possibly|i think|i guess|not sure|thinking about|"
    r"considering|wondering|if|would|could|should|hoping|hope to|want to|wants to|"
    r"plan to|planning to|going to)\b",
    re.IGNORECASE,
)
_REPORTED = re.compile(
    r"\b(s?he|they|someone|somebody|people) (said|says|told|thinks|asked|mentioned)\b|"
    r"\baccording to\b|\b(said|says) that\b",
    re.IGNORECASE,
)
_NEGATED = re.compile(
    r"\b(not|no longer|never|used to|n't|didn't|don't|doesn't|isn't|aren't|wasn't|won't)\b",
    re.IGNORECASE,
)
_NOT_FACT_WORDS = re.compile(r"\b(any tips|any ideas|what should|how do|can you|could you)\b", re.I)

_NUMBER_WORDS = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
}
# Words that follow a number without being the thing counted ("5 different ways").
_ADJECTIVES = (
    r"(?:different|other|separate|little|more|new|main|big|small|few|extra|additional|key|"
    r"major|great|good|best|top|simple|easy|quick|important|common|basic|similar|large|"
    r"times|ways|steps|tips|ideas|things|options|examples|reasons|types|kinds|of)"
)
_NUMBER = r"(?P<n>\d{1,6}|" + "|".join(_NUMBER_WORDS) + r")"
_PREPOSITIONS = frozenset(
    {"in", "at", "for", "on", "of", "with", "from", "to", "by", "since", "about", "off", "into"}
)
_PRONOUNS = frozenset({"i", "me", "we", "us", "you", "he", "she", "they", "him", "her", "and"})
_STOP_ATTRIBUTES = frozenset(
    {"it", "this", "that", "there", "here", "one", "ones", "thing", "things", "way", "time"}
)


@dataclass(frozen=True, slots=True)
class _Pattern:
    kind: str  # what the fact is about, for its heading
    regex: re.Pattern[str]
    key: str  # claim key template: {attr}, {owner} from the groups; "" for no claim key
    memory_type: FactType = "semantic"
    tail: bool = False  # the value is what follows the match


def _p(
    kind: str, pattern: str, key: str, memory_type: FactType = "semantic", *, tail: bool = False
) -> _Pattern:
    return _Pattern(kind, re.compile(pattern, re.IGNORECASE), key, memory_type, tail)


_PROCEDURES = (
    _p("procedure", r"^(always|never|from now on|going forward)\b", "", "procedural"),
    _p("procedure", r"^to [a-z]+[^,]*, (run|use|open|call|type|go)\b", "", "procedural"),
)
_DECISIONS = (_p("decision", r"\bwe (decided|agreed|chose)\b", ""),)
# Single-valued attributes, most specific first. A `value` group (or, with `tail`, the words
# after the match) is the fact's value; a `previous` group the value it replaced ("from X").
_ATTRIBUTES = (
    _p("identity", r"\bmy name is (?P<value>[A-Z][\w'-]*(?: [A-Z][\w'-]*)*)", "user.name"),
    _p(
        "identity",
        r"\bi (?:work|started working) (?:at|for) (?P<value>[A-Z][\w&'-]*(?: [A-Z][\w&'-]*)*)",
        "user.employer",
    ),
    _p("identity", r"\b(hired me|i joined|i'm joining) [A-Z]?", "user.employer"),
    _p(
        "identity",
        r"\b(?:i'm|i am)(?: officially| now)? on the (?P<value>[\w -]+ team)\b",
        "user.team",
    ),
    _p(
        "identity",
        r"\b(?:i live|we live|i moved|we moved|i'm now|now that i'm|i've been) (?:in|to) "
        r"(?P<value>[A-Z][\w'-]*(?: [A-Z][\w'-]*)*)",
        "user.location",
    ),
    _p(
        "identity",
        r"\b(?:on|to|onto) the (?P<value>[\w -]{1,30}?) (?:plan|tier)\b",
        "account.plan",
    ),
    _p(
        "relation",
        # "my manager, Priya", "my accountant is Roger Hollis", "a new accountant: Anjali Mehta".
        r"\b(?:my|our|a) (?:new )?(?P<attr>manager|boss|accountant|doctor|dentist|therapist|"
        r"landlord|property manager|boyfriend|girlfriend|partner|husband|wife|lawyer|coach|"
        r"tutor|mentor|vet|realtor)(?:,| is| was|:| named) (?P<value>(?:Dr\. )?[A-Z][\w'-]*"
        r"(?: [A-Z][\w'-]*)*)",
        "user.{attr}",
    ),
    _p(
        "state",
        # "auto-renew is turned on" / "I turned off auto-renew": the setting's state.
        r"\b(?P<attr>[a-z][\w-]{2,30}) (?:is|was|got|has been)(?: now)? (?P<value>turned on|"
        r"turned off|enabled|disabled|paused|resumed|suspended|reinstated|closed|reopened)\b",
        "{attr}.state",
    ),
    _p(
        "state",
        r"\b(?:i|we|you) (?P<value>turned off|turned on|enabled|disabled|paused|resumed|"
        r"suspended|reinstated|reopened)(?: the)? (?P<attr>[a-z][\w-]{2,30})\b",
        "{attr}.state",
    ),
    _p(
        "preference",
        r"\bmy (?:all-time |new |current )?favou?rite (?P<attr>[a-z ]{2,40}?) (?:is|are)\b",
        "user.favorite_{attr}",
        tail=True,
    ),
    _p(
        "preference",
        r"\b(is|as) (?:now )?(?:my|your) (?:new )?favou?rite (?P<attr>[a-z ]{2,40}?)\b",
        "user.favorite_{attr}",
    ),
    _p(
        "preference",
        r"\bmy (?:go-to|usual|standard) (?P<attr>[a-z ]{2,30}?) (?:is|are)\b",
        "user.usual_{attr}",
        tail=True,
    ),
    _p(
        "quantity",
        # "I have two cats", "we're at 17 houseplants", "a team of 6 engineers", "runs 12
        # nodes"; spans of time are not things one has.
        r"\b(?:have|own|at|now it's|there are|is|are|of|runs|run|to) (?P<value>"
        + _NUMBER
        + r" (?P<attr>(?!(?:day|week|month|year|hour|minute|second|time|percent)s?\b|"
        + _ADJECTIVES
        + r"\b)(?-i:[a-z]{3,30})))\b",
        "count.{attr}",
    ),
    _p(
        "attribute",
        r"\b(?P<owner>my|our|your) (?P<attr>[a-z][a-z -]{1,40}?) (?:is|are)(?: now)? (?!not\b)",
        "{owner}.{attr}",
        tail=True,
    ),
    _p(
        "state",
        r"\b(?:switched|moved|changed|migrated|upgraded|downgraded) (?:my |our |the |your )?"
        r"(?:(?P<attr>[a-z][a-z -]{1,30}?) )?(?:from (?P<previous>.+?) )?to (?P<value>.+)",
        "{owner}.{attr}",
    ),
)
_STATE_CHANGE = re.compile(
    r"\b(now|switched|moved|upgraded|downgraded|cancell?ed|sold|renewed|reinstated|resumed|"
    r"paused|turned (on|off)|enabled|disabled|reopened|retired)\b",
    re.IGNORECASE,
)


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(" ".join(text.split())) if s.strip()]


_SUBORDINATE = re.compile(r",| so | because | but | since | which | until | unless | though ")


def _is_fact(sentence: str) -> bool:
    # Hedges and negations are judged in the main clause: "Auto-renew is turned on so I don't
    # lose it" states a fact. "Never deploy on Fridays" is a rule, not a negation.
    main = _SUBORDINATE.split(sentence, maxsplit=1)[0]
    rule = _PROCEDURES[0].regex.search(sentence) is not None
    return not (
        sentence.endswith("?")
        or _HEDGE.search(main)
        or _REPORTED.search(sentence)
        or (_NEGATED.search(main) and not rule)
        or _NOT_FACT_WORDS.search(sentence)
    )


def _attribute(raw: str) -> str | None:
    """An attribute's name from its noun phrase: articles dropped, cut before a preposition
    ("favorite restaurant in town" is the favorite restaurant), its last three words, singular."""
    words: list[str] = []
    for word in re.findall(r"[a-z0-9]+", raw.casefold()):
        if word in _PREPOSITIONS:
            break
        if word not in {"the", "a", "an", "new", "current", "old"}:
            words.append(word)
    if not words or words[-1] in _STOP_ATTRIBUTES or _PRONOUNS & set(words):
        return None
    name = "_".join(words[-3:])
    if name.endswith("s") and not name.endswith("ss") and len(name) > 3:
        name = name[:-1]  # count.cats and count.cat are one claim
    return name


def _claim_key(pattern: _Pattern, match: re.Match[str]) -> str | None:
    if not pattern.key:
        return None
    groups = match.groupdict()
    fields: dict[str, str] = {}
    if "{attr}" in pattern.key:
        attribute = _attribute(groups.get("attr") or "")
        if attribute is None:
            return None
        fields["attr"] = attribute
    # Whose attribute: the people talking to the assistant ("my", "our", and "your" when the
    # assistant confirms); one owner, so "our office" and "your office" are one claim.
    fields["owner"] = "user"
    key = pattern.key.format(**fields)
    return key if CLAIM_KEY.match(key) else None


_VALUE_END = re.compile(
    r"[,;:!?()]|\.(?!\d)| (?:and|but|which|so|because|with|since|on|at|in|from|by|last|this|"
    r"next|after|before|until|now)\b",
    re.IGNORECASE,
)
_VALUE_LEAD = re.compile(
    r"^(?:(?:now|a|an|the|about|at|on|in|officially|still|scheduled|set|booked|planned|"
    r"for|to|going|located)\s+)+",
    re.IGNORECASE,
)


def _value(raw: str | None) -> str | None:
    """A stated value cut to its phrase: up to the first clause break, at most four words,
    without leading articles; None when nothing specific is left."""
    if not raw:
        return None
    phrase = _VALUE_LEAD.sub("", _VALUE_END.split(raw, maxsplit=1)[0].strip())
    words = phrase.split()[:4]
    value = " ".join(words).strip(" '\"")
    return value if len(value) >= 2 else None


def _fact_of(sentence: str, episode: Episode, confirmed: bool) -> Fact | None:
    for pattern in (*_PROCEDURES, *_DECISIONS, *_ATTRIBUTES):
        match = pattern.regex.search(sentence)
        if match is None:
            continue
        claim_key = _claim_key(pattern, match)
        groups = match.groupdict()
        if pattern.key and claim_key is None and not groups.get("previous"):
            continue  # an attribute pattern without a usable attribute: try the next one
        value = _value(sentence[match.end() :] if pattern.tail else groups.get("value"))
        previous = groups.get("previous")
        # A change "from X to Y" is stated as what holds now: Y (X is what it supersedes).
        said = sentence.replace(f" from {previous} to ", " to ") if previous else sentence
        fact = _build(pattern.kind, pattern.memory_type, claim_key, said, episode, confirmed)
        return dataclasses.replace(fact, value=value, previous=_value(previous))
    if _STATE_CHANGE.search(sentence) and re.match(r"^(i|we|my|our|your)\b", sentence, re.I):
        return _build("state", "semantic", None, sentence, episode, confirmed)
    return None


def _build(
    kind: str,
    memory_type: FactType,
    claim_key: str | None,
    sentence: str,
    episode: Episode,
    confirmed: bool,
) -> Fact:
    day = episode.occurred_at.date().isoformat()
    who = "the assistant confirmed" if confirmed else "the user said"
    label = claim_key or kind
    opening = sentence if len(sentence) <= 120 else sentence[:119] + "…"
    return Fact(
        memory_type=memory_type,
        heading=f"{label}: {opening}"[:200],
        content=f"On {day} {who}: {sentence}",
        confidence=0.9 if confirmed or claim_key else 0.75,
        claim_key=claim_key,
        valid_from=episode.occurred_at,
        sources=episode.sources,
    )


def _from_episode(episode: Episode) -> Iterable[Fact]:
    if episode.role == "user":
        sentences = _sentences(episode.text)
        confirmed = False
    elif episode.role == "assistant" and _CONFIRMATION.match(episode.text.strip()):
        sentences = _sentences(episode.text)[1:] or _sentences(episode.text)
        confirmed = True
    else:
        return
    seen: set[str | None] = set()
    for sentence in sentences:
        if not _is_fact(sentence):
            continue
        if confirmed and not re.search(r"\b(now|your|is|are)\b", sentence, re.I):
            continue
        fact = _fact_of(sentence, episode, confirmed)
        # One value per claim per turn: the first statement of it (a turn restating a key in a
        # second sentence is elaborating, not changing it).
        if fact is not None and (fact.claim_key is None or fact.claim_key not in seen):
            seen.add(fact.claim_key)
            yield fact


def extract(episodes: Sequence[Episode]) -> list[Fact]:
    """The facts of `episodes`, in episode order then sentence order. Same input, same output."""
    return [fact for episode in episodes for fact in _from_episode(episode)]
