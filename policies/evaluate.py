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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from policies.conditions import Evidence
from policies.decisions import Decision, Evaluation, Refusal
from policies.fields import FIELDS, ConditionError, check_value
from policies.judgement import Judgement
from policies.model import Bundle, Rule
from policies.plan import Plan, bind_slots

__all__ = ["RequestJudgement", "evaluate", "judge", "judge_request"]

_REQUEST_FIELDS = tuple(spec for spec in FIELDS.values() if spec.scope == "request")


def evaluate(
    bundle: Bundle,
    request: Mapping[str, object],
    memories: Sequence[Mapping[str, object]],
    now: datetime,
) -> Evaluation:
    """Apply `bundle` to `memories` (in rank order, best first) for `request` at `now`, with
    every text disclosed (and so redacted where a rule says so).

    Raises ValueError when `now` is naive and TypeError when a memory has no string
    `memory_id`; every other oddity in the inputs (missing fields, values of the wrong type)
    is a finding of the evaluation, never an exception.
    """
    return judge(bundle, request, memories, now).evaluation(full=range(len(memories)))


@dataclass(frozen=True, slots=True)
class RequestJudgement:
    """The request stage of one evaluation, judged once: whether an enforced `require`
    refuses (`refused`), and its decisions. The memory stages follow with `judge`, bound to the
    same request and instant, so a disclosure decides its refusal before reading any memory and
    never runs the request rules twice."""

    bundle: Bundle
    refused: Refusal | None
    would_refuse: Rule | None
    decisions: tuple[Decision, ...]
    plan: Plan | None  # None when refused: every memory is then denied

    def judge(self, memories: Sequence[Mapping[str, object]]) -> Judgement:
        """Judge `memories` (in rank order, best first); redaction waits for
        `Judgement.texts` and `Judgement.evaluation`."""
        stage = (self.refused, self.would_refuse, list(self.decisions))
        return Judgement(self.bundle.mode, self.plan, memories, stage)

    def evaluation(self) -> Evaluation:
        """The request stage alone, as an evaluation of no memories (a refusal's record)."""
        return self.judge([]).evaluation()


def judge_request(bundle: Bundle, request: Mapping[str, object], now: datetime) -> RequestJudgement:
    """Run the request stage of `bundle` for `request` at `now`."""
    if now.utcoffset() is None:
        raise ValueError("now must be a timezone-aware datetime")
    request_view = {
        spec.key: check_value(spec.kind, request.get(spec.key)) for spec in _REQUEST_FIELDS
    }
    decisions: list[Decision] = []
    refused, would_refuse = _request_stage(bundle, request_view, now, decisions)
    plan = None if refused is not None else Plan(bundle, bind_slots(bundle, request_view, now))
    return RequestJudgement(bundle, refused, would_refuse, tuple(decisions), plan)


def judge(
    bundle: Bundle,
    request: Mapping[str, object],
    memories: Sequence[Mapping[str, object]],
    now: datetime,
) -> Judgement:
    """As `evaluate`, but redaction waits for `Judgement.texts` and `Judgement.evaluation`: for
    a caller that shows only some of the texts (a context assembly), whose receipt then speaks
    of those alone."""
    return judge_request(bundle, request, now).judge(memories)


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
