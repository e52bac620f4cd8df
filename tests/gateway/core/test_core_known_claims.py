"""Known claims: which live claim an update that does not name one refers to."""

from __future__ import annotations

import pytest

from gateway.core.known_claims import AMOUNT_FACTOR, Known, KnownClaims, money


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("$1,975", 1975.0),
        ("$42,000", 42000.0),
        ("€2.5k", 2500.0),
        ("$1.2 million", 1_200_000.0),
        ("£ 45", 45.0),
        ("two cats", None),
        ("Pixel", None),
    ],
)
def test_money_reads_an_amount_as_the_extractor_keeps_it(text: str, size: float | None) -> None:
    assert money(text) == size


def test_an_amount_updates_the_nearest_known_amount_within_the_factor() -> None:
    claims = KnownClaims([Known("user.rent", "$1,850"), Known("user.spot", "$120")])
    assert claims.amount("$1,975") == "user.rent"
    assert claims.amount("$100") == "user.spot"
    assert claims.amount(f"${1850 * AMOUNT_FACTOR + 10:.0f}") is None
    assert claims.amount("ten dollars") is None


def test_a_newer_value_of_a_key_replaces_the_older_and_ties_go_to_the_newest() -> None:
    claims = KnownClaims([Known("user.rent", "$1,000"), Known("user.gym", "$1,000")])
    assert claims.amount("$1,000") == "user.gym"
    claims.add("user.rent", "$1,000")
    assert claims.amount("$1,000") == "user.rent"
    claims.add("user.rent", "$5,000")
    assert claims.amount("$1,000") == "user.gym"


def test_the_newest_claim_of_a_kind() -> None:
    claims = KnownClaims([Known("user.marathon", "Chicago"), Known("user.triathlon", "Nice")])
    assert claims.newest_of(frozenset({"marathon", "triathlon"})) == "user.triathlon"
    assert claims.newest_of(frozenset({"ultra"})) is None
