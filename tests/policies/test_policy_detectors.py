"""Redaction detectors: positives, the checksum negatives, and look-alikes that must survive."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from policies.detectors import DETECTOR_NAMES, detectable, luhn_valid, redact_text, scan


def _found(text: str, detector: str) -> int:
    return dict(redact_text(text, [detector]).counts).get(detector, 0)


@pytest.mark.parametrize(
    "text",
    [
        "ann@example.com",
        "Ann.Lee+tag@mail.example.co.uk",
        "first_last@sub-domain.example.org",
    ],
)
def test_email(text: str) -> None:
    result = redact_text(f"write to {text}.", ["email"])
    assert result.text == "write to [redacted:email]."
    assert result.counts == (("email", 1),)


@pytest.mark.parametrize("text", ["ann@localhost", "@handle", "a@b", "user at example dot com"])
def test_not_email(text: str) -> None:
    assert _found(text, "email") == 0


@pytest.mark.parametrize(
    "text",
    [
        "+1 (415) 555-0134",
        "+44 20 7946 0958",
        "415-555-0134",
        "415.555.0134",
        "(415) 555 0134",
        "4155550134",
        "+33612345678",
    ],
)
def test_phone(text: str) -> None:
    assert redact_text(f"call {text} now", ["phone"]).text == "call [redacted:phone] now"


@pytest.mark.parametrize(
    "text",
    [
        "2026-11-29",
        "2026-11-29 12:00:00",
        "192.168.100.200",
        "123e4567-e89b-12d3-a456-426614174000",
        "order 123456789012",
        "version 1.2.3",
        "12345",
    ],
)
def test_not_phone(text: str) -> None:
    assert _found(text, "phone") == 0


@pytest.mark.parametrize(
    "number",
    [
        "4111 1111 1111 1111",
        "4111-1111-1111-1111",
        "4111111111111111",
        "5555555555554444",
        "378282246310005",
        "6011111111111117",
    ],
)
def test_card_passes_luhn(number: str) -> None:
    assert redact_text(f"card {number} on file", ["card"]).text == "card [redacted:card] on file"


@pytest.mark.parametrize(
    "number",
    [
        "4111 1111 1111 1112",
        "4111111111111113",
        "1234567812345678",
        "0000000000000000",
        "411111111111",
    ],
)
def test_card_luhn_negatives(number: str) -> None:
    assert _found(f"number {number}", "card") == 0


def test_luhn() -> None:
    assert luhn_valid("79927398713")
    assert not luhn_valid("79927398710")
    assert luhn_valid("4111111111111111")


@pytest.mark.parametrize(
    "iban", ["GB82 WEST 1234 5698 7654 32", "DE89370400440532013000", "FR1420041010050500013M02606"]
)
def test_iban(iban: str) -> None:
    assert redact_text(f"pay to {iban}.", ["iban"]).text == "pay to [redacted:iban]."


def test_iban_checksum_negative() -> None:
    assert _found("GB82 WEST 1234 5698 7654 33", "iban") == 0


@pytest.mark.parametrize(
    "token",
    [
        "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789",
        "sk-ant-api03-abcdefghijklmnopqrstuv",
        "ghp_" + "a1B2" * 9,
        "github_pat_11ABCDEFG0123456789_abcdefghij",
        "xoxb-1234567890-abcdefghij",
        "AKIAIOSFODNN7EXAMPLE",
        "AIza" + "b" * 35,
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "Bearer abcdefghijklmnopqrstuvwxyz0123456789",
        "3f786850e387550fdab836ed7e6dc881de23001b",
        "Zm9vYmFyYmF6cXV4cXV1eFRFU1RTVFJJTkcxMjM0NTY3ODkw",
        "sk_live_abcdefghijklmnop1234",
    ],
)
def test_api_token(token: str) -> None:
    result = redact_text(f"token: {token} end", ["api_token"])
    assert result.text == "token: [redacted:api_token] end", result.text


@pytest.mark.parametrize(
    "text",
    [
        "sk-short",
        "a_very_long_snake_case_identifier_name_for_tests",
        "/usr/local/lib/python3.11/site-packages/policies",
        "Bearer short",
    ],
)
def test_not_api_token(text: str) -> None:
    assert _found(text, "api_token") == 0


def test_fixed_order_and_markers_name_only_the_detector() -> None:
    text = "key AKIAIOSFODNN7EXAMPLE mail a@b.io card 4111111111111111 phone +1 415 555 0134"
    forward = redact_text(text, DETECTOR_NAMES)
    backward = redact_text(text, tuple(reversed(DETECTOR_NAMES)))
    assert (
        forward.text
        == backward.text
        == (
            "key [redacted:api_token] mail [redacted:email] card [redacted:card] phone [redacted:phone]"
        )
    )
    assert [name for name, _ in forward.counts] == ["api_token", "email", "card", "phone"]


def test_scan_is_a_superset_prefilter() -> None:
    assert scan("nothing to see") == frozenset()
    assert {"email"} <= scan("a@b.io")
    assert {"email"} <= scan("lone \ud800 surrogate, a@b.io")  # no UnicodeEncodeError


_PIECES = [
    "plain words",
    "ann@example.com",
    "+1 (415) 555-0134",
    "4111 1111 1111 1111",
    "sk-proj-abcdefghijklmnopqrstuvwxyz012345",
    "Bearer",  # a token may follow in the next text: a match across texts
    "abcdefghijklmnopqrstuvwxyz0123456789ABCD",
    "",
    "\ud800",
]
_TEXT = st.lists(st.sampled_from(_PIECES), max_size=3).map(" ".join)
_SETS = [
    ["email"],
    ["api_token"],
    ["email", "api_token"],
    ["email", "phone", "card"],
    list(DETECTOR_NAMES),
]


@settings(max_examples=200, deadline=None)
@given(
    texts=st.lists(st.tuples(_TEXT, _TEXT), max_size=40),
    names=st.sampled_from(_SETS),
)
def test_detectable_over_many_memories_is_detectable_over_each(
    texts: list[tuple[str, str]], names: list[str]
) -> None:
    """The pre-check over many memories gives each what it gives alone, and that is a superset
    of what redacts something."""
    headings, contents = [h for h, _ in texts], [c for _, c in texts]
    together = detectable(names)(headings, contents)
    alone = [detectable(names)([h], [c])[0] for h, c in texts]
    assert together == alone
    for (heading, content), possible in zip(texts, together, strict=True):
        hit = {name for text in (heading, content) for name, _ in redact_text(text, names).counts}
        assert hit <= possible


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(pieces=st.lists(st.sampled_from([*_PIECES, "555 0134", "12 34 56", "x@y"]), max_size=8))
def test_skipping_the_last_search_finds_every_hit(
    pieces: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Redaction stops searching once a detector's necessary condition fails on the rest of
    the text (detectors._MORE): it redacts exactly what searching to the end redacts."""
    from policies import detectors

    text = " ".join(pieces)
    shortcut = redact_text(text, DETECTOR_NAMES)
    with monkeypatch.context() as patch:
        patch.setattr(detectors, "_MORE", {})
        full = redact_text(text, DETECTOR_NAMES)
    assert (shortcut.text, shortcut.counts) == (full.text, full.counts)


