"""The memory-stage rules of one evaluation, bound to its request and `now`: what the stages
(firing.py, stages.py, transform.py, budget.py) share, and the decision records they make.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime

from policies.conditions import Bound, Evidence, MemFn, Result
from policies.decisions import Decision, Outcome, Redaction
from policies.detectors import detectable
from policies.model import Bundle, Rule

__all__ = ["Plan", "Slot", "bind_slots"]

# Headings and contents -> per memory, the detectors that can hit it (detectors.detectable).
_Detectable = Callable[[Sequence[str], Sequence[str]], list[frozenset[str]]]
# A memory-stage decision's fields, without the memory's: built once per slot.
_Prefix = tuple[str, str, str, str, bool, str]


class Slot:
    """One memory-stage rule bound to the request."""

    __slots__ = (
        "bound",
        "by_value",
        "column",
        "const",
        "enforced",
        "evidence_cache",
        "fn",
        "is_allow",
        "keys",
        "prefix",
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
        # The same, keyed by the values alone, for columns of one class (explain.py).
        self.by_value: dict[object, tuple[Evidence, ...]] = {}
        mode = "enforce" if enforced else "log_only"
        self.prefix: _Prefix = (rule.id, rule.stage, rule.effect, mode, enforced, rule.reason)

    def evidence(self, memory: Mapping[str, object]) -> tuple[Evidence, ...]:
        """The evidence for this memory. Evidence depends only on the values the condition
        reads, so it is cached per distinct values: a cap on `memory_type == episodic` that
        fires 200 times explains itself once."""
        keys = self.keys
        if len(keys) == 1:  # the common case, without a generator
            value = memory.get(keys[0])
            # The class is part of the key: 1, 1.0 and True are equal but render differently.
            key: object = (
                (list, tuple(value)) if isinstance(value, list) else (value.__class__, value)
            )
        elif self.bound is None:
            return ()
        else:
            key = tuple(_cache_key(memory.get(name)) for name in keys)
        try:
            found = self.evidence_cache.get(key)
        except TypeError:  # an unhashable input value (of the wrong kind): explain uncached
            return self.explain(memory)
        if found is None:
            found = self.evidence_cache[key] = self.explain(memory)
        return found

    def explain(self, memory: Mapping[str, object]) -> tuple[Evidence, ...]:
        """The evidence for this memory, worked out afresh."""
        if self.bound is None:
            return ()
        return self.bound.evidence_for(memory)


def _cache_key(value: object) -> object:
    # The class is part of the key: 1, 1.0 and True are equal but render differently.
    if isinstance(value, list):
        return list, tuple(value)
    return value.__class__, value


class Plan:
    """The bound rules of one evaluation."""

    def __init__(self, bundle: Bundle, slots: list[Slot]) -> None:
        self.bundle = bundle
        self.slots = slots
        self.uniform = all(slot.enforced for slot in slots)
        self.deny_on_error = bundle.on_error == "deny"
        self.first_applicable = bundle.combining == "first-applicable"
        self.default: Outcome = "admit" if bundle.default_decision == "allow" else "deny"
        self.redacts = [slot.rule.effect == "redact" for slot in slots]
        # Whether a text shown can differ from the text stored: a redact rule in force.
        self.rewrites = any(
            r and slot.enforced for r, slot in zip(self.redacts, slots, strict=True)
        )
        self.caps = [slot.rule.effect == "cap" for slot in slots]
        self.has_cap = any(self.caps)
        self._detectable: dict[tuple[int, ...], _Detectable] = {}

    def detectable(self, redacts: tuple[int, ...]) -> _Detectable:
        """Per memory, which of the detectors the `redacts` slots name can hit its heading or
        content: a superset, cheaply (detectors.detectable)."""
        found = self._detectable.get(redacts)
        if found is None:
            named = dict.fromkeys(d for i in redacts for d in self.slots[i].rule.detectors)
            found = self._detectable[redacts] = detectable(named)
        return found

    def decision(
        self,
        i: int,
        memory_id: str,
        memory: Mapping[str, object],
        outcome: str,
        outcome_if_enforced: str,
        redactions: tuple[Redaction, ...] = (),
        error: str | None = None,
    ) -> Decision:
        slot = self.slots[i]
        evidence = slot.evidence(memory)
        # tuple.__new__ skips the NamedTuple's Python-level __new__: one per decision adds up.
        return tuple.__new__(
            Decision,
            (*slot.prefix, memory_id, evidence, outcome, outcome_if_enforced, redactions, error),
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
