"""A policy bundle as data: frozen records, built only by the linter (`load_bundle`).

Each rule compiles its condition when it is constructed, so evaluation never parses or compiles
anything: a bundle is loaded once and evaluated many times.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final, Literal

from policies.conditions import CompiledCondition, Condition

__all__ = [
    "API_VERSION",
    "DEFAULT_STAGE",
    "DETECTOR_NAMES",
    "Bundle",
    "Combining",
    "DefaultDecision",
    "Effect",
    "Mode",
    "Rule",
    "Stage",
    "WithheldCount",
]

API_VERSION: Final = "ctxgw/v1"

Effect = Literal["require", "deny", "allow", "redact", "cap"]
Stage = Literal["request", "admit", "transform", "budget"]
Mode = Literal["enforce", "log_only"]
Combining = Literal["deny-overrides", "first-applicable"]
DefaultDecision = Literal["allow", "deny"]
WithheldCount = Literal["hidden", "shown"]

# Each effect belongs to exactly one stage; `stage:` may be omitted and is then filled in.
DEFAULT_STAGE: Final[dict[Effect, Stage]] = {
    "require": "request",
    "deny": "admit",
    "allow": "admit",
    "redact": "transform",
    "cap": "budget",
}

# Kept here (not in detectors.py) so that the model does not depend on the regex machinery.
DETECTOR_NAMES: Final = ("api_token", "email", "iban", "card", "phone")


@dataclass(frozen=True, slots=True)
class Rule:
    id: str
    effect: Effect
    stage: Stage
    when: Condition | None = None
    reason: str = ""
    mode: Mode = "enforce"
    detectors: tuple[str, ...] = ()
    max_items: int | None = None
    max_tokens: int | None = None
    compiled: CompiledCondition | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        compiled = None if self.when is None else CompiledCondition(self.when)
        object.__setattr__(self, "compiled", compiled)


@dataclass(frozen=True, slots=True)
class Bundle:
    name: str
    default_decision: DefaultDecision
    rules: tuple[Rule, ...] = ()
    revision: str = ""
    description: str = ""
    mode: Mode = "enforce"
    combining: Combining = "deny-overrides"
    on_error: DefaultDecision = "deny"
    # Whether an agent learns how many memories the policy withheld from it (denied or capped):
    # `hidden` (the default) says nothing, not even that there were any; auditors always see.
    withheld_count: WithheldCount = "hidden"
    api_version: str = API_VERSION

    def effective_mode(self, rule: Rule) -> Mode:
        """log_only when the bundle or the rule says so."""
        return "log_only" if "log_only" in (self.mode, rule.mode) else "enforce"

    def memory_fields(self) -> frozenset[str]:
        """The memory fields (``content``, ``namespace``, …) any rule's condition reads, in any
        mode: what an evaluation needs of a memory besides what redaction rewrites."""
        return frozenset().union(
            *(rule.compiled.memory_keys for rule in self.rules if rule.compiled is not None)
        )
