"""What an evaluation found: per-rule decisions, per-memory outcomes, and a possible refusal.

Records are immutable. Decision and MemoryOutcome are NamedTuples rather than frozen dataclasses
because an evaluation creates one per memory and per firing rule, and tuples are made several
times faster; compare them by field, not by position.

Every record renders to JSON-safe data without floats (`to_json`), in a deterministic order,
because it is embedded in signed receipts. Redactions name a field, a detector and a count; the
redacted values themselves are never recorded.

Decision outcomes, by effect (the verdict as it took effect; `outcome_if_enforced` is the verdict
had the rule been enforced, which differs only under log_only or `on_error: allow`):

    require  "proceed" | "refuse"       deny    "deny" | "admit"      allow  "admit"
    redact   "redact"  | "unchanged"    cap     "cap"  | "admit"
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, NamedTuple

from policies.conditions import Evidence
from policies.jsonsafe import JsonValue
from policies.model import Effect, Mode, Stage

__all__ = ["Decision", "Evaluation", "MemoryOutcome", "Outcome", "Redaction", "Refusal"]

Outcome = Literal["admit", "deny", "cap"]


class Redaction(NamedTuple):
    """`(field, detector, count)`: how many hits of one detector were replaced in one field."""

    field: str
    detector: str
    count: int  # type: ignore[assignment]  # shadows tuple.count on purpose: the documented name

    def to_json(self) -> dict[str, JsonValue]:
        return {"count": self.count, "detector": self.detector, "field": self.field}


@dataclass(frozen=True, slots=True)
class Refusal:
    """An enforced require rule was not met: the whole request is refused."""

    rule_id: str
    reason: str

    def to_json(self) -> dict[str, JsonValue]:
        return {"reason": self.reason, "rule_id": self.rule_id}


class Decision(NamedTuple):
    """One rule that fired (or, for require, was evaluated), with its evidence."""

    rule_id: str
    stage: Stage
    effect: Effect
    mode: Mode
    applied: bool
    reason: str
    memory_id: str | None
    evidence: tuple[Evidence, ...]
    outcome: str
    outcome_if_enforced: str
    redactions: tuple[Redaction, ...] = ()
    error: str | None = None

    def to_json(self) -> dict[str, JsonValue]:
        return {
            "applied": self.applied,
            "effect": self.effect,
            "error": self.error,
            "evidence": [item.to_json() for item in self.evidence],
            "memory_id": self.memory_id,
            "mode": self.mode,
            "outcome": self.outcome,
            "outcome_if_enforced": self.outcome_if_enforced,
            "reason": self.reason,
            "redactions": [item.to_json() for item in self.redactions],
            "rule_id": self.rule_id,
            "stage": self.stage,
        }


class MemoryOutcome(NamedTuple):
    """The fate of one memory. `rule_id` is the deciding rule, None for the default decision.

    `redacted_heading` and `redacted_content` are the texts to deliver (equal to the input when
    nothing was redacted, and always under log_only).
    """

    memory_id: str
    outcome: Outcome
    outcome_if_enforced: Outcome
    rule_id: str | None
    rule_id_if_enforced: str | None
    redacted_heading: str
    redacted_content: str
    redactions: tuple[Redaction, ...] = ()
    redactions_if_enforced: tuple[Redaction, ...] = ()

    @property
    def delivered(self) -> bool:
        return self.outcome == "admit"

    def to_json(self) -> dict[str, JsonValue]:
        """The outcome without the texts (those belong to the bundle, not the decision log)."""
        return {
            "memory_id": self.memory_id,
            "outcome": self.outcome,
            "outcome_if_enforced": self.outcome_if_enforced,
            "redactions": [item.to_json() for item in self.redactions],
            "redactions_if_enforced": [item.to_json() for item in self.redactions_if_enforced],
            "rule_id": self.rule_id,
            "rule_id_if_enforced": self.rule_id_if_enforced,
        }


@dataclass(frozen=True, slots=True)
class Evaluation:
    """The result of `evaluate`: outcomes in input order, decisions in evaluation order."""

    mode: Mode
    refused: Refusal | None
    outcomes: tuple[MemoryOutcome, ...]
    decisions: tuple[Decision, ...]

    def outcome_for(self, memory_id: str) -> MemoryOutcome:
        for outcome in self.outcomes:
            if outcome.memory_id == memory_id:
                return outcome
        raise KeyError(memory_id)

    def to_json(self) -> dict[str, JsonValue]:
        return {
            "decisions": [decision.to_json() for decision in self.decisions],
            "mode": self.mode,
            "outcomes": [outcome.to_json() for outcome in self.outcomes],
            "refused": None if self.refused is None else self.refused.to_json(),
        }
