import math

import pytest

from gateway.core.fixed import basis_points, decimal_string, parse_decimal, to_micros


def test_micros_round_from_the_exact_binary_value() -> None:
    assert to_micros(0.35) == 350_000
    # Neither literal is a true half-micro in binary: 5e-07 lies just below it, 2.5e-06 above.
    assert to_micros(0.0000005) == 0
    assert to_micros(0.0000025) == 3
    assert to_micros(-0.25) == -250_000
    with pytest.raises(ValueError):
        to_micros(math.nan)


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
