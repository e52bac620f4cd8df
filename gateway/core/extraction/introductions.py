"""Identity from a self-introduction, in the shapes people introduce themselves by: "I'm Bob
Martinez from Acme Inc.", "Bob here, from Acme", "this is Dana at Northwind", "Hi, Dana Lee,
head of IT at Northwind", "my name's Bob", a plan named alone ("Enterprise plan.") or held
("we're on the Pro plan"), and a role ("I'm the IT admin at Acme", "I work as a nurse").

A name is capitalized words (not a pronoun, a greeting or a plan); an organization is
capitalized words with their legal suffix ("Acme Inc."); a role is the lowercase phrase between
an article and "at"/"for"/"with" an organization, or after "work as". Each becomes a fact with
its claim key (`user.name`, `user.employer`, `user.role`, `account.plan`).

Each version of the extractor reads them by its `Introductions`. `SECOND` (rules/2026-12-06.1)
reads three more shapes: the organization before "here" ("Dana Scully from Umbrella Corp here.",
"Bob Martinez (Acme Inc.) here"), a sentence that is only a signature ("Kenji Watanabe, product
manager at Soylent Labs."), and where the speaker works ("I work at Globex as the CFO"); and it
keeps apart an apposition naming someone of the speaker's ("Hi, Alice Chen, my manager at Acme,
asked me to write"): a role opening with a possessive is a relation, not the speaker's role,
and the name before it is not the speaker's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["FIRST", "SECOND", "Introduced", "Introductions", "introductions"]

_NAME = r"(?P<name>(?-i:[A-Z][a-z'’-]+(?: (?:[A-Z]\.|[A-Z][a-z'’-]+)){0,2}))"
_ORG = (
    r"(?P<org>(?-i:[A-Z][\w&'’.-]*(?: (?:[A-Z][\w&'’.-]*|&|of|and|de))*"
    r"(?:,? (?:Inc|LLC|Ltd|GmbH|Corp|Co|PLC|AG|SA)\.?)?))"
)
_ACRONYM = r"IT|HR|QA|VP|CTO|CEO|CFO|COO|SRE|UX|UI"
_ROLE = (
    r"(?P<role>(?-i:(?:[a-z][a-z-]*|"
    + _ACRONYM
    + r")(?: (?:[a-z][a-z-]*|"
    + _ACRONYM
    + r")){0,4}))"
)
_SHAPES = (
    # "I'm Bob Martinez from Acme Inc.", "I am Dana, with Northwind", "this is Sam at Globex".
    re.compile(
        r"(?:^|[,.!] |\b(?:hi|hello|hey)[,!]? )(?:i'm|i am|this is|it's|my name is|my name's|"
        r"name's) " + _NAME + r"(?:,? (?:from|at|with|of) " + _ORG + r")?(?=[,.!;]|$| and | here)",
        re.IGNORECASE,
    ),
    # "Bob here, from Acme", "Bob Martinez here at Acme Inc."
    re.compile(
        r"^(?:(?:hi|hello|hey)[,!]? )?" + _NAME + r" here\b(?:,? (?:from|at|with) " + _ORG + r")?",
        re.IGNORECASE,
    ),
    # "Hi, Dana Lee, head of IT at Northwind", "I'm Dana, the IT admin at Northwind".
    re.compile(
        r"(?:^(?:hi|hello|hey)[,!]? |\b(?:i'm|i am|this is) )"
        + _NAME
        + r", (?:the |a |an )?"
        + _ROLE
        + r" (?:at|for|with|of) "
        + _ORG,
        re.IGNORECASE,
    ),
)
# rules/2026-12-06.1 (`SECOND`): the organization before "here": "Dana Scully from Umbrella Corp
# here.", "Bob Martinez (Acme Inc.) here, quick question".
_FROM_HERE = re.compile(
    r"^(?:(?:hi|hello|hey)[,!]? )?"
    + _NAME
    + r"(?:,? (?:from|at|with|of) "
    + _ORG
    + r",?| \("
    + _ORG.replace("(?P<org>", "(?P<org_in>", 1)  # a group's name once per pattern
    + r"\)) here\b",
    re.IGNORECASE,
)
# A sentence that is only a signature: "Kenji Watanabe, product manager at Soylent Labs."
_SIGNATURE = re.compile(
    r"^" + _NAME + r", (?:the |a |an )?" + _ROLE + r" (?:at|for|with|of) " + _ORG + r"\W*$",
    re.IGNORECASE,
)
# Where the speaker works, and as what: "I work at Globex as the CFO", "I work for Initech".
_WORK_AT = re.compile(
    r"\bi work (?:at|for) " + _ORG + r"(?: as (?:the |a |an )?" + _ROLE + r")?(?=[,.!;]|$| and )",
    re.IGNORECASE,
)
# A role opening with a possessive names a relation of someone's ("my manager", "our new hire").
_POSSESSIVE = re.compile(r"^(?:my|our|your|his|her|their|its)\b", re.IGNORECASE)
_ROLE_AT = re.compile(
    r"\b(?:i'm|i am|i work as) (?:the |a |an )" + _ROLE + r" (?:at|for|with) " + _ORG,
    re.IGNORECASE,
)
_WORK_AS = re.compile(r"\bi work as (?:the |a |an )" + _ROLE + r"\b(?=[,.!;]|$)", re.IGNORECASE)
_PLAN = re.compile(
    r"(?:^|\b(?:on|to|onto|have|using|with|bought|purchased|upgraded to|downgraded to) )"
    r"(?:the |an? |our |my )?(?!(?:the|an?|our|my|your|their|this|that|his|her|its)\b)"
    r"(?P<plan>(?-i:[A-Z][\w+-]*(?: [A-Z][\w+-]*)?)) "
    r"(?P<kind>plan|tier|subscription|license|licence)\b",
    re.IGNORECASE,
)
_NOT_NAMES = frozenset(
    {
        *("i", "it", "this", "that", "there", "here", "just", "so", "not", "also", "really"),
        *("sorry", "glad", "happy", "sure", "fine", "good", "back", "new", "still", "trying"),
        *("thinking", "looking", "going", "having", "working", "on", "in", "at", "the", "a"),
        *("hi", "hello", "hey", "thanks", "okay", "ok", "yes", "no", "currently", "now"),
        *("i'm", "i’m", "we", "we're", "you", "you're", "he", "she", "they", "click", "tap"),
        *("scroll", "look", "come", "right", "over", "out", "up", "down", "welcome", "what"),
        *("who", "where", "when", "why", "how", "everyone", "everybody", "nobody", "someone"),
    }
)


@dataclass(frozen=True, slots=True)
class Introductions:
    """How a version reads introductions: the shapes a name (with an organization or a role)
    is introduced by, where one works (`works_at`), and whether a role opening with a
    possessive keeps its match from introducing the speaker (`relations_apart`)."""

    shapes: tuple[re.Pattern[str], ...]
    works_at: bool = False
    relations_apart: bool = False


# rules/2026-12-05.1.
FIRST = Introductions(_SHAPES)
# rules/2026-12-06.1: the organization before "here", a signature, where one works; a relation
# kept apart.
SECOND = Introductions((*_SHAPES, _FROM_HERE, _SIGNATURE), works_at=True, relations_apart=True)


@dataclass(frozen=True, slots=True)
class Introduced:
    """One identity claim of an introduction: its key and value."""

    claim_key: str
    value: str


def _org(match: re.Match[str]) -> str | None:
    """The organization a match names, in either of its places (`_FROM_HERE` has two)."""
    named = [value for key, value in match.groupdict().items() if key.startswith("org") and value]
    return named[0].rstrip(".,") if named else None


def _name(raw: str | None) -> str | None:
    if not raw:
        return None
    first = raw.split()[0].casefold()
    if first in _NOT_NAMES or re.search(r"['’](?:m|re|s|ll|ve|d)$", raw.split()[0], re.I):
        return None  # a pronoun or a contraction ("I'm here to help") names no one
    return raw


def introductions(sentence: str, reading: Introductions = FIRST) -> list[Introduced]:
    """The identity claims `sentence` introduces its speaker by, each key once, as `reading`
    reads them."""
    found: dict[str, str] = {}
    for match in (m for shape in reading.shapes for m in shape.finditer(sentence)):
        for key, value in _named(match, reading):
            found.setdefault(key, value)
    for match in _WORK_AT.finditer(sentence) if reading.works_at else ():
        found.setdefault("user.employer", match.group("org").rstrip(".,"))
        if match.group("role"):
            found.setdefault("user.role", match.group("role"))
    for match in _ROLE_AT.finditer(sentence):
        found.setdefault("user.role", match.group("role"))
        found.setdefault("user.employer", match.group("org").rstrip(".,"))
    for match in _WORK_AS.finditer(sentence):
        found.setdefault("user.role", match.group("role"))
    for match in _PLAN.finditer(sentence):
        found.setdefault("account.plan", match.group("plan"))
    return [Introduced(key, value) for key, value in found.items()]


def _named(match: re.Match[str], reading: Introductions) -> list[tuple[str, str]]:
    """The claims a shape's match introduces: none when its name is no one's or, read so, its
    role is a relation of someone's ("Alice Chen, my manager at Acme")."""
    name = _name(match.group("name"))
    role = match.groupdict().get("role")
    if name is None or (reading.relations_apart and role and _POSSESSIVE.match(role)):
        return []
    org = _org(match)
    return [
        ("user.name", name),
        *([("user.employer", org)] if org else []),
        *([("user.role", role)] if role else []),
    ]
