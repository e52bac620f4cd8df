"""The closed set of condition operators: which field kinds each accepts, and its test.

A test is built once from the operator's expected value (sets are frozen, patterns compiled,
thresholds converted) and then called on each already type-checked actual value. Regular
expressions and globs run on RE2, whose matching time is linear in the input, so no pattern an
author writes can make evaluation backtrack (`(a+)+$` is harmless here).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from functools import partial
from itertools import repeat
from typing import Any, Final, Literal

from policies.fields import CHECKERS, INVALID, ConditionError, FieldKind, FieldSpec
from policies.regex_engine import ENGINE

__all__ = [
    "MAX_PATTERN_LENGTH",
    "OPERATORS",
    "Operator",
    "PatternError",
    "Test",
    "ValueShape",
    "compile_pattern",
    "joined_test",
    "make_test",
    "mapped_test",
    "memory_leaf",
]

# Bound on regex and glob length: RE2 is linear in the input but its automaton grows with the
# pattern, and nobody needs a 10 kB expression in a policy.
MAX_PATTERN_LENGTH = 256

ValueShape = Literal["none", "scalar", "list", "duration", "pattern"]
Test = Callable[[Any], bool]

_ORDERED: frozenset[FieldKind] = frozenset({"int", "number", "datetime"})
_SCALAR: frozenset[FieldKind] = frozenset({"str", "int", "number", "datetime"})
_TEXT: frozenset[FieldKind] = frozenset({"str", "str_list"})
_ANY: frozenset[FieldKind] = frozenset({"str", "int", "number", "datetime", "str_list"})


@dataclass(frozen=True, slots=True)
class Operator:
    name: str
    shape: ValueShape
    kinds: frozenset[FieldKind]


OPERATORS: Final[Mapping[str, Operator]] = {
    op.name: op
    for op in (
        Operator("eq", "scalar", _SCALAR),
        Operator("ne", "scalar", _SCALAR),
        Operator("in", "list", _SCALAR),
        Operator("not_in", "list", _SCALAR),
        Operator("contains", "scalar", _TEXT),
        Operator("contains_any", "list", _TEXT),
        Operator("contains_all", "list", _TEXT),
        Operator("gt", "scalar", _ORDERED),
        Operator("gte", "scalar", _ORDERED),
        Operator("lt", "scalar", _ORDERED),
        Operator("lte", "scalar", _ORDERED),
        Operator("exists", "none", _ANY),
        Operator("missing", "none", _ANY),
        Operator("glob", "pattern", _TEXT),
        Operator("regex", "pattern", _TEXT),
        Operator("older_than", "duration", frozenset({"datetime"})),
        Operator("newer_than", "duration", frozenset({"datetime"})),
    )
}


class PatternError(ValueError):
    """A regex or glob that RE2 cannot compile, or one over `MAX_PATTERN_LENGTH`."""


def compile_pattern(op: str, pattern: str) -> Any:
    """The compiled RE2 object for a `regex` or `glob` pattern; raises PatternError."""
    if len(pattern) > MAX_PATTERN_LENGTH:
        raise PatternError(f"pattern is longer than {MAX_PATTERN_LENGTH} characters")
    source = pattern if op == "regex" else _glob_to_regex(pattern)
    try:
        return ENGINE.compile(source)
    except ENGINE.error as exc:
        reason = exc.args[0] if exc.args else exc
        text = reason.decode("utf-8", "replace") if isinstance(reason, bytes) else str(reason)
        raise PatternError(f"RE2 cannot compile it: {text}") from None


def _glob_to_regex(pattern: str) -> str:
    # `*` any run, `?` one character, everything else literal; the whole value must match.
    parts = []
    for char in pattern:
        if char == "*":
            parts.append(".*")
        elif char == "?":
            parts.append(".")
        else:
            parts.append(ENGINE.escape(char))
    return "(?s)" + "".join(parts)


def _numeric(kind: FieldKind, expected: object) -> object:
    # Thresholds are stored as Decimal; compare floats with floats, or 0.9 > Decimal("0.9").
    return float(expected) if kind == "number" and isinstance(expected, Decimal) else expected


def _matcher(op: str, pattern: str) -> Callable[[str], bool]:
    """A boolean RE2 matcher. Globs without `?` use plain string tests, which are faster."""
    compile_pattern(op, pattern)  # validates, with RE2's message on failure
    if op == "glob" and "?" not in pattern:
        inner = pattern.strip("*")
        if "*" not in inner:
            starts, ends = pattern.startswith("*"), pattern.endswith("*")
            if starts and ends:
                return lambda v: inner in v
            if ends:
                return lambda v: v.startswith(inner)
            if starts:
                return lambda v: v.endswith(inner)
            return lambda v: v == inner
    match_bytes = _bytes_matcher(op, pattern)
    return lambda v: match_bytes(v.encode())


def _bytes_matcher(op: str, pattern: str) -> Callable[[bytes], bool]:
    """Whether UTF-8 `bytes` match a regex (anywhere) or a glob (whole)."""
    # A one-pattern RE2::Set: called per memory and rule, so the engine's fast path counts.
    if op == "regex":
        match = ENGINE.set_matcher([pattern], "search")
    else:
        match = ENGINE.set_matcher([_glob_to_regex(pattern)], "whole")
    return lambda data: bool(match(data))


def make_test(op: str, kind: FieldKind, expected: object, now: datetime | None = None) -> Test:  # noqa: C901  one branch per operator of the closed set
    """The test for one leaf, given a present, type-checked value. `now` serves older_than and
    newer_than only. Comparisons are C-level partials: this is the innermost loop."""
    value: Any = _numeric(kind, expected)
    if op in ("in", "not_in", "contains_any", "contains_all"):
        assert isinstance(expected, tuple)
        value = frozenset(_numeric(kind, item) for item in expected)
    is_list = kind == "str_list"
    if op in ("exists", "missing"):
        present = op == "exists"  # the leaf tests presence itself; this serves direct callers
        return lambda v: (v is not None) is present
    if op in _COMPARISONS:
        return partial(_COMPARISONS[op], value)
    if op == "in":
        return value.__contains__  # type: ignore[no-any-return]
    if op == "not_in":
        return lambda v: v not in value
    if op == "contains":
        return lambda v: value in v
    if op == "contains_any":
        if is_list:
            return lambda v: not value.isdisjoint(v)
        return lambda v: any(item in v for item in value)
    if op == "contains_all":
        if is_list:
            return value.issubset  # type: ignore[no-any-return]
        return lambda v: all(item in v for item in value)
    if op in ("regex", "glob"):
        match = _matcher(op, str(expected))
        if is_list:
            return lambda v: any(match(item) for item in v)
        return match
    if op in ("older_than", "newer_than"):
        if now is None or not isinstance(expected, timedelta):
            raise ValueError(f"{op} needs a duration and the current time")
        threshold = now - expected
        return partial(operator.gt if op == "older_than" else operator.lt, threshold)
    raise ValueError(f"unknown operator {op!r}")


def mapped_test(
    op: str, kind: FieldKind, expected: object
) -> Callable[[list[Any]], list[bool]] | None:
    """The test over a whole list of present, valid values, in C, for the operators whose test
    is a Python function but has a C form over many values; None for the others (whose test is
    mapped as it is)."""
    if op == "contains":
        return lambda values: list(map(operator.contains, values, repeat(expected)))
    if op == "not_in":
        assert isinstance(expected, tuple)
        members = frozenset(_numeric(kind, item) for item in expected)
        return lambda values: list(map(operator.not_, map(members.__contains__, values)))
    if op == "contains_any" and kind == "str_list":
        assert isinstance(expected, tuple)
        wanted = frozenset(expected)
        return lambda values: list(map(operator.not_, map(wanted.isdisjoint, values)))
    return None


def joined_test(op: str, expected: object) -> Callable[[bytes], bool] | None:
    """For a regex: a test of many values, UTF-8 encoded and joined by newlines, that is False
    only when the leaf's test is False for each of them, so that one RE2 pass can clear a whole
    column. None for other operators. (Joined as bytes: encoding each value and joining costs a
    third of joining into one str, which any non-ASCII value widens, and encoding that.)

    A match within a value is one within the joined text too: the newlines around a value
    stand where the ends of the text were, and RE2's word-boundary assertions (`\\b`, `\\B`,
    ASCII only) treat a newline like an end. Anchors (`^`, `$`, `\\A`, `\\z`) would not, so a
    pattern with any of those characters gets no joined test.
    """
    if op != "regex" or not isinstance(expected, str):
        return None
    if any(anchor in expected for anchor in ("^", "$", "\\A", "\\z")):
        return None
    # One search over a long text: RE2's own search, which skips ahead to where a match can
    # start (a literal prefix, even case-folded), beats the set's DFA that reads every byte
    # (400 KB of contents: 0.16-0.30 ms against 0.51 for a literal-led pattern, never slower).
    search = compile_pattern(op, expected).search
    return lambda data: search(data) is not None


# `partial(f, expected)(actual)` is `f(expected, actual)`, so each entry is the mirror image:
# "actual > expected" is "expected < actual".
_COMPARISONS: Final[dict[str, Callable[[Any, Any], bool]]] = {
    "eq": operator.eq,
    "ne": operator.ne,
    "gt": operator.lt,
    "gte": operator.le,
    "lt": operator.gt,
    "lte": operator.ge,
}


def memory_leaf(
    op: str, spec: FieldSpec, test: Test
) -> Callable[[Mapping[str, object]], bool | ConditionError | None]:
    """The per-memory function of one leaf: True, False, None (missing) or a ConditionError.

    It reads the raw memory and checks the value's kind inline, with a fast path for the
    exact classes the gateway passes; errors are returned, not raised, so that evaluation can
    map leaves over many memories in a comprehension.
    """
    key = spec.key
    if op == "exists":
        return lambda memory: memory.get(key) is not None
    if op == "missing":
        return lambda memory: memory.get(key) is None
    error = ConditionError("E001", f"{spec.name} has a value of the wrong type")
    check = CHECKERS[spec.kind]
    # Fast path for the exact class the gateway passes; floats must also not be NaN.
    exact: type = {"str": str, "int": int, "number": float}.get(spec.kind, NotImplemented)

    def leaf(memory: Mapping[str, object]) -> bool | ConditionError | None:
        value = memory.get(key)
        if value.__class__ is exact and (exact is not float or not math.isnan(value)):  # type: ignore[arg-type]
            return test(value)
        if value is None:
            return None
        checked = check(value)
        return error if checked is INVALID else test(checked)

    return leaf
