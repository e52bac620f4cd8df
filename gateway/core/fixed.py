"""Fixed-point and decimal forms of numbers, for records that must not carry floats.

Receipts are RFC 8785 canonical JSON with integers only (ARCHITECTURE §8), and digests must not
depend on how a platform prints a float. The conventions, used everywhere in the core:

- scores and signals: integer micro-units, ``round_half_even(x × 10⁶)`` of the float's exact value;
- ratios (utilization): integer basis points, ``floor(numerator × 10⁴ / denominator)``;
- configuration numbers (ranking weights): the shortest decimal string that reads back as the same
  float (``repr``), written without exponent, ``"0"`` for both zeros.
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import TypeAlias

__all__ = [
    "MICROS",
    "JSONValue",
    "basis_points",
    "decimal_string",
    "from_micros",
    "parse_decimal",
    "to_micros",
]

# What a float-free record may hold: RFC 8785 canonicalizes it to the same bytes everywhere.
JSONValue: TypeAlias = str | int | bool | list["JSONValue"] | dict[str, "JSONValue"] | None

MICROS = 1_000_000
# The largest magnitude in millionths, 10²⁸, is where the decimal quantization this replaced
# ran out of its 28 digits.
_MICROS_LIMIT = 10**28
# Where `to_micros` may round the float product itself (see there).
_FAST_LIMIT = 2.0**39


def to_micros(value: float) -> int:
    """``value`` in millionths, rounded half to even from its exact binary value.

    In integers (the float's exact ratio, whose denominator is a power of two): the same result
    as ``Decimal(value) * 10⁶`` quantized half to even, at a fraction of the cost; a bundle's
    ranking converts hundreds of signals, nearly all of them by the float product alone."""
    scaled = value * MICROS
    if -_FAST_LIMIT < scaled < _FAST_LIMIT:  # false for nan and the infinities
        nearest = round(scaled)
        # Below 2**39 the float product is within 2**-14 of the exact one, so when it is further
        # than that from a half-integer, both round to the same integer.
        if abs(scaled - nearest) < 0.499:
            return nearest
    if not math.isfinite(value):
        raise ValueError(f"cannot express {value!r} in fixed point")
    numerator, denominator = value.as_integer_ratio()
    quotient, remainder = divmod(numerator * MICROS, denominator)  # floor, 0 <= remainder
    twice = 2 * remainder
    if twice > denominator or (twice == denominator and quotient % 2 == 1):
        quotient += 1
    if abs(quotient) >= _MICROS_LIMIT:
        raise ValueError(f"{value!r} is beyond the fixed-point range")
    return quotient


def from_micros(micros: int) -> float:
    """The float nearest to ``micros / 10⁶`` (true division of integers is correctly rounded)."""
    return micros / MICROS


def basis_points(numerator: int, denominator: int) -> int:
    """``floor(numerator / denominator × 10⁴)``, exact on integers."""
    if denominator <= 0:
        raise ValueError(f"denominator must be positive, got {denominator}")
    return (numerator * 10_000) // denominator


def decimal_string(value: float) -> str:
    """The shortest round-tripping decimal form of a finite float, without exponent."""
    if not math.isfinite(value):
        raise ValueError(f"cannot write {value!r} as a decimal string")
    if value == 0:
        return "0"
    return format(Decimal(repr(value)).normalize(), "f")


def parse_decimal(text: str) -> float:
    """Read a decimal string written by :func:`decimal_string` (or any plain decimal) back."""
    try:
        number = Decimal(text)
    except ArithmeticError as exc:
        raise ValueError(f"not a decimal string: {text!r}") from exc
    if not number.is_finite():
        raise ValueError(f"not a finite decimal: {text!r}")
    return float(number)
