"""Redaction Unicode cannot dodge: one normalization (policies/textnorm.py) before every
detector, detection on the folded text, redaction of the text as written; secrets split between
a memory's heading and content; and ASCII exactly as before (recorded vectors)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tests.policies.test_policy_equivalence as equivalence
from policies import evaluate, judge
from policies.detectors import (
    DETECTOR_NAMES,
    detectable,
    redact_fields,
    redact_text,
    replacement,
    scan,
)
from policies.shipped import shipped_bundle
from policies.textnorm import fold, fold_char, normal_form
from tests.policies.detector_vectors import CONTEXTS, POSITIVES
from tests.policies.policy_helpers import NOW, memory
from tests.policies.policy_reference import reference_evaluate
from tests.policies.redaction_golden import DETECTOR_SETS, GOLDEN, bench_digests, outcome
from tests.policies.unicode_variants import FAMILIES, disguised

EVERY = list(DETECTOR_NAMES)
# Unrelated non-ASCII text around a secret, which redaction must leave byte for byte.
BEFORE, AFTER = "Ünïcødé — naïve ", " ☕ café\u200b 日本語"
SECRETS = [(name, secret) for name, secrets in POSITIVES.items() for secret in secrets]


def _nothing_left(*texts: str, detectors: list[str] = EVERY) -> None:
    """No detector fires on the texts' folded forms, alone or across the first two."""
    for text in texts:
        assert redact_text(fold(text), detectors).counts == (), text
    if len(texts) == 2:
        heading, content = redact_fields(fold(texts[0]), fold(texts[1]), detectors)
        assert heading.counts == content.counts == (), texts


# --- the normalization ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "folded"),
    [
        ("ann＠example﹫x", "ann@example@x"),
        ("０１２𝟑𝟒٥٦۷۸९", "0123456789"),
        ("a\u200bb\u200cc\u200dd\u2060e\ufeff\u00adf", "abcdef"),
        ("x\u00a0\u2007\u202f\u3000y", "x    y"),
        ("1–2—3−4‐5﹣6－7", "1-2-3-4-5-6-7"),
        ("е\u0301xаmрlе.соm", "example.com"),
        ("ΑΒΕ οντ", "ABE ovτ"),
        ("ﬁle ① ⑵ ²", "file 1 (2) 2"),
        ("4·1•1．1", "4.1.1.1"),
        ("ascii stays", "ascii stays"),
        ("日本語 и ü", "日本語 и u"),
    ],
)
def test_fold(text: str, folded: str) -> None:
    assert fold(text) == folded
    assert normal_form(text).text == folded


def test_combining_marks_belong_to_the_character_before_them() -> None:
    form = normal_form("xe\u0301\u0323y")
    assert form.text == "xey"
    assert form.span(1, 2) == (1, 4)  # "e" and both its marks
    assert form.span(0, 1) == (0, 1)
    assert form.span(2, 3) == (4, 5)
    expanded = normal_form("ﬁ\u0301!")  # a ligature folds to two characters: both own the mark
    assert expanded.text == "fi!"
    assert expanded.span(0, 1) == expanded.span(1, 2) == (0, 2)


@settings(max_examples=300, deadline=None)
@given(st.text(st.characters(codec=None, exclude_categories=()), max_size=80))
def test_the_offset_map_is_consistent(text: str) -> None:
    """The map has one span per folded character, in order, each the source of that
    character; removed characters lie between spans; ASCII maps to itself."""
    form = normal_form(text)
    assert form.text == fold(text)
    assert len(form.starts) == len(form.ends) == len(form.text)
    previous_end = 0
    for i, (start, end) in enumerate(zip(form.starts, form.ends, strict=True)):
        assert 0 <= start < end <= len(text)
        assert start >= previous_end or form.starts[i - 1] == start  # one source, or the next
        assert form.text[i] in fold_char(text[start]) or text[start].isascii()
        gap = text[previous_end:start] if start >= previous_end else ""
        assert fold(gap) == "", (gap, text)  # only removed characters between spans
        previous_end = max(previous_end, end)
    assert fold(text[previous_end:]) == ""
    # The map by segment gives the same spans as the whole map.
    for start in range(len(form.text)):
        for end in range(start + 1, min(start + 4, len(form.text)) + 1):
            assert form.span(start, end) == (form.starts[start], form.ends[end - 1])


def test_folding_is_idempotent_and_ascii_is_its_own_form() -> None:
    for code in range(0, 0x30000, 7):
        char = chr(code)
        folded = fold_char(char)
        assert fold(folded) == folded, hex(code)
    assert normal_form("plain").starts == range(5)


