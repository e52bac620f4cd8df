"""The per-memory stages of an evaluation: admit and transform, on two tracks (budget.py
then walks the memories in rank order for the budget stage).

`evaluate.py` drives these; they live apart to keep each module to one concern. The hot loop
(`fire_rules`) is written for speed: conditions are bound to the request beforehand (request
leaves folded into constants), each rule is mapped over all memories in one comprehension, and
only the rules that fired are noted. Everything after that (combining, redaction, evidence)
looks at the fired rules alone, usually few, and a memory no rule touched costs next to
nothing. When every rule is enforced the two tracks are one and computed once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from itertools import compress

from policies.conditions import Bound, Evidence, MemFn, Result
from policies.decisions import Decision, Outcome, Redaction
from policies.detectors import redact_text, scan
from policies.fields import ConditionError
from policies.model import Bundle, Rule

__all__ = ["MemoryState", "Plan", "Slot", "Track", "bind_slots", "fire_rules", "run_memory"]

_TEXT_ERROR = ConditionError("E001", "memory.heading or memory.content is not a string")


class Slot:
    """One memory-stage rule bound to the request."""

    __slots__ = (
        "bound",
        "const",
        "enforced",
        "evidence_cache",
        "fn",
        "is_allow",
        "keys",
        "rule",
        "unknown_applies",
    )

    def __init__(self, rule: Rule, enforced: bool, bound: Bound | None) -> None:
        self.rule = rule
        self.enforced = enforced
        self.bound = bound
        self.fn: MemFn | None = None if bound is None else bound.fn
        self.const: Result = True if bound is None else bound.const
        self.is_allow = rule.effect == "allow"
        # Fail closed on unknown (a missing field): every effect but allow applies.
        self.unknown_applies = not self.is_allow
        self.keys = () if rule.compiled is None else tuple(sorted(rule.compiled.memory_keys))
        self.evidence_cache: dict[tuple[object, ...], tuple[Evidence, ...]] = {}

    def evidence(self, memory: Mapping[str, object]) -> tuple[Evidence, ...]:
        """The evidence for this memory. Evidence depends only on the values the condition
        reads, so it is cached per distinct values: a cap on `memory_type == episodic` that
        fires 200 times explains itself once."""
        if self.bound is None:
            return ()
        key = tuple(_cache_key(memory.get(name)) for name in self.keys)
        try:
            found = self.evidence_cache.get(key)
            cacheable = True
        except TypeError:  # an unhashable input value (of the wrong kind): explain uncached
            found, cacheable = None, False
        if found is None:
            collected: list[Evidence] = []
            self.bound.explain(memory, collected)
            found = tuple(collected)
            if cacheable:
                self.evidence_cache[key] = found
        return found


def _cache_key(value: object) -> object:
    # The class is part of the key: 1, 1.0 and True are equal but render differently.
    if isinstance(value, list):
        return list, tuple(value)
    return value.__class__, value


@dataclass(slots=True)
class Track:
    """One memory's fate on one track (actual, or as if every rule were enforced)."""

    outcome: Outcome
    rule_id: str | None
    heading: str
    content: str
    counts: dict[tuple[str, str], int]

    def redactions(self) -> tuple[Redaction, ...]:
        if not self.counts:
            return ()
        return tuple(Redaction(f, d, n) for (f, d), n in sorted(self.counts.items()))


@dataclass(slots=True)
class MemoryState:
    memory_id: str
    memory: Mapping[str, object]
    fired: list[int]  # slots whose rule applies to this memory, in rule order
    errors: dict[int, ConditionError] | None
    actual: Track
    if_enforced: Track  # the same object as `actual` when the plan is uniform
    decisions: list[Decision]


