"""The claim key of a match: the attribute's name read from its noun phrase (its head, or what
the head is the kind of), owned by the user, or the known claim an unnamed update refers to."""

from __future__ import annotations

import re

from gateway.core.extraction.patterns import Pattern
from gateway.core.extraction.vocabulary import (
    ARTICLES,
    GENERIC_HEADS,
    MODIFIERS,
    PARTNER_ROLES,
    PREPOSITIONS,
    PRONOUNS,
    RACE_KINDS,
    STOP_ATTRIBUTES,
)
from gateway.core.known_claims import KnownClaims
from gateway.core.supersession import CLAIM_KEY

__all__ = ["claim_key_of"]


def _attribute(raw: str, *, head: bool = False) -> str | None:
    """An attribute's name from its noun phrase: articles dropped, cut before a preposition
    ("favorite restaurant in town" is the favorite restaurant), singular. Its last three words,
    or with `head` its head noun: the noun itself, unless that only says what kind of value it
    holds ("budget", "flag", "account"), when the name in the phrase or the word before is."""
    tokens = re.findall(r"[^\W_][\w'-]*", raw)
    before: list[str] = []
    after: list[str] = []
    for token in tokens:
        folded = token.casefold()
        if after or folded in PREPOSITIONS:
            after.append(token)
            continue
        dropped = MODIFIERS if head else ARTICLES
        if folded not in dropped:
            before.append(token)
    words = [t.casefold().removesuffix("'s").replace("-", "_").replace("'", "") for t in before]
    if not words or words[-1] in STOP_ATTRIBUTES or PRONOUNS & set(words):
        return None
    if not head:
        name = "_".join(words[-3:])
    elif words[-1] not in GENERIC_HEADS:
        name = words[-1]
    else:
        named = [t for t in before[:-1] + after[1:] if t[0].isupper() or "_" in t]
        if named:
            name = named[0].casefold().replace("-", "_")
        elif len(words) > 1:
            name = words[-2]
        else:
            name = words[-1]
    if name.endswith("s") and not name.endswith("ss") and len(name) > 3:
        name = name[:-1]  # count.cats and count.cat are one claim
    return name


def claim_key_of(
    pattern: Pattern, groups: dict[str, str | None], claims: KnownClaims
) -> str | None:
    if not pattern.key:
        return None
    if pattern.key == "{amount}":
        return claims.amount(groups.get("value") or "")
    if pattern.key == "{race}":
        return claims.newest_of(RACE_KINDS)
    fields: dict[str, str] = {}
    if "{attr}" in pattern.key:
        raw = groups.get("attr") or groups.get("a2")
        if raw is None and pattern.kind == "relation":
            raw = "user"  # "we got married": the user's own
        attribute = _attribute(raw or "", head=pattern.head)
        if attribute is None:
            return None
        fields["attr"] = attribute
        if pattern.key == "user.{attr}" and attribute in PARTNER_ROLES:
            fields["attr"] = "partner"
    if "{per}" in pattern.key:
        fields["per"] = groups.get("per") or ""
    # Whose attribute: the people talking to the assistant ("my", "our", and "your" when the
    # assistant confirms); one owner, so "our office" and "your office" are one claim.
    fields["owner"] = "user"
    key = pattern.key.format(**fields)
    if key.startswith("user.relationship"):
        key = "user.relationship"
    return key if CLAIM_KEY.match(key) else None