# --- the probe's families ------------------------------------------------------------------


@pytest.mark.parametrize(("family", "detector", "secret"), FAMILIES, ids=[f[0] for f in FAMILIES])
def test_each_family_is_redacted_whole_and_nothing_else(
    family: str, detector: str, secret: str
) -> None:
    text = f"{BEFORE}{secret}{AFTER}"
    assert scan(text, [detector]) == {detector}
    result = redact_text(text, [detector])
    assert result.counts == ((detector, 1),), family
    assert result.text == f"{BEFORE}{replacement(detector)}{AFTER}", family
    everything = redact_text(text, EVERY)  # every detector at once: the same secret, once
    assert everything.text == result.text
    _nothing_left(everything.text)


def test_a_card_split_between_heading_and_content_is_redacted_in_both() -> None:
    heading, content = redact_fields("Card 4111 1111", "1111 1111 on file", ["card"])
    assert (heading.text, content.text) == ("Card [redacted:card]", "[redacted:card] on file")
    assert heading.counts == content.counts == (("card", 1),)
    # And in an evaluation: both fields redacted, a redaction counted in each.
    strict = shipped_bundle("strict").bundle
    item = memory(heading="Pay to 4111 1111", content="1111 1111 on Friday")
    found = evaluate(strict, {"purpose": "support"}, [item], NOW).outcomes[0]
    assert found.redacted_heading == "Pay to [redacted:card]"
    assert found.redacted_content == "[redacted:card] on Friday"
    assert [tuple(r) for r in found.redactions] == [
        ("content", "card", 1),
        ("heading", "card", 1),
    ]


@pytest.mark.parametrize(
    ("heading", "content", "detector", "expected"),
    [
        ("mail ann@exa", "mple.com today", "email", ("mail [X]", "[X] today")),
        ("Auth: Bearer", "abcdefghijklmnopqrstuvwxyz now", "api_token", ("Auth: [X]", "[X] now")),
        ("key AKIAIOSF", "ODNN7EXAMPLE ok", "api_token", ("key [X]", "[X] ok")),
        ("iban DE89", "3704 0044 0532 0130 00.", "iban", ("iban [X]", "[X].")),
        ("call +1 415-55", "5-0134 now", "phone", ("call [X]", "[X] now")),
        # Unicode on both sides of the joint, zero-width characters at it.
        (
            "pay ４１１１ １１１１\u200b",
            "\u200b１１１１ １１１１ ok",
            "card",
            ("pay [X]", "[X] ok"),
        ),
        ("to аnn＠exa", "mрle.com ☕", "email", ("to [X]", "[X] ☕")),
    ],
)
def test_secrets_split_between_heading_and_content(
    heading: str, content: str, detector: str, expected: tuple[str, str]
) -> None:
    marker = replacement(detector)
    found = redact_fields(heading, content, [detector])
    assert (found[0].text, found[1].text) == tuple(e.replace("[X]", marker) for e in expected)
    assert found[0].counts == found[1].counts == ((detector, 1),)
    assert detector in detectable([detector])([heading], [content])[0]
    _nothing_left(found[0].text, found[1].text)


@pytest.mark.parametrize(
    ("heading", "content"),
    [
        ("Score 0.5", "2026-01-01 12:00:00, all green"),  # a decimal, then a date
        ("Sprint 5", "2026-01-05 planning"),  # a number, then a date
        ("mail ann@example.com", "ann@example.com again"),  # whole in each: counted in each
        ("Atlas owners", "The payments team owns Atlas."),
        ("", "4111 1111 1111 1111"),
    ],
)
def test_what_does_not_cross_is_redacted_as_each_text_alone(heading: str, content: str) -> None:
    together = redact_fields(heading, content, EVERY)
    alone = redact_text(heading, EVERY), redact_text(content, EVERY)
    assert [(r.text, r.counts) for r in together] == [(r.text, r.counts) for r in alone]


def test_a_secret_in_each_text_keeps_its_own_count() -> None:
    # The content's own phone number is found before anything is read across the joint, so a
    # number ending the heading cannot swallow it into a card number.
    heading, content = redact_fields("Room 1204", "415 555 0134 after six", EVERY)
    assert (heading.text, heading.counts) == ("Room 1204", ())
    assert (content.text, content.counts) == ("[redacted:phone] after six", (("phone", 1),))