class Plan:
    """The bound rules of one evaluation and the fields memories need."""

    def __init__(self, bundle: Bundle, slots: list[Slot]) -> None:
        self.bundle = bundle
        self.slots = slots
        self.uniform = all(slot.enforced for slot in slots)
        self.deny_on_error = bundle.on_error == "deny"
        self.first_applicable = bundle.combining == "first-applicable"
        self.default: Outcome = "admit" if bundle.default_decision == "allow" else "deny"
        self.redacts = [slot.rule.effect == "redact" for slot in slots]
        self.has_redact = any(self.redacts)
        self.cap = [i for i, slot in enumerate(slots) if slot.rule.effect == "cap"]
        # With every admit rule enforced and no errors, both tracks admit alike.
        self.admit_uniform = all(
            slot.enforced for slot in slots if slot.rule.effect in ("deny", "allow")
        )

    def decision(
        self,
        i: int,
        state: MemoryState,
        outcome: str,
        outcome_if_enforced: str,
        redactions: tuple[Redaction, ...] = (),
        error: str | None = None,
    ) -> Decision:
        slot = self.slots[i]
        rule = slot.rule
        return Decision(
            rule.id,
            rule.stage,
            rule.effect,
            "enforce" if slot.enforced else "log_only",
            slot.enforced,
            rule.reason,
            state.memory_id,
            slot.evidence(state.memory),
            outcome,
            outcome_if_enforced,
            redactions,
            error,
        )


def bind_slots(bundle: Bundle, request: Mapping[str, object], now: datetime) -> list[Slot]:
    return [
        Slot(
            rule,
            bundle.effective_mode(rule) == "enforce",
            None if rule.compiled is None else rule.compiled.bind(request, now),
        )
        for rule in bundle.rules
        if rule.stage != "request"
    ]


def fire_rules(
    plan: Plan, memories: Sequence[Mapping[str, object]]
) -> tuple[list[list[int]], dict[int, dict[int, ConditionError]]]:
    """Per memory, the slots whose rule applies; and the slots whose condition failed."""
    count = len(memories)
    fired: list[list[int]] = [[] for _ in range(count)]
    errors: dict[int, dict[int, ConditionError]] = {}
    for i, slot in enumerate(plan.slots):
        fn = slot.fn
        results: list[Result]
        if fn is None:
            results = [slot.const] * count
        else:
            try:
                results = [fn(memory) for memory in memories]
            except (TypeError, ValueError, OverflowError, AttributeError):
                results = [_guarded(fn, memory) for memory in memories]
        if results.count(False) == count:
            continue  # the common case for most rules: nothing to note
        # compress() keeps the truthy results, in C: True, and errors (exceptions are truthy).
        for m in compress(range(count), results):
            result = results[m]
            if result is True:
                fired[m].append(i)
            else:
                errors.setdefault(m, {})[i] = result  # type: ignore[assignment]
        if slot.unknown_applies and None in results:
            for m in [m for m, result in enumerate(results) if result is None]:
                fired[m].append(i)  # slots run in rule order, so each list stays sorted
    return fired, errors


def _guarded(fn: MemFn, memory: Mapping[str, object]) -> Result:
    # Kinds are checked before any test, so this is only reached by inputs such as datetime
    # subclasses with odd comparisons; the rule then fails like any other condition error.
    try:
        return fn(memory)
    except (TypeError, ValueError, OverflowError, AttributeError) as exc:
        return ConditionError("E002", f"comparison failed ({type(exc).__name__})")


def run_memory(
    plan: Plan,
    memory: Mapping[str, object],
    fired: list[int],
    errors: dict[int, ConditionError] | None,
) -> MemoryState | None:
    """Admit and transform one memory; None when no rule touched it (the default applies)."""
    memory_id = memory.get("memory_id")
    if not isinstance(memory_id, str):
        raise TypeError("every memory needs a string memory_id")
    heading, content = _text(memory.get("heading")), _text(memory.get("content"))
    if heading is None or content is None:
        heading, content = heading or "", content or ""
        for i in [i for i in fired if plan.slots[i].rule.effect == "redact"]:
            fired.remove(i)
            errors = errors or {}
            errors[i] = _TEXT_ERROR
    if not fired and not errors:
        return None
    if not errors and all(plan.redacts[i] for i in fired) and not scan(heading + "\n" + content):
        return None  # only redact rules fired and no detector can hit: nothing to do or record
    outcome, rule_id = _admit(plan, fired, errors, True)
    actual = Track(outcome, rule_id, heading, content, {})
    if_enforced = actual
    if not plan.uniform:
        if errors or not plan.admit_uniform:
            outcome, rule_id = _admit(plan, fired, errors, False)
        if_enforced = Track(outcome, rule_id, heading, content, {})
    state = MemoryState(memory_id, memory, fired, errors, actual, if_enforced, [])
    _record_admit(plan, state)
    if plan.has_redact:
        _transform(plan, state)
    return state


