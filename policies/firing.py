"""Which rules fire on which memories: the hot loop of an evaluation.

Conditions are bound to the request beforehand (request leaves folded into constants), so each
memory-stage rule is a function of a memory. Ways to apply it, fastest first:

- Most rules read one low-cardinality field (namespace, memory_type, source_type): the function
  runs once per distinct value (on a memory holding just that value), and the rule's results
  are given per value (`Fired.by_value`), never expanded per memory. That is exact, because a
  bound condition reads nothing but the fields it names, and it is only done for values of
  exactly `str` (or None), whose equality is plain and never crosses classes (1, 1.0 and True
  are equal, and must not share a result).
- A single leaf over a column whose values are all of a valid kind already (floats that are not
  NaN, strings, lists of strings) skips the per-memory kind check: its test runs over the
  column in C where it can (`LeafColumn.mapped`), else is mapped directly. A regex first runs
  once over the whole column joined by newlines: most find nothing at all.
- `all` or `any` over several fields first applies one of its parts that can be applied that
  way; where that part decides the whole (a false part of an `all`), the rest is never called.
- Anything else calls the function per memory, in one comprehension.

Each field's column (its values, read in C from plain dicts; their classes; whether they are
valid for a kind) is built once per evaluation and shared by the rules that read it. Only the
rules that fire or fail on some memory are returned; stages.py groups memories by their results.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from itertools import chain, compress, repeat
from operator import is_not, itemgetter
from typing import NamedTuple

from policies.conditions import Bound, LeafColumn, MemFn, Result
from policies.fields import ConditionError, FieldKind
from policies.plan import Plan

__all__ = ["Columns", "Fired", "fire_rules", "values_of"]

_NONE = type(None)
_PLAIN = frozenset({str, _NONE})
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
_IS_SET = partial(is_not, None)
_PLAIN_RESULTS = frozenset({True, False, None})
_SAMPLE = 32


class Fired(NamedTuple):
    """A slot's results, one per memory: True, False, None (unknown) or a ConditionError.

    When the slot reads one field of few distinct values, they are given as that field's
    `values` and the result per value (`by_value`), and `results` is None: slots that read
    the same field share the one list of values.
    """

    slot: int
    results: list[Result] | None
    errors: bool  # whether any result is a ConditionError
    values: list[object] | None = None
    by_value: dict[object, Result] | None = None


class _Column:
    """One field's values across the memories, and what is known about them."""

    __slots__ = ("classes", "distinct", "key", "valid", "values")

    def __init__(self, memories: Sequence[Mapping[str, object]], key: str, dicts: bool) -> None:
        self.key = key
        self.values = values_of(memories, key, dicts=dicts)
        self.classes = set(map(type, self.values))
        # The distinct values, when plain and few enough to be worth a call each.
        self.distinct: list[object] | None = None
        # (A first look at a few values spares hashing them all when most are distinct, as
        # headings are.)
        if self.classes <= _PLAIN and len(set(self.values[:_SAMPLE])) * 2 <= _SAMPLE:
            distinct = list(dict.fromkeys(self.values))
            if len(distinct) * 2 <= len(self.values):
                self.distinct = distinct
        self.valid: dict[FieldKind, bool] = {}

    def present(self) -> list[object]:
        """The values that are not missing."""
        values = self.values
        return list(filter(_IS_SET, values)) if _NONE in self.classes else values

    def valid_for(self, kind: FieldKind) -> bool:
        """Whether every value is missing or valid for `kind` as it is (no check needed)."""
        found = self.valid.get(kind)
        if found is None:
            found = self.valid[kind] = self._valid_for(kind)
        return found

    def _valid_for(self, kind: FieldKind) -> bool:
        classes = self.classes - {_NONE}
        if not classes <= _VALID[kind]:
            return False
        if kind == "number" and float in classes:
            # NaN is the one invalid float; isnan may overflow on a huge int (then check each).
            try:
                return not any(map(math.isnan, self.present()))  # type: ignore[arg-type]
            except OverflowError:
                return False
        if kind == "str_list":
            items = set(map(type, chain.from_iterable(self.present())))  # type: ignore[arg-type]
            return items <= {str}
        return True


_ColumnOf = Callable[[str], _Column]


class Columns:
    """The columns of one evaluation's memories, each built once, on first use (by the rules
    that read it, and by the evidence of their decisions: explain.py)."""

    __slots__ = ("_built", "dicts", "memories")

    def __init__(self, memories: Sequence[Mapping[str, object]], *, dicts: bool) -> None:
        self.memories = memories
        self.dicts = dicts
        self._built: dict[str, _Column] = {}

    def __call__(self, key: str) -> _Column:
        known = self._built.get(key)
        if known is None:
            known = self._built[key] = _Column(self.memories, key, self.dicts)
        return known