def test_lower_case_ibans_need_a_registered_country_and_length() -> None:
    assert redact_text("pay de89 3704 0044 0532 0130 00.", ["iban"]).counts == (("iban", 1),)
    assert redact_text("pay De89370400440532013000.", ["iban"]).counts == (("iban", 1),)
    # Valid mod 97, but no such country (upper case is held to mod 97 alone, as always).
    assert redact_text("pay zz22 3704 0044 0532 0130 00.", ["iban"]).counts == ()
    assert redact_text("pay ZZ22 3704 0044 0532 0130 00.", ["iban"]).counts == (("iban", 1),)
    # The right country with the wrong length (21, valid mod 97), in either case.
    assert redact_text("pay de51 3704 0044 0532 0130 0.", ["iban"]).counts == ()
    assert redact_text("pay DE51 3704 0044 0532 0130 0.", ["iban"]).counts == (("iban", 1),)


def test_dotted_card_numbers_and_look_alikes() -> None:
    assert redact_text("card 3782.822463.10005 ok", ["card"]).counts == (("card", 1),)
    assert redact_text("card 4111.1111.1111.1112 ok", ["card"]).counts == ()  # Luhn
    assert redact_text("ip 192.168.100.200 ok", ["card"]).counts == ()
    assert redact_text("call 415.555.0134 and 415.555.0135", ["card"]).counts == ()


# --- generated variants of every positive ---------------------------------------------------


@st.composite
def variants(draw: st.DrawFn) -> tuple[str, str, str]:
    """(detector, positive, a disguised copy of it)."""
    name, secret = draw(st.sampled_from(SECRETS))
    return name, secret, draw(disguised(secret, name))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(variants(), st.booleans())
def test_disguised_positives_are_detected_and_redacted_whole(
    variant: tuple[str, str, str], decorated: bool
) -> None:
    """Every positive of every detector, disguised, is found (by its detector alone and among
    all), replaced whole by one marker; the text around it is unchanged, and nothing any
    detector finds is left in the result's folded form."""
    name, _, secret = variant
    prefix, suffix = CONTEXTS[name].split("{}")
    if decorated:
        prefix, suffix = BEFORE + prefix, suffix + AFTER
    text = prefix + secret + suffix
    assert name in scan(text)
    assert name in detectable(EVERY)([text], [""])[0]
    alone = redact_text(text, [name])
    assert alone.counts == ((name, 1),), (text, alone.text)
    assert alone.text == prefix + replacement(name) + suffix
    every = redact_text(text, EVERY)
    assert every.text.startswith(prefix) and every.text.endswith(suffix)
    _nothing_left(every.text)
    _nothing_left(alone.text)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(variants(), st.data())
def test_disguised_positives_split_between_heading_and_content(
    variant: tuple[str, str, str], data: st.DataObject
) -> None:
    """A disguised positive split anywhere between heading and content leaves nothing a
    detector finds, in either text or across them, and the text around it unchanged. When
    neither part is a secret alone, each field gets one marker and one count. (When one part
    is, it is redacted alone, and so is any secret-shaped rest of the other: by its own
    detector, or by another, as a token's digits are a phone number.)"""
    name, _, secret = variant
    cut = data.draw(st.integers(1, len(secret) - 1))
    prefix, suffix = CONTEXTS[name].split("{}")
    heading, content = BEFORE + prefix + secret[:cut], secret[cut:] + suffix + AFTER
    assert name in detectable([name])([heading], [content])[0]
    for detectors in ([name], EVERY):
        found = redact_fields(heading, content, detectors)
        assert found[0].text.startswith(BEFORE + prefix)
        assert found[1].text.endswith(suffix + AFTER)
        assert found[0].counts or found[1].counts
        _nothing_left(found[0].text, found[1].text, detectors=detectors)
    found = redact_fields(heading, content, [name])
    if not (redact_text(heading, [name]).counts or redact_text(content, [name]).counts):
        marker = replacement(name)
        assert found[0].text == BEFORE + prefix + marker
        assert found[1].text == marker + suffix + AFTER
        assert found[0].counts == found[1].counts == ((name, 1),)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from([*[c.split("{}")[0] for c in CONTEXTS.values()], "", "x"]),
            st.text(st.sampled_from("0123456789 -.@aeAEbz\u200b０٣\u2013\u00a0"), max_size=12),
        ),
        min_size=2,
        max_size=2,
    ),
    st.sampled_from(DETECTOR_SETS),
)
def test_the_pair_pre_check_is_a_superset(texts: list[tuple[str, str]], names: list[str]) -> None:
    heading, content = (a + b for a, b in texts)
    possible = detectable(names)([heading], [content])[0]
    found = redact_fields(heading, content, names)
    assert {name for result in found for name, _ in result.counts} <= possible