def test_lone_surrogates_redact_without_raising() -> None:
    from policies import evaluate
    from policies.shipped import shipped_bundle
    from tests.policies.policy_helpers import NOW, memory

    strict = shipped_bundle("strict").bundle
    item = memory(heading="\udfff", content="mail \ud800 ann@example.com")
    outcome = evaluate(strict, {"purpose": "support"}, [item], NOW).outcomes[0]
    assert outcome.redacted_content == "mail \ud800 [redacted:email]"
    assert outcome.redacted_heading == "\udfff"


# Texts that make a naive redactor superlinear: backtracking bait for the email pattern, and
# long runs of matches that the checks reject (dates are phone-shaped, the cards fail Luhn).
ADVERSARIAL = {
    "email": "a" * 300_000 + "@" + "b." * 50_000,
    "phone": "2024-01-01 " * 20_000,
    "card": "4111 1111 1111 1112 " * 10_000,
    "api_token": "Ab1" * 100_000 + " " + "x" * 39 + " ",
}


@pytest.mark.parametrize("detector", list(ADVERSARIAL))
def test_redaction_is_linear_on_adversarial_text(
    detector: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Linear time, checked without a clock, from its two causes: every detector pattern is an
    RE2 program (RE2 never backtracks: it refuses what only a backtracking engine can run), and
    redaction shows the engine each byte of the text about once, each search going on from
    where the last match ended, however many matches it finds and rejects."""
    from policies import detectors

    regex = detectors._COMPILED[detector][0]
    assert type(regex).__module__ == "re2", type(regex)
    searches: list[tuple[int, int]] = []  # (where a search started, where it stopped looking)
    from policies.regex_engine import ENGINE

    engine = ENGINE
    assert engine.private, "the fast path, whose loop this test follows"

    class Counting:
        """The engine, recording where each search started and how far it looked."""

        def __getattr__(self, name: str) -> Any:
            return getattr(engine, name)

        def spans(self, regex: Any, data: bytes, more: Any = None) -> Iterator[Any]:
            position = 0
            for spans in engine.spans(regex, data, more):
                searches.append((position, spans[0][1]))
                position = spans[0][1] if spans[0][1] != position else position + 1
                yield spans
            searches.append((position, len(data)))  # the last: found nothing, or was cut

    monkeypatch.setattr(detectors, "ENGINE", Counting())
    text = ADVERSARIAL[detector]
    redact_text(text, [detector], scanned=True)
    assert searches, "no search went through detectors.ENGINE"
    starts = [start for start, _ in searches]
    assert starts == sorted(set(starts)), "a search started again where one had already looked"
    looked_at = sum(stop - start for start, stop in searches)
    assert looked_at <= len(text.encode()) + len(searches)


def test_lone_surrogate_in_a_regex_tested_field_is_an_error_not_an_exception() -> None:
    from policies import evaluate
    from tests.policies.policy_helpers import NOW, bundle, memory

    rules = (
        "- {id: rx, effect: deny, reason: r, when: {field: memory.heading, op: regex, value: x}}"
    )
    evaluation = evaluate(bundle(rules), {}, [memory(heading="x \ud800")], NOW)
    assert evaluation.outcomes[0].outcome == "deny"
    assert [(d.error, d.evidence[0].result) for d in evaluation.decisions] == [("E002", "error")]
