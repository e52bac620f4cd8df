"""Which rules fire on which memories: the hot loop of an evaluation.

Conditions are bound to the request beforehand (request leaves folded into constants), so each
memory-stage rule is a function of a memory. Three ways to apply it, fastest first:

- Most rules read one low-cardinality field (namespace, memory_type, source_type): the function
  runs once per distinct value and its results are looked up per memory. That is exact, because
  a bound condition reads nothing but the fields it names, and it is only done for values of
  exactly `str` (or None), whose equality is plain and never crosses classes (1, 1.0 and True
  are equal, and must not share a result).
- A single leaf over a column whose values are all of a valid kind already (floats that are not
  NaN, strings, lists of strings) skips the per-memory kind check: its test is mapped directly.
- Anything else calls the function per memory, in one comprehension.

Only the rules that fire or fail on some memory are returned, each with its result column;
stages.py groups memories by those results.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

from policies.conditions import MemFn, Result
from policies.fields import ConditionError, FieldKind
from policies.operators import Test
from policies.plan import Plan

__all__ = ["Fired", "fire_rules"]

_PLAIN = frozenset({str, type(None)})
# Classes whose values a leaf of each kind accepts as they are (see fields.CHECKERS; a
# datetime also needs an offset, so datetimes always take the full check).
_VALID: dict[FieldKind, frozenset[type]] = {
    "str": frozenset({str}),
    "int": frozenset({int}),
    "number": frozenset({int, float}),
    "str_list": frozenset({list, tuple}),
    "datetime": frozenset(),
}
_COMPARISON_ERRORS = (TypeError, ValueError, OverflowError, AttributeError)
# (the column of a field's values, and one memory per distinct value, or None when the column
# holds other classes or too many distinct values to be worth it)
_Column = tuple[list[object], dict[object, Mapping[str, object]] | None]


class Fired(NamedTuple):
    """A slot's results, one per memory: True, False, None (unknown) or a ConditionError."""

    slot: int
    results: list[Result]
    errors: bool  # whether any result is a ConditionError


def fire_rules(plan: Plan, memories: Sequence[Mapping[str, object]]) -> list[Fired]:
    """The slots that fire or fail on some memory, with their results, in rule order."""
    count = len(memories)
    found: list[Fired] = []
    columns: dict[str, _Column] = {}
    for i, slot in enumerate(plan.slots):
        fn = slot.fn
        results: list[Result] | None = None
        if fn is None:
            if slot.const is False:
                continue
            results = [slot.const] * count
        elif len(slot.keys) == 1:
            key = slot.keys[0]
            column = columns.get(key)
            if column is None:
                column = columns[key] = _column(memories, key)
            values, representatives = column
            if representatives is not None:
                memo = {value: _guarded(fn, memory) for value, memory in representatives.items()}
                if all(result is False for result in memo.values()):
                    continue  # the common case for most rules: nothing to note
                results = list(map(memo.__getitem__, values))
        if results is None and slot.column is not None:
            results = _tested(slot.column, columns, memories)
        if results is None:
            assert fn is not None
            try:
                results = [fn(memory) for memory in memories]
            except _COMPARISON_ERRORS:
                results = [_guarded(fn, memory) for memory in memories]
        falses = results.count(False)
        if falses == count:
            continue
        errors = falses + results.count(True) + results.count(None) < count
        found.append(Fired(i, results, errors))
    return found


def _tested(
    leaf: tuple[str, FieldKind, str, Test],
    columns: dict[str, _Column],
    memories: Sequence[Mapping[str, object]],
) -> list[Result] | None:
    """The leaf's results over its column, or None when some value needs the full check."""
    key, kind, op, test = leaf
    column = columns.get(key)
    if column is None:
        column = columns[key] = _column(memories, key)
    values = column[0]
    if op in ("exists", "missing"):
        present = op == "exists"
        return [(value is not None) is present for value in values]
    classes = set(map(type, values))
    classes.discard(type(None))
    if not classes <= _VALID[kind]:
        return None
    if kind == "number" and float in classes:
        # NaN is the one float that is invalid (and the one value unequal to itself).
        if any(value != value for value in values):  # noqa: PLR0124
            return None
    elif kind == "str_list" and not all(
        item.__class__ is str
        for value in values
        if value is not None
        for item in value  # type: ignore[attr-defined]
    ):
        return None
    try:
        if None in values:
            return [None if value is None else test(value) for value in values]
        return list(map(test, values))
    except _COMPARISON_ERRORS:
        return None  # e.g. a lone surrogate given to RE2: the guarded path records the error


def _column(memories: Sequence[Mapping[str, object]], key: str) -> _Column:
    values = [memory.get(key) for memory in memories]
    if not set(map(type, values)) <= _PLAIN:
        return values, None
    representatives = dict(zip(values, memories, strict=True))  # any memory with the value
    return values, representatives if len(representatives) * 2 <= len(values) else None


def _guarded(fn: MemFn, memory: Mapping[str, object]) -> Result:
    # Kinds are checked before any test, so this is only reached by inputs such as datetime
    # subclasses with odd comparisons; the rule then fails like any other condition error.
    try:
        return fn(memory)
    except _COMPARISON_ERRORS as exc:
        return ConditionError("E002", f"comparison failed ({type(exc).__name__})")