def _text(value: object) -> str | None:
    """Heading and content as delivered: missing is empty, a non-string is None (an error)."""
    if value is None:
        return ""
    return value if isinstance(value, str) else None


def _admit(
    plan: Plan, fired: list[int], errors: dict[int, ConditionError] | None, enforced_only: bool
) -> tuple[Outcome, str | None]:
    slots = plan.slots
    if errors and plan.deny_on_error:
        for i in sorted(errors):
            if slots[i].enforced or not enforced_only:
                return "deny", slots[i].rule.id  # an error denies, whatever the combining says
    first_allow: str | None = None
    for i in fired:
        slot = slots[i]
        effect = slot.rule.effect
        if effect not in ("deny", "allow") or (enforced_only and not slot.enforced):
            continue
        if effect == "deny":
            return "deny", slot.rule.id  # the first deny decides under both combining algorithms
        if plan.first_applicable:
            return "admit", slot.rule.id
        if first_allow is None:
            first_allow = slot.rule.id
    if first_allow is not None:
        return "admit", first_allow
    return plan.default, None


def _record_admit(plan: Plan, state: MemoryState) -> None:
    errors = state.errors or {}
    for i in sorted([*state.fired, *errors]) if errors else state.fired:
        slot = plan.slots[i]
        effect = slot.rule.effect
        error = errors.get(i)
        if error is not None:
            no_effect = "unchanged" if effect == "redact" else "admit"
            if_enforced = "deny" if plan.deny_on_error else no_effect
            outcome = if_enforced if slot.enforced else no_effect
            state.decisions.append(plan.decision(i, state, outcome, if_enforced, error=error.code))
        elif effect in ("deny", "allow"):
            verdict = "admit" if slot.is_allow else "deny"
            outcome = verdict if slot.enforced else "admit"
            state.decisions.append(plan.decision(i, state, outcome, verdict))


def _transform(plan: Plan, state: MemoryState) -> None:
    actual, if_enforced = state.actual, state.if_enforced
    present: frozenset[str] | None = None
    for i in state.fired:
        slot = plan.slots[i]
        if slot.rule.effect != "redact":
            continue
        if present is None:
            # One scan tells which detectors can hit at all; most texts have none.
            present = scan(actual.heading + "\n" + actual.content)
        detectors = [name for name in slot.rule.detectors if name in present]
        if not detectors:
            continue
        hits_actual: tuple[Redaction, ...] = ()
        hits_if: tuple[Redaction, ...] = ()
        same_text = (actual.heading, actual.content) == (if_enforced.heading, if_enforced.content)
        if slot.enforced and actual.outcome == "admit":
            hits_actual = _redact(actual, detectors)
        if if_enforced is actual:
            hits_if = hits_actual
        elif if_enforced.outcome == "admit":
            if same_text and hits_actual:
                hits_if = _copy_redaction(actual, if_enforced, hits_actual)
            elif not (same_text and slot.enforced and actual.outcome == "admit"):
                hits_if = _redact(if_enforced, detectors)  # else: nothing was found above
        if hits_actual or hits_if:
            outcome = "redact" if hits_actual else "unchanged"
            outcome_if = "redact" if hits_if else "unchanged"
            shown = hits_actual if slot.enforced else hits_if
            state.decisions.append(plan.decision(i, state, outcome, outcome_if, shown))


def _redact(track: Track, detectors: list[str]) -> tuple[Redaction, ...]:
    hits: list[Redaction] = []
    for field in ("heading", "content"):
        done = redact_text(getattr(track, field), detectors)
        if done.counts:
            setattr(track, field, done.text)
            for detector, count in done.counts:
                hits.append(Redaction(field, detector, count))
                key = (field, detector)
                track.counts[key] = track.counts.get(key, 0) + count
    return tuple(sorted(hits))


def _copy_redaction(
    source: Track, target: Track, hits: tuple[Redaction, ...]
) -> tuple[Redaction, ...]:
    # Both tracks held the same text, so redacting again would find the same: reuse it.
    target.heading, target.content = source.heading, source.content
    for hit in hits:
        key = (hit.field, hit.detector)
        target.counts[key] = target.counts.get(key, 0) + hit.count
    return hits
