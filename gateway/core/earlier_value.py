"""A decision of the assembly defence (issue 33; `gateway.core.current_values`): a memory states
an earlier value of a claim that a newer one states the current value of, and is left out of
the bundle (`superseded_in_bundle`). By the claims the extractor reads (rule `stated_value`) or
by the question the task asks (rule `asked_value`: `leave_out`); each decision carries how alike
the two memories' texts are, for an auditor to weigh it by.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from gateway.core.model import Candidate, MemoryId
from gateway.core.supersession import jaccard, words

__all__ = ["ASKED", "RULE", "EarlierValue", "leave_out", "words_of"]

RULE: Literal["stated_value"] = "stated_value"
ASKED: Literal["asked_value"] = "asked_value"


@dataclass(frozen=True, slots=True)
class EarlierValue:
    """A decision: `earlier` states a value of `claim_key` that `current`, newer, replaces.
    `score` is how alike the two memories' texts are (token-set Jaccard, dates aside, as the
    `similarity` rule of compile measures it; rounded to three places), for an auditor to weigh
    the decision by: the claim key decides it."""

    current: MemoryId
    earlier: MemoryId
    claim_key: str
    score: float
    rule: Literal["stated_value", "asked_value"] = RULE


def words_of(candidate: Candidate) -> frozenset[str]:
    return words(f"{candidate.heading}\n{candidate.content}")


def leave_out(
    found: dict[str, EarlierValue], turn: Candidate, winner: Candidate, claim: str
) -> None:
    score = round(jaccard(words_of(turn), words_of(winner)), 3)
    found[turn.memory_id] = EarlierValue(winner.memory_id, turn.memory_id, claim, score, ASKED)
