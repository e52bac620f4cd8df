"""The RE2 engine's two paths: the fast one through google-re2's internals and the public-API
fallback give the same matches, and the fallback is taken when the internals are missing."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import re2
from hypothesis import given, settings
from hypothesis import strategies as st

from policies.detectors import _PATTERNS, DETECTOR_NAMES
from policies.regex_engine import ENGINE, RegexEngine, SetAnchor, Spans, load_engine

FAST = load_engine()
FALLBACK = load_engine(private=False)

# Every detector pattern (the redaction hot path), and shapes whose stepping differs: empty
# matches, optional groups that take no part, word boundaries, non-ASCII.
PATTERNS = [
    *(_PATTERNS[name][0] for name in DETECTOR_NAMES),
    "",
    "a*",
    "(x)?y",
    r"\b",
    "(?i)é+",
    "(a)|(b)",
]

SAMPLES = [
    "",
    "write to ann@example.com or bob@example.org",
    "card 4111 1111 1111 1111, iban DE89 3704 0044 0532 0130 00, call +1 (415) 555-0100",
    "token sk-proj-abcdefghijklmnopqrstuvwx and ghp_" + "a1B2" * 9,
    "aaa xy y Éé baab",
    "\udcff lone surrogate, 😀 and \u2028",
]


def _all_spans(engine: RegexEngine, pattern: str, text: str) -> list[list[tuple[int, int]]]:
    data = text.encode("utf-8", "surrogatepass")
    found: list[Spans] = list(engine.spans(engine.compile(pattern.encode()), data))
    return [[(start, end) for start, end in spans] for spans in found]


def test_the_pinned_re2_takes_the_fast_path() -> None:
    # If this fails, the installed google-re2 renamed its internals: everything still works
    # on the fallback, but the pin in pyproject.toml and the engine want a look.
    assert ENGINE.private
    assert FAST.private


def test_a_module_without_the_internals_takes_the_public_api() -> None:
    public_only = SimpleNamespace(
        compile=re2.compile, Set=re2.Set, Options=re2.Options, error=re2.error, escape=re2.escape
    )
    assert not load_engine(public_only).private
    assert not FALLBACK.private
    engine = load_engine(public_only)
    assert _all_spans(engine, "a+", "baaab a") == [[(1, 4)], [(6, 7)]]


@pytest.mark.parametrize("pattern", PATTERNS)
@pytest.mark.parametrize("text", SAMPLES)
def test_both_paths_find_the_same_spans(pattern: str, text: str) -> None:
    assert _all_spans(FAST, pattern, text) == _all_spans(FALLBACK, pattern, text)


def test_the_samples_do_match() -> None:
    # A guard on the comparison above: equal because both find things, not because both fail.
    hits = sum(bool(_all_spans(FAST, pattern, text)) for pattern in PATTERNS for text in SAMPLES)
    assert hits > len(PATTERNS) * 2
    assert _all_spans(FAST, "(x)?y", "y xy") == [[(0, 1), (-1, -1)], [(2, 4), (2, 3)]]


@settings(max_examples=200, deadline=None)
@given(st.text(st.sampled_from("ab@.-_ 0123456789xyAZé\n"), max_size=60))
def test_both_paths_agree_on_generated_text(text: str) -> None:
    for pattern in PATTERNS:
        assert _all_spans(FAST, pattern, text) == _all_spans(FALLBACK, pattern, text), pattern


@pytest.mark.parametrize("anchor", ["search", "whole"])
@pytest.mark.parametrize("text", [*SAMPLES, "y", "aaa", "xy"])
def test_both_paths_give_the_same_set_matches(anchor: SetAnchor, text: str) -> None:
    data = text.encode("utf-8", "surrogatepass")
    fast = FAST.set_matcher(PATTERNS, anchor)(data)
    fallback = FALLBACK.set_matcher(PATTERNS, anchor)(data)
    assert sorted(fast) == sorted(fallback)


def test_set_matches_name_the_matching_patterns() -> None:
    for engine in (FAST, FALLBACK):
        assert sorted(engine.set_matcher(["a", "b", "c"], "search")(b"cab")) == [0, 1, 2]
        assert list(engine.set_matcher(["a", "b"], "search")(b"xyz")) == []
        assert list(engine.set_matcher(["a.c", "b"], "whole")(b"abc")) == [0]


def test_both_paths_reject_a_bad_pattern_with_the_engine_error() -> None:
    for engine in (FAST, FALLBACK):
        with pytest.raises(engine.error):
            engine.compile("(unclosed")