_FILLER = st.lists(
    st.sampled_from(["word", "x" * 70, "a1B2" * 20, "4111", "bearer", " " * 40, "\n", ",", "é"]),
    max_size=40,
).map(" ".join)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(variants(), st.data(), _FILLER, _FILLER, st.sampled_from(DETECTOR_SETS))
def test_the_pair_pre_check_holds_for_long_texts(
    variant: tuple[str, str, str],
    data: st.DataObject,
    before: str,
    after: str,
    names: list[str],
) -> None:
    """Past 512 characters the pre-check reads only as far into a text as a match across the
    joint can reach: still a superset of what redaction finds, split secrets included."""
    _, _, secret = variant
    cut = data.draw(st.integers(1, len(secret) - 1))
    heading, content = f"{before} {secret[:cut]}", f"{secret[cut:]} {after}"
    possible = detectable(names)([heading], [content])[0]
    found = redact_fields(heading, content, names)
    assert {name for result in found for name, _ in result.counts} <= possible


@pytest.mark.parametrize(
    ("heading", "content", "detector"),
    [
        (
            "w " * 300 + "Bearer" + " " * 200 + "abcdefghij",
            "klmnopqrstuvwxyz0123 " + "w " * 300,
            "api_token",
        ),
        (
            "w " * 300 + "Bea",
            "rer" + "\t" * 300 + "abcdefghijklmnopqrstuvwxyz " + "w " * 300,
            "api_token",
        ),
        ("w " * 300 + "sk-proj-" + "a1B2" * 100, "c3D4" * 100 + " " + "w " * 300, "api_token"),
        ("w " * 300 + "x" * 600 + "@exa", "mple.com " + "w " * 300, "email"),
        ("w " * 300 + "ann@" + "d" * 200, "e" * 400 + ".com " + "w " * 300, "email"),
    ],
)
def test_long_secrets_split_between_long_texts(heading: str, content: str, detector: str) -> None:
    assert detector in detectable([detector])([heading], [content])[0]
    found = redact_fields(heading, content, [detector])
    assert found[0].counts == found[1].counts == ((detector, 1),)
    _nothing_left(found[0].text, found[1].text, detectors=[detector])


# --- ASCII, exactly as before ---------------------------------------------------------------


def _golden() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(GOLDEN.read_text("utf-8"))
    return document


def _redact(text: str, detectors: list[str]) -> tuple[str, list[tuple[str, int]]]:
    result = redact_text(text, detectors)
    return result.text, list(result.counts)


def test_ascii_texts_redact_exactly_as_recorded() -> None:
    texts = _golden()["texts"]
    assert len(texts) > 250
    for text, *outcomes in texts:
        assert [outcome(_redact, text, names) for names in DETECTOR_SETS] == outcomes, text


# Pairs of the recorded pool that the joint makes one secret-shaped match of: numbers meeting
# (read as one number across the joint) and the parts of secrets. Every other pair is
# redacted exactly as its two texts were alone.
ACROSS = {
    ("Sprint 5", "1111 1111 on file"): "phone",
    ("Room 1204", "555 0134 is the desk"): "phone",
    ("Room 1204", "1111 1111 on file"): "phone",
    ("ids 12345678", "555 0134 is the desk"): "card",
    ("ids 12345678", "12 items"): "phone",
    ("call +1 415", "555 0134 is the desk"): "phone",
    ("call +1 415", "1111 1111 on file"): "phone",
    ("Bearer", "abcdefghijklmnopqrstuvwxyz0123456789 end"): "api_token",
    ("Card 4111 1111", "555 0134 is the desk"): "phone",
    ("Card 4111 1111", "12 items"): "phone",
    ("Card 4111 1111", "1111 1111 on file"): "card",
    ("mail ann@exa", "mple.com today"): "email",
}


