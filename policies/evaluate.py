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
from datetime import datetime
from itertools import repeat

from policies.budget import run_budget
from policies.conditions import Evidence
from policies.decisions import Decision, Evaluation, MemoryOutcome, Outcome, Redaction, Refusal
from policies.fields import FIELDS, ConditionError, check_value
from policies.firing import fire_rules, values_of
from policies.model import Bundle, Rule
from policies.plan import Plan, bind_slots
from policies.stages import Admission, admit_decisions, signatures
from policies.transform import redact_all

__all__ = ["evaluate"]

_REQUEST_FIELDS = tuple(spec for spec in FIELDS.values() if spec.scope == "request")
# A cap decision's (outcome, outcome_if_enforced, redactions, error), by whether the cap
# stopped the memory on each track (actual, if enforced).
_CAP_VERDICTS: dict[tuple[bool, bool], tuple[str, str, tuple[()], None]] = {
    (actual, as_if): ("cap" if actual else "admit", "cap" if as_if else "admit", (), None)
    for actual in (True, False)
    for as_if in (True, False)
}


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
    outcomes = _memory_stages(plan, memories, would_refuse, decisions)
    return Evaluation(bundle.mode, None, outcomes, tuple(decisions))


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


def _memory_stages(
    plan: Plan,
    memories: Sequence[Mapping[str, object]],
    would_refuse: Rule | None,
    decisions: list[Decision],
) -> tuple[MemoryOutcome, ...]:
    """Admit, transform and budget; the outcomes, and the decisions appended in memory order.

    Works on columns (one list per outcome field, one item per memory) filled from the
    signatures, then patched where redaction or a cap changed a memory's fate: most memories
    then cost no Python-level step of their own.
    """
    count = len(memories)
    dicts = set(map(type, memories)) <= {dict}  # read column-wise in C (firing.values_of)
    ids = _memory_ids(values_of(memories, "memory_id", dicts=dicts))
    headings, bad_headings = _texts(values_of(memories, "heading", dicts=dicts))
    contents, bad_contents = _texts(values_of(memories, "content", dicts=dicts))
    bad_text = _either(bad_headings, bad_contents)
    sigs = signatures(plan, fire_rules(plan, memories, dicts=dicts), bad_text, count)
    admissions = sigs.admissions
    fates = {admission: _fate(admission, would_refuse) for admission in dict.fromkeys(admissions)}
    outcome, outcome_if, rule_id, rule_id_if = (
        (list(column) for column in zip(*map(fates.__getitem__, admissions), strict=True))
        if count
        else ([], [], [], [])
    )
    found = admit_decisions(plan, admissions, ids, memories)

    redactions: list[tuple[Redaction, ...]] = [()] * count
    redactions_if: list[tuple[Redaction, ...]] = [()] * count
    for m, (actual, as_if, made) in redact_all(
        plan, sigs, ids, memories, (headings, contents)
    ).items():
        found.setdefault(m, []).extend(made)
        headings[m], contents[m] = actual.heading, actual.content
        redactions[m] = actual.redactions()
        if would_refuse is None:
            redactions_if[m] = redactions[m] if as_if is actual else as_if.redactions()

    slots = plan.slots
    refused_if = would_refuse is not None
    for m, i, in_actual, in_if in run_budget(plan, admissions, sigs.caps, memories):
        slot = slots[i]
        if in_actual:
            outcome[m], rule_id[m] = "cap", slot.rule.id
        if in_if and not refused_if:
            outcome_if[m], rule_id_if[m] = "cap", slot.rule.id
        # tuple.__new__ skips the NamedTuple's Python-level __new__: one per decision adds up.
        decision = tuple.__new__(
            Decision,
            (*slot.prefix, ids[m], slot.evidence(memories[m]), *_CAP_VERDICTS[in_actual, in_if]),
        )
        known = found.get(m)
        if known is None:
            found[m] = [decision]
        else:
            known.append(decision)

    for m in sorted(found):
        decisions.extend(found[m])
    columns = (
        ids,
        outcome,
        outcome_if,
        rule_id,
        rule_id_if,
        headings,
        contents,
        redactions,
        redactions_if,
    )
    # tuple.__new__ skips the NamedTuple's Python-level __new__: all in C, per memory.
    return tuple(map(tuple.__new__, repeat(MemoryOutcome), zip(*columns, strict=True)))


def _fate(
    admission: Admission, would_refuse: Rule | None
) -> tuple[Outcome, Outcome, str | None, str | None]:
    """(outcome, outcome if enforced, rule, rule if enforced) before redaction and budget."""
    (outcome, rule_id), (outcome_if, rule_id_if) = admission.admit, admission.admit_if
    if would_refuse is not None:
        outcome_if, rule_id_if = "deny", would_refuse.id
    return outcome, outcome_if, rule_id, rule_id_if


def _either(first: list[bool] | None, second: list[bool] | None) -> list[bool] | None:
    if first is None or second is None:
        return first or second
    return [a or b for a, b in zip(first, second, strict=True)]


def _memory_ids(ids: list[object]) -> list[str]:
    if not set(map(type, ids)) <= {str} and not all(isinstance(i, str) for i in ids):
        raise TypeError("every memory needs a string memory_id")
    return ids  # type: ignore[return-value]


def _texts(values: list[object]) -> tuple[list[str], list[bool] | None]:
    """A text field as delivered (missing or not a string: empty), and which are not strings
    (None when all are strings or missing)."""
    if set(map(type, values)) <= {str}:
        return values, None  # type: ignore[return-value]
    bad = [value is not None and not isinstance(value, str) for value in values]
    texts = [value if isinstance(value, str) else "" for value in values]
    return texts, bad if any(bad) else None
