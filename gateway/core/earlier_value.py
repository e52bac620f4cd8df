"""A decision of the assembly defence (issue 33; `gateway.core.current_values`): a memory states
an earlier value of a claim that a newer one states the current value of, and is left out of
the bundle (`superseded_in_bundle`). By the claims the extractor reads (rule `stated_value`) or
by the question the task asks (rule `asked_value`: `leave_out`), or by weighing the user's
turns nearest it (rule `weighed_turns`); each decision carries a score for an auditor to weigh
it by.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from gateway.core.model import Candidate, MemoryId
from gateway.core.supersession import jaccard, words

__all__ = ["ASKED", "RULE", "WEIGHED", "EarlierValue", "leave_out", "words_of"]

RULE: Literal["stated_value"] = "stated_value"
ASKED: Literal["asked_value"] = "asked_value"
WEIGHED: Literal["weighed_turns"] = "weighed_turns"


@dataclass(frozen=True, slots=True)
class EarlierValue:
    """A decision: `earlier` states a value of `claim_key` that `current`, newer, replaces.
    `score`, for an auditor to weigh the decision by (rounded to three places): under rule
    `weighed_turns` the probability the weighing gave (`gateway.core.replacing_turns`), which
    decides it; under the others how alike the two memories' texts are (token-set Jaccard,
    dates aside, as the `similarity` rule of compile measures it): the claim key decides it."""

    current: MemoryId
    earlier: MemoryId
    claim_key: str
    score: float
    rule: Literal["stated_value", "asked_value", "weighed_turns"] = RULE


def words_of(candidate: Candidate) -> frozenset[str]:
    return words(f"{candidate.heading}\n{candidate.content}")


def leave_out(
    found: dict[str, EarlierValue], turn: Candidate, winner: Candidate, claim: str
) -> None:
    score = round(jaccard(words_of(turn), words_of(winner)), 3)
    found[turn.memory_id] = EarlierValue(winner.memory_id, turn.memory_id, claim, score, ASKED)
