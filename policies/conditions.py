"""Conditions: the data model, and its compiled form with three-valued, fail-closed logic.

A leaf on a missing field is *unknown* (None), not false. `all`/`any`/`not` follow Kleene logic
(`not unknown` is unknown), and only the rule decides what unknown means: fail closed, so a deny,
redact or cap rule applies, an allow rule does not, a require rule is not met. An input value of
the wrong kind yields a `ConditionError` (returned as a value, not raised, on the per-memory
path); in `all` a false child still wins over an error (and in `any` a true one), so the result
never depends on the order in which children are tried.

Compilation happens once per bundle. `bind` then fixes the request and `now`: leaves on
`request.*` and `now` become constants and are folded away, so a rule such as "namespace is hr and
role is not privileged" costs one comparison per memory, and nothing at all when the role is
privileged.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any, Literal, NamedTuple, TypeAlias

from policies.fields import FIELDS, INVALID, ConditionError, FieldKind, FieldSpec, check_value
from policies.jsonsafe import JsonValue, render
from policies.operators import Test, joined_test, make_test, mapped_test, memory_leaf

__all__ = [
    "AllOf",
    "AnyOf",
    "Bound",
    "CompiledCondition",
    "Condition",
    "ConditionValue",
    "Evidence",
    "FieldCondition",
    "LeafColumn",
    "Not",
    "Result",
    "Tri",
]

Scalar: TypeAlias = str | int | Decimal | datetime
ConditionValue: TypeAlias = Scalar | timedelta | tuple[Scalar, ...] | None
Tri: TypeAlias = bool | None
Result: TypeAlias = bool | ConditionError | None
MemFn: TypeAlias = Callable[[Mapping[str, object]], Result]


@dataclass(frozen=True, slots=True)
class FieldCondition:
    field: str
    op: str
    value: ConditionValue = None


@dataclass(frozen=True, slots=True)
class AllOf:
    conditions: tuple[Condition, ...]


@dataclass(frozen=True, slots=True)
class AnyOf:
    conditions: tuple[Condition, ...]


@dataclass(frozen=True, slots=True)
class Not:
    condition: Condition


Condition: TypeAlias = FieldCondition | AllOf | AnyOf | Not


class Evidence(NamedTuple):
    """One leaf as evaluated: what was compared with what, and the result."""

    field: str
    op: str
    expected: JsonValue
    actual: JsonValue
    result: Literal["true", "false", "unknown", "error"]

    def to_json(self) -> dict[str, JsonValue]:
        return {
            "actual": self.actual,
            "expected": self.expected,
            "field": self.field,
            "op": self.op,
            "result": self.result,
        }


def _apply(op: str, test: Test, value: object, name: str) -> Tri:
    if op == "exists":
        return value is not None
    if op == "missing":
        return value is None
    if value is None:
        return None
    if value is INVALID:
        raise ConditionError("E001", f"{name} has a value of the wrong type")
    return test(value)


def _verdict(result: Result) -> Literal["true", "false", "unknown", "error"]:
    if isinstance(result, ConditionError):
        return "error"
    return "unknown" if result is None else ("true" if result else "false")


class LeafColumn(NamedTuple):
    """A single memory leaf, for a caller holding the column of that field's values, to test
    it without a call per memory (firing.py)."""

    key: str
    kind: FieldKind
    op: str
    test: Test
    # A test of the column's values, UTF-8 encoded and joined by newlines, False only when
    # `test` is False for each value (operators.joined_test), or None.
    joined: Callable[[bytes], bool] | None
    # `test` over a list of present values in C (operators.mapped_test), or None.
    mapped: Callable[[list[Any]], list[bool]] | None


class Bound:
    """A condition bound to one request and `now`: a constant, or a function of a memory.

    `fn` is None when the request alone decides (then `const` is the result). `fn` never raises
    for bad input: it returns the ConditionError, so callers can map it over many memories.
    `explain` re-evaluates every leaf, without short-circuit, to give a decision's evidence.
    """

    __slots__ = ("children", "column", "const", "decisive", "fn")

    def __init__(self, fn: MemFn | None, const: Result = None) -> None:
        self.fn = fn
        self.const = const
        self.column: LeafColumn | None = None
        # For `all` (False) and `any` (True) over several memory conditions: the result of
        # any one of `children` that decides the whole (firing.py screens with the cheapest).
        self.decisive: bool | None = None
        self.children: list[Bound] = []

    def result(self, memory: Mapping[str, object]) -> Result:
        return self.const if self.fn is None else self.fn(memory)

    def explain(self, memory: Mapping[str, object], out: list[Evidence]) -> None:
        raise NotImplementedError

    def evidence_for(self, memory: Mapping[str, object]) -> tuple[Evidence, ...]:
        """The evidence of every leaf, in order, for one memory."""
        found: list[Evidence] = []
        self.explain(memory, found)
        return tuple(found)


class _BoundLeaf(Bound):
    __slots__ = ("evidence", "leaf")

    def __init__(self, leaf: _Leaf, fn: MemFn | None, const: Result, evidence: Evidence | None):
        super().__init__(fn, const)
        self.leaf = leaf
        self.evidence = evidence

    def explain(self, memory: Mapping[str, object], out: list[Evidence]) -> None:
        out.append(self._evidence(memory))

    def evidence_for(self, memory: Mapping[str, object]) -> tuple[Evidence, ...]:
        return (self._evidence(memory),)  # one leaf: no list to collect into

    def _evidence(self, memory: Mapping[str, object]) -> Evidence:
        if self.evidence is not None:
            return self.evidence
        spec = self.leaf.spec
        value = check_value(spec.kind, memory.get(spec.key))
        assert self.fn is not None  # a memory leaf: request leaves have their evidence already
        try:
            result = self.fn(memory)
        except (TypeError, ValueError, OverflowError, AttributeError) as exc:
            # As when the rule fired (firing._guarded): e.g. a lone surrogate given to a regex.
            result = ConditionError("E002", f"comparison failed ({type(exc).__name__})")
        return self.leaf.evidence(value, result)


class _BoundGroup(Bound):
    __slots__ = ()

    def __init__(self, children: list[Bound], fn: MemFn | None, const: Result) -> None:
        super().__init__(fn, const)
        self.children = children

    def explain(self, memory: Mapping[str, object], out: list[Evidence]) -> None:
        for child in self.children:
            child.explain(memory, out)


class _Leaf:
    __slots__ = (
        "cond",
        "expected_json",
        "joined",
        "mapped",
        "spec",
        "static_bound",
        "static_test",
    )

    def __init__(self, cond: FieldCondition) -> None:
        self.cond = cond
        self.spec: FieldSpec = FIELDS[cond.field]
        self.expected_json = render(cond.value)
        timed = cond.op in ("older_than", "newer_than")
        self.static_test = None if timed else make_test(cond.op, self.spec.kind, cond.value)
        self.joined = joined_test(cond.op, cond.value)
        self.mapped = None if timed else mapped_test(cond.op, self.spec.kind, cond.value)
        # A memory leaf that does not depend on `now` binds the same way for every request.
        self.static_bound: Bound | None = None
        if self.static_test is not None and self.spec.scope == "memory":
            self.static_bound = self._memory_bound(self.static_test)

    def evidence(self, value: object, result: Result) -> Evidence:
        if value is INVALID:
            actual: JsonValue = "<invalid>"
        elif self.spec.sensitive and isinstance(value, str):
            actual = f"<{len(value)} chars>"
        else:
            actual = render(value)
        # tuple.__new__ skips the NamedTuple's Python-level __new__: evidence is made per value.
        return tuple.__new__(
            Evidence,
            (self.cond.field, self.cond.op, self.expected_json, actual, _verdict(result)),
        )

    def bind(self, request: Mapping[str, object], now: datetime) -> Bound:
        if self.static_bound is not None:
            return self.static_bound
        op, spec = self.cond.op, self.spec
        test = self.static_test or make_test(op, spec.kind, self.cond.value, now)
        if spec.scope != "memory":
            value = now if spec.scope == "now" else request.get(spec.key)
            try:
                const: Result = _apply(op, test, value, spec.name)
            except ConditionError as exc:
                const = exc
            except (TypeError, ValueError, OverflowError) as exc:
                const = ConditionError("E002", f"comparison failed ({type(exc).__name__})")
            return _BoundLeaf(self, None, const, self.evidence(value, const))
        return self._memory_bound(test)

    def _memory_bound(self, test: Test) -> Bound:
        op, spec = self.cond.op, self.spec
        bound = _BoundLeaf(self, memory_leaf(op, spec, test), None, None)
        bound.column = LeafColumn(spec.key, spec.kind, op, test, self.joined, self.mapped)
        return bound


def _group_fn(fns: list[MemFn], decisive: bool, base: Result) -> MemFn:
    """`all` (decisive False) or `any` (decisive True) over `fns`, after folded constants."""
    settled = not decisive
    base_unknown = base is None
    base_error = base if isinstance(base, ConditionError) else None

    def group(memory: Mapping[str, object]) -> Result:
        # The verdict of `_Group.combine`, without building a list: this runs per memory.
        unknown, error = base_unknown, base_error
        for fn in fns:
            result = fn(memory)
            if result is decisive:
                return decisive
            if result is None:
                unknown = True
            elif result is not settled and error is None and isinstance(result, ConditionError):
                error = result
        if error is not None:
            return error
        return None if unknown else settled

    return group


class _Group:
    """`all` (decisive=False) or `any` (decisive=True): the decisive value wins outright."""

    __slots__ = ("children", "decisive")

    def __init__(self, children: tuple[_Node, ...], decisive: bool) -> None:
        self.children = children
        self.decisive = decisive

    def combine(self, results: list[Result]) -> Result:
        if self.decisive in results:
            return self.decisive
        errors = [r for r in results if isinstance(r, ConditionError)]
        if errors:
            return errors[0]
        return None if None in results else not self.decisive

    def bind(self, request: Mapping[str, object], now: datetime) -> Bound:
        children = [child.bind(request, now) for child in self.children]
        fns = [child.fn for child in children if child.fn is not None]
        folded = self.combine([child.const for child in children if child.fn is None])
        if not fns or folded is self.decisive:
            return _BoundGroup(children, None, folded)
        if len(fns) == 1 and folded is (not self.decisive):
            bound = _BoundGroup(children, fns[0], None)
            bound.column = next(child.column for child in children if child.fn is not None)
            return bound
        bound = _BoundGroup(children, _group_fn(fns, self.decisive, folded), None)
        bound.decisive = self.decisive
        return bound


class _Not:
    __slots__ = ("child",)

    def __init__(self, child: _Node) -> None:
        self.child = child

    def bind(self, request: Mapping[str, object], now: datetime) -> Bound:
        inner = self.child.bind(request, now)
        fn = inner.fn
        if fn is None:
            const = inner.const
            flipped = const if const is None or isinstance(const, ConditionError) else not const
            return _BoundGroup([inner], None, flipped)
        inner_fn = fn

        def negated(memory: Mapping[str, object]) -> Result:
            result = inner_fn(memory)
            if result is True:
                return False
            return True if result is False else result  # unknown and errors pass through

        return _BoundGroup([inner], negated, None)


_Node: TypeAlias = _Leaf | _Group | _Not


def _compile(cond: Condition) -> _Node:
    if isinstance(cond, FieldCondition):
        return _Leaf(cond)
    if isinstance(cond, AllOf | AnyOf):
        children = tuple(_compile(child) for child in cond.conditions)
        return _Group(children, decisive=isinstance(cond, AnyOf))
    return _Not(_compile(cond.condition))


def _leaves(cond: Condition) -> list[FieldCondition]:
    if isinstance(cond, FieldCondition):
        return [cond]
    if isinstance(cond, Not):
        return _leaves(cond.condition)
    return [leaf for child in cond.conditions for leaf in _leaves(child)]


class CompiledCondition:
    """A condition ready to evaluate: `bind` once per request, then use the Bound per memory."""

    __slots__ = ("_root", "condition", "memory_keys", "sorted_keys")

    def __init__(self, condition: Condition) -> None:
        self.condition = condition
        self._root = _compile(condition)
        specs = (FIELDS[leaf.field] for leaf in _leaves(condition))
        self.memory_keys = frozenset(spec.key for spec in specs if spec.scope == "memory")
        self.sorted_keys = tuple(sorted(self.memory_keys))

    def bind(self, request: Mapping[str, object], now: datetime) -> Bound:
        return self._root.bind(request, now)
