import math
from decimal import ROUND_HALF_EVEN, Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gateway.core.fixed import basis_points, decimal_string, parse_decimal, to_micros


def test_micros_round_from_the_exact_binary_value() -> None:
    assert to_micros(0.35) == 350_000
    # Neither literal is a true half-micro in binary: 5e-07 lies just below it, 2.5e-06 above.
    assert to_micros(0.0000005) == 0
    assert to_micros(0.0000025) == 3
    assert to_micros(-0.25) == -250_000
    with pytest.raises(ValueError):
        to_micros(math.nan)


@settings(max_examples=5000)
@given(
    st.floats(-1e21, 1e21)
    | st.integers(-(10**9), 10**9).map(lambda n: n / 2_000_000)  # exact half-micros and near
    | st.floats(-2.0, 2.0)
)
def test_micros_are_the_decimal_quantization(value: float) -> None:
    exact = int((Decimal(value) * 1_000_000).quantize(Decimal(1), rounding=ROUND_HALF_EVEN))
    assert to_micros(value) == exact


def test_micros_have_a_range() -> None:
    assert to_micros(1e21) == 10**27  # 1e21 is exact in binary
    with pytest.raises(ValueError, match="range"):
        to_micros(1e22)


def test_basis_points_round_down() -> None:
    assert basis_points(459, 600) == 7650
    assert basis_points(1, 3) == 3333
    assert basis_points(600, 600) == 10_000


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.35, "0.35"),
        (1.0, "1"),
        (30.0, "30"),
        (1e-7, "0.0000001"),
        (-0.0, "0"),
        (1e22, "1" + "0" * 22),
    ],
)
def test_decimal_strings_are_plain_and_round_trip(value: float, text: str) -> None:
    assert decimal_string(value) == text
    assert parse_decimal(text) == value
