"""The per-memory stages of an evaluation: admit and transform, on two tracks (budget.py
then walks the memories in rank order for the budget stage).

`evaluate.py` drives these; they live apart to keep each module to one concern. Which rules
fired on which memory comes from `firing.py`. Everything after that (combining, redaction,
evidence) looks at the fired rules alone, usually few, and a memory no rule touched costs next
to nothing. Memories on which the same rules fired share their admit verdicts and which
detectors and caps concern them (`Signature`, computed once per evaluation); when every rule is
enforced the two tracks are one and computed once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime

from policies.conditions import Bound, Evidence, MemFn, Result
from policies.decisions import Decision, Outcome, Redaction
from policies.detectors import hit_test, redact_text, scan
from policies.fields import ConditionError
from policies.model import Bundle, Rule

__all__ = ["MemoryState", "Plan", "Signature", "Slot", "Track", "bind_slots", "run_memory"]

_TEXT_ERROR = ConditionError("E001", "memory.heading or memory.content is not a string")


class Slot:
    """One memory-stage rule bound to the request."""

    __slots__ = (
        "bound",
        "column",
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
        self.column = None if bound is None else bound.column
        self.const: Result = True if bound is None else bound.const
        self.is_allow = rule.effect == "allow"
        # Fail closed on unknown (a missing field): every effect but allow applies.
        self.unknown_applies = not self.is_allow
        self.keys = () if rule.compiled is None else rule.compiled.sorted_keys
        self.evidence_cache: dict[object, tuple[Evidence, ...]] = {}

    def evidence(self, memory: Mapping[str, object]) -> tuple[Evidence, ...]:
        """The evidence for this memory. Evidence depends only on the values the condition
        reads, so it is cached per distinct values: a cap on `memory_type == episodic` that
        fires 200 times explains itself once."""
        if self.bound is None:
            return ()
        keys = self.keys
        if len(keys) == 1:  # the common case, without a generator
            key: object = _cache_key(memory.get(keys[0]))
        else:
            key = tuple(_cache_key(memory.get(name)) for name in keys)
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
    caps: list[int]  # the fired cap slots, in rule order
    enforced_caps: list[int]  # those of them enforced


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
        self.caps = [slot.rule.effect == "cap" for slot in slots]
        # With every admit rule enforced and no errors, both tracks admit alike.
        self.admit_uniform = all(
            slot.enforced for slot in slots if slot.rule.effect in ("deny", "allow")
        )
        self.signatures: dict[tuple[int, ...], Signature] = {}
        # Per slot, the admit decision it records when it fires: (slot, outcome, verdict).
        self.records: list[tuple[int, str, str] | None] = []
        for i, slot in enumerate(slots):
            record = None
            if slot.rule.effect in ("deny", "allow"):
                verdict = "admit" if slot.is_allow else "deny"
                record = (i, verdict if slot.enforced else "admit", verdict)
            self.records.append(record)
        self._detectors: dict[tuple[int, ...], tuple[tuple[str, ...], Callable[[str], bool]]] = {}

    def detectors(self, redacts: list[int]) -> tuple[tuple[str, ...], Callable[[str], bool]]:
        """The detectors the `redacts` slots name, and a cheap test of whether any can hit."""
        key = tuple(redacts)
        found = self._detectors.get(key)
        if found is None:
            named = _detectors(self, redacts)
            found = self._detectors[key] = (named, hit_test(named))
        return found

    def signature(self, fired: list[int]) -> Signature:
        key = tuple(fired)
        found = self.signatures.get(key)
        if found is None:
            found = self.signatures[key] = Signature(self, fired)
        return found

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
        # tuple.__new__ skips the NamedTuple's Python-level __new__: one per decision adds up.
        return tuple.__new__(
            Decision,
            (
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
            ),
        )


class Signature:
    """What follows from the set of rules that fired on a memory when none failed: the admit
    verdict on both tracks, the admit decisions to record, the redact slots and the detectors
    they name, the caps that match. Shared by every memory with the same fired set."""

    __slots__ = (
        "admit",
        "admit_if",
        "caps",
        "detectors",
        "enforced_caps",
        "hit",
        "only_redact",
        "records",
        "redacts",
    )

    def __init__(self, plan: Plan, fired: list[int]) -> None:
        self.admit = _admit(plan, fired, None, True)
        # With every admit rule enforced and no errors, both tracks admit alike.
        self.admit_if = self.admit if plan.admit_uniform else _admit(plan, fired, None, False)
        records = plan.records
        self.records = [record for record in map(records.__getitem__, fired) if record]
        self.redacts = [i for i in fired if plan.redacts[i]]
        self.detectors, self.hit = plan.detectors(self.redacts)
        self.only_redact = len(self.redacts) == len(fired)
        self.caps = [i for i in fired if plan.caps[i]]
        self.enforced_caps = [i for i in self.caps if plan.slots[i].enforced]


def _detectors(plan: Plan, redacts: list[int]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(d for i in redacts for d in plan.slots[i].rule.detectors))


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
    if not errors:
        signature = plan.signature(fired)
        redacts = signature.redacts
        if redacts and not signature.hit(heading + "\n" + content):
            if signature.only_redact:
                return None  # no detector can hit: nothing to do or record
            redacts = []
        admit, admit_if = signature.admit, signature.admit_if
        detectors = signature.detectors
        caps, enforced_caps = signature.caps, signature.enforced_caps
    else:
        admit = _admit(plan, fired, errors, True)
        admit_if = _admit(plan, fired, errors, False)
        redacts = [i for i in fired if plan.redacts[i]]
        detectors = _detectors(plan, redacts)
        caps = [i for i in fired if plan.caps[i]]
        enforced_caps = [i for i in caps if plan.slots[i].enforced]
    actual = Track(admit[0], admit[1], heading, content, {})
    # One track when every rule is enforced; otherwise the other track as if they all were.
    if_enforced = actual if plan.uniform else Track(admit_if[0], admit_if[1], heading, content, {})
    state = MemoryState(
        memory_id, memory, fired, errors, actual, if_enforced, [], caps, enforced_caps
    )
    if errors:
        _record_admit(plan, state)
    else:
        for i, outcome, verdict in signature.records:
            state.decisions.append(plan.decision(i, state, outcome, verdict))
    if redacts:
        _transform(plan, state, redacts, detectors)
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


def _transform(plan: Plan, state: MemoryState, redacts: list[int], named: tuple[str, ...]) -> None:
    actual, if_enforced = state.actual, state.if_enforced
    # One scan tells which detectors can hit at all; most texts have none.
    present = scan(actual.heading + "\n" + actual.content, named)
    if not present:
        return
    for i in redacts:
        slot = plan.slots[i]
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
        done = redact_text(getattr(track, field), detectors, scanned=True)
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
