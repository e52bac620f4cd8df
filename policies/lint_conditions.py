"""Reading `when:` conditions: fields, operators, typed values, combinators, and their limits.

Values are typed by the field they are compared with, not by how YAML happened to read them:
`memory.confidence` takes a number (also written as a decimal string, which is how the canonical
form stores it, since canonical JSON carries no floats); `memory.created_at` takes an RFC 3339
timestamp with an offset; durations are `<n><unit>` with unit s, m, h, d or w.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from decimal import Decimal

from policies.conditions import AllOf, AnyOf, Condition, ConditionValue, FieldCondition, Not
from policies.fields import FIELDS, FieldKind, FieldSpec
from policies.loader import MapNode, Node, ScalarNode
from policies.operators import (
    MAX_PATTERN_LENGTH,
    OPERATORS,
    Operator,
    PatternError,
    compile_pattern,
)
from policies.schema import Checker, describe, did_you_mean

__all__ = [
    "MAX_CONDITION_DEPTH",
    "MAX_CONDITION_NODES",
    "MAX_LIST_VALUES",
    "parse_condition",
    "parse_duration",
    "parse_timestamp",
]

MAX_CONDITION_DEPTH = 8
MAX_CONDITION_NODES = 64
MAX_LIST_VALUES = 256
_MAX_SAFE_INT = 2**53 - 1  # RFC 8785 §3.2.2.3: larger integers are not interoperable

_DURATION = re.compile(r"([1-9][0-9]{0,5})([smhdw])")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800}
_KIND_NAMES = {
    "str": "a string",
    "int": "an integer",
    "number": "a number",
    "datetime": "a timestamp",
    "str_list": "a list of strings",
}
_CONDITION_KEYS = ("field", "op", "value", "all", "any", "not")


def _sort_key(value: str | int | Decimal | datetime) -> tuple[str, object]:
    # One field kind per list, so values compare among themselves; the name keeps mypy honest.
    return type(value).__name__, value


def parse_duration(text: str) -> timedelta | None:
    match = _DURATION.fullmatch(text)
    if match is None:
        return None
    return timedelta(seconds=int(match.group(1)) * _UNIT_SECONDS[match.group(2)])


def parse_timestamp(text: str) -> datetime | None:
    """RFC 3339 with an explicit offset (`Z` or ±hh:mm), as UTC; None otherwise."""
    candidate = text.strip()
    if len(candidate) < 20 or candidate[10] not in "Tt ":
        return None
    candidate = candidate[:10] + "T" + candidate[11:]
    if candidate[-1] in "zZ":
        candidate = candidate[:-1] + "+00:00"
    try:
        parsed = datetime.fromisoformat(candidate)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        return None
    return parsed.astimezone(UTC)


class ConditionReader:
    """Parses one rule's condition; counts nodes so a huge condition is reported once."""

    def __init__(self, checker: Checker, *, request_only: bool) -> None:
        self.checker = checker
        self.request_only = request_only
        self.count = 0
        self.too_large = False

    def read(self, node: Node, path: str, depth: int = 1) -> Condition | None:
        self.count += 1
        if self.count > MAX_CONDITION_NODES:
            if not self.too_large:
                self.too_large = True
                self.checker.error(
                    node, "P049", f"{path}: condition has more than {MAX_CONDITION_NODES} parts"
                )
            return None
        if depth > MAX_CONDITION_DEPTH:
            self.checker.error(
                node, "P048", f"{path}: conditions nest deeper than {MAX_CONDITION_DEPTH} levels"
            )
            return None
        mapping = self.checker.mapping(node, path, _CONDITION_KEYS)
        if mapping is None:
            return None
        forms = [key for key in ("field", "all", "any", "not") if mapping.get(key) is not None]
        if len(forms) != 1:
            found = ", ".join(forms) or "none"
            self.checker.error(
                mapping, "P050", f"{path} needs exactly one of field, all, any, not (found {found})"
            )
            return None
        form = forms[0]
        if form != "field":
            for key in ("op", "value"):
                if mapping.get(key) is not None:
                    self.checker.error(mapping, "P050", f"{path}: '{key}' belongs to a field test")
            return self._combinator(mapping, form, path, depth)
        return self._leaf(mapping, path)

    def _combinator(self, mapping: MapNode, form: str, path: str, depth: int) -> Condition | None:
        body = mapping.get(form)
        assert body is not None
        if form == "not":
            inner = self.read(body, f"{path}.not", depth + 1)
            return None if inner is None else Not(inner)
        items = self.checker.sequence(body, f"{path}.{form}", min_items=1)
        if items is None:
            return None
        children = [
            self.read(item, f"{path}.{form}[{index}]", depth + 1)
            for index, item in enumerate(items.items)
        ]
        if any(child is None for child in children):
            return None
        parts = tuple(child for child in children if child is not None)
        return AllOf(parts) if form == "all" else AnyOf(parts)

    def _leaf(self, mapping: MapNode, path: str) -> Condition | None:
        field_node, op_node = mapping.get("field"), mapping.get("op")
        assert field_node is not None
        name = self.checker.string(field_node, f"{path}.field")
        if op_node is None:
            self.checker.error(mapping, "P021", f"{path} is missing required key 'op'")
            return None
        op_name = self.checker.string(op_node, f"{path}.op")
        if name is None or op_name is None:
            return None
        spec = FIELDS.get(name)
        if spec is None:
            hint = did_you_mean(name, list(FIELDS))
            self.checker.error(field_node, "P040", f"unknown field '{name}'{hint}")
            return None
        if self.request_only and spec.scope == "memory":
            self.checker.error(
                field_node, "P051", f"request-stage rules see no memory; '{name}' is not available"
            )
            return None
        op = OPERATORS.get(op_name)
        if op is None:
            hint = did_you_mean(op_name, list(OPERATORS))
            self.checker.error(op_node, "P041", f"unknown operator '{op_name}'{hint}")
            return None
        if spec.kind not in op.kinds or (op.shape == "duration" and spec.scope == "now"):
            self.checker.error(
                op_node,
                "P042",
                f"operator '{op.name}' does not apply to {name} ({_KIND_NAMES[spec.kind]})",
            )
            return None
        value_node = mapping.get("value")
        if op.shape == "none":
            if value_node is not None:
                self.checker.error(value_node, "P043", f"operator '{op.name}' takes no value")
                return None
            return FieldCondition(name, op.name)
        if value_node is None:
            self.checker.error(mapping, "P021", f"operator '{op.name}' needs a value")
            return None
        value = self._value(value_node, op, spec, f"{path}.value")
        return None if value is None else FieldCondition(name, op.name, value)

    def _value(self, node: Node, op: Operator, spec: FieldSpec, path: str) -> ConditionValue:
        kind: FieldKind = "str" if spec.kind == "str_list" else spec.kind
        if op.shape == "duration":
            text = self.checker.string(node, path)
            duration = None if text is None else parse_duration(text)
            if text is not None and duration is None:
                self.checker.error(
                    node, "P046", f"{path}: '{text}' is not a duration such as 30d, 12h, 90m"
                )
            return duration
        if op.shape == "pattern":
            text = self.checker.string(node, path, max_len=100_000)
            if text is None:
                return None
            try:
                compile_pattern(op.name, text)
            except PatternError as exc:
                code = "P045" if len(text) > MAX_PATTERN_LENGTH else "P044"
                self.checker.error(node, code, f"{path}: {exc}")
                return None
            return text
        if op.shape == "scalar":
            return self._scalar(node, kind, path)
        items = self.checker.sequence(node, path, min_items=1)
        if items is None:
            return None
        if len(items.items) > MAX_LIST_VALUES:
            self.checker.error(node, "P024", f"{path} has more than {MAX_LIST_VALUES} values")
            return None
        read = [self._scalar(item, kind, f"{path}[{i}]") for i, item in enumerate(items.items)]
        values = {value for value in read if value is not None}
        if len(values) < len(set(read)):
            return None
        # Set-like operators: order and repetition carry no meaning, so the model keeps them
        # sorted and unique and the digest does not change when an author reorders a list.
        return tuple(sorted(values, key=_sort_key))

    def _scalar(
        self, node: Node, kind: FieldKind, path: str
    ) -> str | int | Decimal | datetime | None:
        if kind == "str":
            return self.checker.string(node, path, max_len=4096)
        if kind == "int":
            return self.checker.integer(node, path, -_MAX_SAFE_INT, _MAX_SAFE_INT)
        if kind == "number":
            return self.checker.decimal(node, path)
        if isinstance(node, ScalarNode) and node.tag in ("timestamp", "str"):
            parsed = parse_timestamp(node.text)
            if parsed is not None:
                return parsed
        self.checker.error(
            node,
            "P047",
            f"{path} must be an RFC 3339 timestamp with an offset "
            f"(e.g. 2026-01-01T00:00:00Z), got {describe(node)}",
        )
        return None


def parse_condition(
    node: Node, path: str, checker: Checker, *, request_only: bool = False
) -> Condition | None:
    return ConditionReader(checker, request_only=request_only).read(node, path)
