"""Identity from a self-introduction, in the shapes people introduce themselves by: "I'm Bob
Martinez from Acme Inc.", "Bob here, from Acme", "this is Dana at Northwind", "Hi, Dana Lee,
head of IT at Northwind", "my name's Bob", a plan named alone ("Enterprise plan.") or held
("we're on the Pro plan"), and a role ("I'm the IT admin at Acme", "I work as a nurse").

A name is capitalized words (not a pronoun, a greeting or a plan); an organization is
capitalized words with their legal suffix ("Acme Inc."); a role is the lowercase phrase between
an article and "at"/"for"/"with" an organization, or after "work as". Each becomes a fact with
its claim key (`user.name`, `user.employer`, `user.role`, `account.plan`).

This is the reading of rules/2026-12-05.1, kept as it was for what it compiled; later
versions read introductions by `introducing`.
"""

from __future__ import annotations

import re

__all__ = ["introduced", "speaker_name"]

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


def speaker_name(raw: str | None) -> str | None:
    """`raw` as a name, or None when its first word is no name (a pronoun, a greeting, a
    contraction: "I'm here to help")."""
    if not raw:
        return None
    first = raw.split()[0].casefold()
    if first in _NOT_NAMES or re.search(r"['’](?:m|re|s|ll|ve|d)$", raw.split()[0], re.I):
        return None  # a pronoun or a contraction ("I'm here to help") names no one
    return raw


def introduced(sentence: str, before: str = "", asking: bool = False) -> dict[str, str]:
    """The identity claims `sentence` introduces its speaker by, each key once."""
    del before, asking  # this version reads each sentence alone, and no question
    found: dict[str, str] = {}
    for shape in _SHAPES:
        for match in shape.finditer(sentence):
            name = speaker_name(match.group("name"))
            if name is None:
                continue
            found.setdefault("user.name", name)
            org = match.groupdict().get("org")
            if org:
                found.setdefault("user.employer", org.rstrip(".,"))
            role = match.groupdict().get("role")
            if role:
                found.setdefault("user.role", role)
    for match in _ROLE_AT.finditer(sentence):
        found.setdefault("user.role", match.group("role"))
        found.setdefault("user.employer", match.group("org").rstrip(".,"))
    for match in _WORK_AS.finditer(sentence):
        found.setdefault("user.role", match.group("role"))
    for match in _PLAN.finditer(sentence):
        found.setdefault("account.plan", match.group("plan"))
    return found
