"""Evaluate a bundle for one request and its candidate memories. Pure: `now` is passed in.

Stages run in order: request (`require`), then per memory admit (`deny`/`allow`, combined
deny-overrides or first-applicable, else `default_decision`), transform (`redact`), and budget
(`cap`, walking memories in the given rank order: an item stays if it fits every cap that
matches it, otherwise it is capped and consumes nothing).

Two tracks are computed side by side: the *actual* one, with the rules whose effective mode is
enforce, and the *if-enforced* one, with every rule. Under log_only the first changes nothing and
the second says what enforcement would have done; both are recorded.

Fail closed: an unknown condition (missing field) makes deny, redact and cap rules apply and
allow and require rules not; a condition that raises (wrong input type) follows `on_error`, by
default denying the memory (or refusing the request) with the error code in the decision.
A cap with `max_tokens` treats a memory without a valid token count as not fitting.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime

from policies.budget import run_budget
from policies.conditions import Evidence
from policies.decisions import Decision, Evaluation, MemoryOutcome, Outcome, Redaction, Refusal
from policies.fields import FIELDS, ConditionError, check_value
from policies.firing import fire_rules
from policies.model import Bundle, Rule
from policies.stages import MemoryState, Plan, bind_slots, run_memory

__all__ = ["evaluate"]

_REQUEST_FIELDS = tuple(spec for spec in FIELDS.values() if spec.scope == "request")


def evaluate(
    bundle: Bundle,
    request: Mapping[str, object],
    memories: Sequence[Mapping[str, object]],
    now: datetime,
) -> Evaluation:
    """Apply `bundle` to `memories` (in rank order, best first) for `request` at `now`.

    Raises ValueError when `now` is naive and TypeError when a memory has no string
    `memory_id`; every other oddity in the inputs (missing fields, values of the wrong type)
    is a finding of the evaluation, never an exception.
    """
    if now.utcoffset() is None:
        raise ValueError("now must be a timezone-aware datetime")
    request_view = {
        spec.key: check_value(spec.kind, request.get(spec.key)) for spec in _REQUEST_FIELDS
    }
    decisions: list[Decision] = []
    refused, would_refuse = _request_stage(bundle, request_view, now, decisions)
    if refused is not None:
        denied = tuple(_refused_outcome(memory, refused.rule_id) for memory in memories)
        return Evaluation(bundle.mode, refused, denied, tuple(decisions))

    plan = Plan(bundle, bind_slots(bundle, request_view, now))
    fired, errors = fire_rules(plan, memories)
    states = [
        run_memory(plan, memory, fired[m], errors.get(m)) for m, memory in enumerate(memories)
    ]
    run_budget(plan, states)

    outcomes: list[MemoryOutcome] = []
    untouched = _untouched(plan, would_refuse)
    for memory, state in zip(memories, states, strict=True):
        if state is None:
            outcomes.append(untouched(memory))
        else:
            decisions.extend(state.decisions)
            outcomes.append(_outcome(state, would_refuse))
    return Evaluation(bundle.mode, None, tuple(outcomes), tuple(decisions))


def _request_stage(
    bundle: Bundle, request_view: Mapping[str, object], now: datetime, decisions: list[Decision]
) -> tuple[Refusal | None, Rule | None]:
    refused: Refusal | None = None
    would_refuse: Rule | None = None
    for rule in bundle.rules:
        if rule.stage != "request" or rule.compiled is None:
            continue
        enforced = bundle.effective_mode(rule) == "enforce"
        bound = rule.compiled.bind(request_view, now)
        result = bound.result({})
        found: list[Evidence] = []
        bound.explain({}, found)
        evidence = tuple(found)
        error = result.code if isinstance(result, ConditionError) else None
        met = bundle.on_error == "allow" if error is not None else result is True
        if_enforced = "proceed" if met else "refuse"
        decisions.append(
            Decision(
                rule_id=rule.id,
                stage=rule.stage,
                effect=rule.effect,
                mode=bundle.effective_mode(rule),
                applied=enforced,
                reason=rule.reason,
                memory_id=None,
                evidence=evidence,
                outcome=if_enforced if enforced else "proceed",
                outcome_if_enforced=if_enforced,
                error=error,
            )
        )
        if not met:
            if enforced and refused is None:
                refused = Refusal(rule.id, rule.reason)
            if would_refuse is None:
                would_refuse = rule
    return refused, would_refuse


def _refused_outcome(memory: Mapping[str, object], rule_id: str) -> MemoryOutcome:
    heading, content = memory.get("heading"), memory.get("content")
    return MemoryOutcome(
        memory_id=_memory_id(memory),
        outcome="deny",
        outcome_if_enforced="deny",
        rule_id=rule_id,
        rule_id_if_enforced=rule_id,
        redacted_heading=heading if isinstance(heading, str) else "",
        redacted_content=content if isinstance(content, str) else "",
    )


def _memory_id(memory: Mapping[str, object]) -> str:
    memory_id = memory.get("memory_id")
    if not isinstance(memory_id, str):
        raise TypeError("every memory needs a string memory_id")
    return memory_id


def _untouched(
    plan: Plan, would_refuse: Rule | None
) -> Callable[[Mapping[str, object]], MemoryOutcome]:
    """The outcome of a memory no rule fired on: the default decision, texts as given."""
    outcome, outcome_if = plan.default, plan.default if would_refuse is None else "deny"
    rule_if = None if would_refuse is None else would_refuse.id

    def untouched(memory: Mapping[str, object]) -> MemoryOutcome:
        heading, content = memory.get("heading"), memory.get("content")
        # tuple.__new__ skips the NamedTuple's Python-level __new__ (one per memory).
        return tuple.__new__(
            MemoryOutcome,
            (
                _memory_id(memory),
                outcome,
                outcome_if,
                None,
                rule_if,
                heading if isinstance(heading, str) else "",
                content if isinstance(content, str) else "",
                (),
                (),
            ),
        )

    return untouched


def _outcome(state: MemoryState, would_refuse: Rule | None) -> MemoryOutcome:
    actual, if_enforced = state.actual, state.if_enforced
    redactions = actual.redactions()
    outcome_if: Outcome = "deny"
    rule_if: str | None = None
    redactions_if: tuple[Redaction, ...] = ()
    if would_refuse is not None:
        rule_if = would_refuse.id
    else:
        outcome_if, rule_if = if_enforced.outcome, if_enforced.rule_id
        redactions_if = redactions if if_enforced is actual else if_enforced.redactions()
    return tuple.__new__(
        MemoryOutcome,
        (
            state.memory_id,
            actual.outcome,
            outcome_if,
            actual.rule_id,
            rule_if,
            actual.heading,
            actual.content,
            redactions,
            redactions_if,
        ),
    )