def values_of(memories: Sequence[Mapping[str, object]], key: str, *, dicts: bool) -> list[object]:
    """`memory.get(key)` for each memory; `dicts` says they are all plain dicts (as the gateway
    passes them), whose items are then read in C, falling back when a key is missing."""
    if dicts:
        try:
            return list(map(itemgetter(key), memories))
        except KeyError:
            pass
    return [memory.get(key) for memory in memories]


def fire_rules(plan: Plan, column: Columns) -> list[Fired]:
    """The slots that fire or fail on some memory (those of `column`), with their results, in
    rule order."""
    memories = column.memories
    count = len(memories)
    found: list[Fired] = []
    for i, slot in enumerate(plan.slots):
        bound = slot.bound
        if bound is None or bound.fn is None:
            if slot.const is not False:
                errors = isinstance(slot.const, ConditionError)
                found.append(Fired(i, [slot.const] * count, errors))
            continue
        memo = _per_value(bound, slot.keys, column)
        if memo is not None:
            values, by_value = memo
            if any(result is not False for result in by_value.values()):
                errors = any(isinstance(result, ConditionError) for result in by_value.values())
                found.append(Fired(i, None, errors, values, by_value))
            continue  # else the common case for most rules: nothing to note
        results = None if bound.column is None else _tested(bound.column, column)
        errors = False  # tests of values of a valid kind give True or False
        if results is None:
            if bound.decisive is not None:
                results = _screened(bound, column, memories)
            if results is None:
                results = _each(bound.fn, memories)
            errors = not all(map(_PLAIN_RESULTS.__contains__, results))
        if results.count(False) != count:
            found.append(Fired(i, results, errors))
    return found


def _per_value(
    bound: Bound, keys: tuple[str, ...], column: _ColumnOf
) -> tuple[list[object], dict[object, Result]] | None:
    """The values of the one field `bound` reads and its result per distinct value, when there
    are few and plain ones; else None."""
    if len(keys) != 1:
        return None
    values = column(keys[0])
    if values.distinct is None:
        return None
    fn = bound.fn
    assert fn is not None
    key = values.key
    return values.values, {value: _guarded(fn, {key: value}) for value in values.distinct}


def _at_once(bound: Bound, column: _ColumnOf) -> list[Result] | None:
    """A memory leaf's results without a call per memory (per distinct value, or a column
    test), or None when neither applies."""
    leaf = bound.column
    assert leaf is not None
    memo = _per_value(bound, (leaf.key,), column)
    if memo is not None:
        values, by_value = memo
        return list(map(by_value.__getitem__, values))
    return _tested(leaf, column)


def _tested(leaf: LeafColumn, column_of: _ColumnOf) -> list[Result] | None:
    """The leaf's results over its column, or None when some value needs the full check."""
    column = column_of(leaf.key)
    values = column.values
    if leaf.op in ("exists", "missing"):
        present = leaf.op == "exists"
        return [(value is not None) is present for value in values]
    if not column.valid_for(leaf.kind):
        return None
    has_none = _NONE in column.classes
    try:
        if leaf.joined is not None:
            items = column.present()
            if leaf.kind == "str_list":
                items = list(chain.from_iterable(items))  # type: ignore[arg-type]
            if not leaf.joined(b"\n".join(map(str.encode, items))):  # type: ignore[arg-type]
                # No value matches: unknown where missing, False elsewhere.
                return (
                    [None if value is None else False for value in values]
                    if has_none
                    else [False] * len(values)
                )
        test = leaf.test
        if has_none:
            return [None if value is None else test(value) for value in values]
        if leaf.mapped is not None:
            return leaf.mapped(values)  # type: ignore[return-value]  # bools are results
        return list(map(test, values))
    except _COMPARISON_ERRORS:
        return None  # e.g. a lone surrogate given to RE2: the guarded path records the error


def _screened(
    bound: Bound, column: _ColumnOf, memories: Sequence[Mapping[str, object]]
) -> list[Result] | None:
    """`all`/`any` results: one part applied at once, the whole called only where that part
    does not decide it. (A false part makes an `all` false, whatever the other parts give.)"""
    decisive = bound.decisive
    fn = bound.fn
    assert fn is not None
    for child in bound.children:
        if child.fn is None or child.column is None:
            continue
        screen = _at_once(child, column)
        if screen is None:
            continue
        results: list[Result] = [decisive] * len(memories)
        for m in compress(range(len(memories)), map(is_not, screen, repeat(decisive))):
            results[m] = _guarded(fn, memories[m])
        return results
    return None


def _each(fn: MemFn, memories: Sequence[Mapping[str, object]]) -> list[Result]:
    try:
        return [fn(memory) for memory in memories]
    except _COMPARISON_ERRORS:
        return [_guarded(fn, memory) for memory in memories]


def _guarded(fn: MemFn, memory: Mapping[str, object]) -> Result:
    # Kinds are checked before any test, so this is only reached by inputs such as datetime
    # subclasses with odd comparisons; the rule then fails like any other condition error.
    try:
        return fn(memory)
    except _COMPARISON_ERRORS as exc:
        return ConditionError("E002", f"comparison failed ({type(exc).__name__})")
