"""What a pattern is (a regex, the claim key its match gives, how its value is read), and the
patterns that carry no claim key: procedures and decisions."""

from __future__ import annotations

import re
from dataclasses import dataclass

from gateway.core.extraction.facts import FactType

__all__ = ["DECISIONS", "PROCEDURES", "Pattern", "p"]


@dataclass(frozen=True, slots=True)
class Pattern:
    kind: str  # what the fact is about, for its heading
    regex: re.Pattern[str]
    # Claim key template: {attr}, {owner} from the groups; "" for no claim key; "{amount}" or
    # "{race}" for the known claim the value updates (`KnownClaims`), no fact when none is.
    key: str
    memory_type: FactType = "semantic"
    tail: bool = False  # the value is what follows the match
    head: bool = False  # the attribute is its phrase's head noun, not its last three words
    intent: bool = False  # states an intention: "planning to", "going to" do not hedge it
    typed: bool = False  # the value group is a typed value (an amount, a day), kept whole
    # Words a sentence must have one of before the pattern is tried ("#": a digit): a set
    # lookup, where most sentences state nothing and the patterns backtrack.
    gate: frozenset[str] | None = None


def p(
    kind: str,
    pattern: str,
    key: str,
    memory_type: FactType = "semantic",
    *,
    tail: bool = False,
    head: bool = False,
    intent: bool = False,
    typed: bool = False,
    gate: str | None = None,
) -> Pattern:
    """A pattern, compiled case-insensitive (short, for the tables)."""
    regex = re.compile(pattern, re.IGNORECASE)
    needs = frozenset(gate.split()) if gate else None
    return Pattern(kind, regex, key, memory_type, tail, head, intent, typed, needs)


PROCEDURES = (
    p("procedure", r"^(always|never|from now on|going forward)\b", "", "procedural"),
    p("procedure", r"^to [a-z]+[^,]*, (run|use|open|call|type|go)\b", "", "procedural"),
)
DECISIONS = (p("decision", r"\bwe (decided|agreed|chose)\b", ""),)