def test_ascii_pairs_redact_as_recorded_unless_a_secret_crosses() -> None:
    pairs = _golden()["pairs"]
    assert len(pairs) > 700
    crossed = set()
    for heading, content, *recorded in pairs:
        found = redact_fields(heading, content, EVERY)
        results = [None if not r.counts else [r.text, [list(c) for c in r.counts]] for r in found]
        name = ACROSS.get((heading, content))
        if name is None:
            assert results == recorded, (heading, content)
            continue
        crossed.add((heading, content))
        marker = replacement(name)
        assert found[0].text.endswith(marker) and found[1].text.startswith(marker)
        assert found[0].counts == found[1].counts == ((name, 1),)
        # Nothing but the crossing match is redacted: what is left is the texts' own.
        assert heading.startswith(found[0].text.removesuffix(marker))
        assert content.endswith(found[1].text.removeprefix(marker))
    assert crossed == set(ACROSS)


def test_the_benchmark_evaluations_are_as_recorded() -> None:
    """The whole evaluation (outcomes, decisions, redactions, texts) of the benchmark's ASCII
    data sets under the bench, default and strict bundles is what the ASCII-only engine gave."""
    assert bench_digests() == _golden()["bench"]


def test_ascii_takes_the_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pure ASCII is never folded or mapped: what folding uses is not even touched."""
    from policies import textnorm

    for name in ("_NON_ASCII", "_CHUNKS", "_TABLE"):
        monkeypatch.setattr(textnorm, name, None)
    text = "mail ann@example.com, card 4111 1111 1111 1111, DE89 3704 0044 0532 0130 00"
    assert redact_text(text, EVERY).counts == (("email", 1), ("iban", 1), ("card", 1))
    assert redact_fields(text, text, EVERY)[1].counts == (("email", 1), ("iban", 1), ("card", 1))
    heading, content = redact_fields("Card 4111 1111", "1111 1111 on file", EVERY)
    assert heading.counts == content.counts == (("card", 1),)
    assert detectable(EVERY)([text], [text]) == [frozenset({"email", "iban", "card", "phone"})]
    assert scan(text) == {"email", "iban", "card", "phone"}


def test_unicode_text_without_secrets_is_left_alone() -> None:
    text = "Ünïcødé — naïve café ☕ 日本語, Ελληνικά, русский текст: 12 ٣ ١٢ items"
    assert redact_text(text, EVERY).counts == ()
    assert redact_text(text, EVERY).text is text  # not rewritten to any normal form


# --- the engine against the reference, on Unicode and split secrets -------------------------


def _unicode_pool() -> tuple[list[str], list[tuple[str, str]]]:
    """Texts (the families in sentences, unrelated Unicode, ASCII) and heading/content pairs
    that split a secret between them."""
    texts = [f"{BEFORE}{secret}{AFTER}" for _, _, secret in FAMILIES]
    texts += ["", "Ünïcødé — café", "Atlas owners", "4111 1111", "mail аnn＠exa", "Bearer"]
    pairs = [
        (f"x {secret[: len(secret) // 2]}", f"{secret[len(secret) // 2 :]} y")
        for _, _, secret in FAMILIES
    ]
    pairs += [
        ("Card 4111 1111", "1111 1111 on file"),
        ("Auth: Bearer", "abcdefghijklmnopqrstuvwxyz"),
    ]
    return texts, pairs


@st.composite
def unicode_candidates(draw: st.DrawFn) -> list[dict[str, object]]:
    texts, pairs = _unicode_pool()
    items = []
    for i in range(draw(st.integers(0, 12))):
        if draw(st.booleans()):
            heading, content = draw(st.sampled_from(pairs))
        else:
            heading, content = draw(st.sampled_from(texts)), draw(st.sampled_from(texts))
        items.append(
            memory(
                f"m{i}",
                heading=heading,
                content=content,
                labels=draw(st.sampled_from([[], ["pii"], ["secret"]])),
                source_type=draw(st.sampled_from(["chat", "code"])),
                namespace=draw(st.sampled_from(["eng", "public", "hr"])),
            )
        )
    return items


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), unicode_candidates())
def test_the_engine_equals_the_reference_on_unicode(
    data: st.DataObject, items: list[dict[str, object]]
) -> None:
    """`evaluate`, and redaction on demand of what is shown, give what the plain reference
    gives (folding, matches across heading and content, no prefilter, no window), on texts
    full of disguised and split secrets."""
    bundle = data.draw(equivalence.bundles())
    request = data.draw(equivalence.requests)
    equivalence._same(
        evaluate(bundle, request, items, NOW), reference_evaluate(bundle, request, items, NOW)
    )
    headings, full = data.draw(equivalence.shown(len(items)))
    found = judge(bundle, request, items, NOW).evaluation(headings=headings, full=full)
    shown = equivalence._disclosed(headings, full)
    equivalence._same(found, reference_evaluate(bundle, request, items, NOW, shown))
