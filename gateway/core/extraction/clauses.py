"""What a match states: the clause it stands in (a fact states its own clause, not its
neighbours' values) and its value, cut to a phrase."""

from __future__ import annotations

import re

from gateway.core.extraction.vocabulary import PRONOUNS

__all__ = ["RELATIVE", "clause_of", "clause_span", "value_of"]


_VALUE_END = re.compile(
    r"[;:!?()]|,(?!\d{3})|(?<!\bDr)(?<!\bMr)(?<!\bMs)(?<!\bMrs)\.(?!\d)| (?:and|but|which|so|because|with|since|on|at|in|from|by|last|"
    r"this|next|after|before|until|now|for|through|instead)\b",
    re.IGNORECASE,
)
_VALUE_LEAD = re.compile(
    r"^(?:(?:now|a|an|the|about|at|on|in|officially|still|scheduled|set|booked|planned|"
    r"for|to|going|located|listed as|roughly|around)\s+)+",
    re.IGNORECASE,
)
_HOUSE_NUMBER = re.compile(r"^\d+[a-z]? (?=[A-Z])")


def value_of(raw: str | None) -> str | None:
    """A stated value cut to its phrase: up to the first clause break, at most four words,
    without leading articles or an address's house number; None when nothing specific is
    left."""
    if not raw:
        return None
    phrase = _VALUE_LEAD.sub("", _VALUE_END.split(raw, maxsplit=1)[0].strip())
    phrase = _HOUSE_NUMBER.sub("", phrase)
    words = phrase.split()[:4]
    value = " ".join(words).strip(" '\"")
    return value if len(value) >= 2 and value.casefold() not in PRONOUNS else None


RELATIVE = re.compile(r"(?:which|that|who|whose|where)\b", re.IGNORECASE)
_CLAUSE_BREAK = re.compile(r"[;:] |, (?!\d)| (?:and|but|so) (?=i |we |my |our |it |the )")


def clause_span(sentence: str, start: int, end: int) -> tuple[int, int]:
    """Where the clause of `sentence` a match from `start` to `end` stands in begins and ends:
    from the break before it to the next comma or semicolon after it. A fact states its own
    clause, not its neighbours' values ("Venue is $6,400, catering budget is $9,000")."""
    opening = 0
    for brk in _CLAUSE_BREAK.finditer(sentence, 0, start):
        opening = brk.end()
    closing = re.search(r"[;,] (?!\d)", sentence[end:])
    return opening, end + closing.start() if closing else len(sentence)


def clause_of(sentence: str, opening: int, closing: int) -> str:
    clause = sentence[opening:closing].strip(" ,;")
    if clause and clause[-1] not in ".!?":
        clause += "."
    return clause[0].upper() + clause[1:] if clause else sentence
