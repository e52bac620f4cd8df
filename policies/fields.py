"""The fields a condition may test, their kinds, and how a raw input value is checked.

Inputs are plain mappings (the gateway builds them from its records). A value that is absent or
None is *missing*; a value of the wrong kind is *invalid*, and a condition touching it fails
with a `ConditionError`, which the evaluator turns into the bundle's `on_error` outcome.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Final, Literal

__all__ = [
    "CHECKERS",
    "FIELDS",
    "INVALID",
    "ConditionError",
    "FieldKind",
    "FieldSpec",
    "check_value",
]

FieldKind = Literal["str", "int", "number", "datetime", "str_list"]
Scope = Literal["memory", "request", "now"]


@dataclass(frozen=True, slots=True)
class FieldSpec:
    name: str
    scope: Scope
    key: str
    kind: FieldKind
    # Sensitive fields never appear verbatim in decision evidence (they may hold the very PII
    # a redact rule removes); evidence shows their length instead.
    sensitive: bool = False


def _spec(name: str, kind: FieldKind, *, sensitive: bool = False) -> FieldSpec:
    scope, _, key = name.partition(".")
    if scope == "now":
        return FieldSpec(name, "now", "now", kind)
    if scope in _ITEM_SCOPES:
        # Read from the judged item, as memory fields are: a session context judges its turns
        # and summary beside its memories, each item carrying its session's fields.
        return FieldSpec(name, "memory", f"{scope}_{key}", kind, sensitive)
    return FieldSpec(name, "memory" if scope == "memory" else "request", key, kind, sensitive)


# Fields of the judged item besides `memory.*` (ARCHITECTURE §11): `turn.*` is set on a session
# turn (missing on memories and summaries), `session.*` on everything a session context judges.
_ITEM_SCOPES = frozenset({"turn", "session"})


FIELDS: Final[Mapping[str, FieldSpec]] = {
    spec.name: spec
    for spec in (
        _spec("memory.memory_id", "str"),
        _spec("memory.namespace", "str"),
        _spec("memory.memory_type", "str"),
        _spec("memory.heading", "str", sensitive=True),
        _spec("memory.content", "str", sensitive=True),
        _spec("memory.confidence", "number"),
        _spec("memory.labels", "str_list"),
        _spec("memory.source_type", "str"),
        _spec("memory.source_ref", "str"),
        _spec("memory.created_at", "datetime"),
        _spec("memory.expires_at", "datetime"),
        _spec("memory.tokens", "int"),
        _spec("turn.role", "str"),
        _spec("turn.name", "str"),
        _spec("turn.seq", "int"),
        _spec("turn.content", "str", sensitive=True),
        _spec("turn.occurred_at", "datetime"),
        _spec("session.session_id", "str"),
        _spec("session.namespace", "str"),
        _spec("session.labels", "str_list"),
        _spec("request.tenant", "str"),
        _spec("request.agent_id", "str"),
        _spec("request.role", "str"),
        _spec("request.purpose", "str"),
        _spec("request.namespaces", "str_list"),
        _spec("request.budget_tokens", "int"),
        _spec("now", "datetime"),
    )
}


class ConditionError(Exception):
    """A condition could not be evaluated on this input (wrong kind of value)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class _Invalid:
    """Marks an input value of the wrong kind; the leaf that reads it fails."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "INVALID"


INVALID: Final = _Invalid()


def _check_str(value: object) -> object:
    if value is None or value.__class__ is str or isinstance(value, str):
        return value
    return INVALID


def _check_int(value: object) -> object:
    if value is None or value.__class__ is int:
        return value
    return value if isinstance(value, int) and not isinstance(value, bool) else INVALID


def _check_number(value: object) -> object:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return INVALID
    return INVALID if isinstance(value, float) and math.isnan(value) else value


def _check_datetime(value: object) -> object:
    if value is None:
        return None
    if isinstance(value, datetime) and value.utcoffset() is not None:
        return value
    return INVALID


def _check_str_list(value: object) -> object:
    if value is None:
        return None
    if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        return value
    return INVALID


CHECKERS: Final[Mapping[FieldKind, Callable[[object], object]]] = {
    "str": _check_str,
    "int": _check_int,
    "number": _check_number,
    "datetime": _check_datetime,
    "str_list": _check_str_list,
}


def check_value(kind: FieldKind, value: object) -> object:
    """The value itself when it is of `kind`, None when missing, INVALID otherwise."""
    return CHECKERS[kind](value)
