"""Rendering values for decisions and canonical forms: JSON-safe, bounded, and free of floats.

Decisions end up inside RFC 8785 receipt bodies, which carry integers only. So a float or a
Decimal becomes its shortest decimal string ("0.9"), a datetime an RFC 3339 UTC string with `Z`,
a duration its compact form ("30d"). Strings and lists in evidence are cut to a bound, with a
marker saying how much was cut, so one huge value cannot bloat a receipt.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import TypeAlias

__all__ = [
    "MAX_EVIDENCE_ITEMS",
    "MAX_EVIDENCE_STRING",
    "JsonValue",
    "format_datetime",
    "format_decimal",
    "format_duration",
    "render",
]

JsonValue: TypeAlias = bool | int | str | list["JsonValue"] | dict[str, "JsonValue"] | None

MAX_EVIDENCE_STRING = 200
MAX_EVIDENCE_ITEMS = 32
# RFC 8785 §3.2.2.3: integers beyond ±(2**53 - 1) do not survive I-JSON; render them as text.
_SAFE_INT = 2**53 - 1

_ZERO = timedelta(0)
_UNITS = (("w", 604_800), ("d", 86_400), ("h", 3_600), ("m", 60), ("s", 1))


def format_datetime(value: datetime) -> str:
    """RFC 3339 in UTC with a `Z`; fractional seconds only when present, without trailing 0s."""
    if value.utcoffset() != _ZERO:
        value = value.astimezone(UTC)
    text = value.replace(tzinfo=None).isoformat()
    return (text.rstrip("0") if value.microsecond else text) + "Z"


def format_decimal(value: Decimal | float) -> str:
    """Shortest plain decimal text: 0.9 → "0.9", 1.0 → "1", 1e-05 → "0.00001"."""
    if isinstance(value, float):
        text = repr(value)  # the shortest string that round-trips (Python ≥ 3.1)
        if text.isdigit() or ("." in text and "e" not in text):
            return text.removesuffix(".0") if text != "-0.0" else "0"
    number = value if isinstance(value, Decimal) else Decimal(repr(value))
    if not number.is_finite():
        return str(number).lower()
    text = format(number.normalize(), "f")
    return "0" if text in ("-0", "0") else text


def format_duration(value: timedelta) -> str:
    """The largest whole unit: 86400 s → "1d", 90 min → "90m". Weeks are written in days."""
    seconds = int(value.total_seconds())
    for unit, size in _UNITS[1:]:
        if seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"  # pragma: no cover - the last unit always divides


def render(value: object) -> JsonValue:  # noqa: C901  one branch per value type, most frequent first (hot path)
    """A JSON-safe form of `value`, with long strings and lists cut (and the cut said)."""
    if value.__class__ is float:  # the most frequent in evidence, tried before the chain below
        return format_decimal(value)
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        if len(value) <= MAX_EVIDENCE_STRING:
            return value
        return f"{value[:MAX_EVIDENCE_STRING]}…(+{len(value) - MAX_EVIDENCE_STRING} chars)"
    if isinstance(value, int):
        return value if -_SAFE_INT <= value <= _SAFE_INT else str(value)
    if isinstance(value, float | Decimal):
        return format_decimal(value)
    if isinstance(value, datetime):
        return format_datetime(value)
    if isinstance(value, timedelta):
        return format_duration(value)
    if isinstance(value, list | tuple | frozenset | set):
        items = sorted(value, key=repr) if isinstance(value, frozenset | set) else list(value)
        rendered = [render(item) for item in items[:MAX_EVIDENCE_ITEMS]]
        if len(items) > MAX_EVIDENCE_ITEMS:
            rendered.append(f"…(+{len(items) - MAX_EVIDENCE_ITEMS} items)")
        return rendered
    if isinstance(value, Mapping):
        return {str(k): render(v) for k, v in sorted(value.items(), key=_key)}
    return render(repr(value))


def _key(item: tuple[object, object]) -> str:
    return str(item[0])
