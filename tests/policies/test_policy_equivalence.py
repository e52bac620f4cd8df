"""The optimized `evaluate` gives exactly what the plain reference evaluation gives.

`evaluate` groups memories by field value and by the results of their rules, tests whole
columns at once (a regex first over the column joined into one text), screens `all`/`any` with
one of their parts, caches evidence, leaves caps that can never bind out of the budget walk, and
skips redaction work a cheap pre-check rules out (policy_bench.py measures what that buys).
`policy_reference.reference_evaluate` does none of that. Over random bundles, requests and
candidate lists (repeated values, so that grouping kicks in; odd values, so that it must step
aside), both must agree on everything: outcomes, decisions with their evidence, in order,
redactions, delivered texts, refusal. Targeted cases pin the edges of the shortcuts.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import types
from collections.abc import Sequence
from datetime import datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from policies import Bundle, Evaluation, evaluate, judge
from tests.policies.policy_bench import REQUEST, bench_bundle, memories
from tests.policies.policy_helpers import NOW, loaded
from tests.policies.policy_reference import reference_evaluate
from tests.policies.test_policy_properties import BUNDLES

NAN = float("nan")
RULE_POOL = [
    "{id: need-purpose, effect: require, reason: r, when: {field: request.purpose, op: exists}}",
    "{id: hr, effect: deny, reason: r, when: {all: [{field: memory.namespace, op: eq, value: hr}, {field: request.role, op: not_in, value: [hr_assistant]}]}}",
    "{id: ns-in, effect: deny, reason: r, when: {field: memory.namespace, op: in, value: [legal, ops]}}",
    "{id: low, effect: deny, reason: r, when: {field: memory.confidence, op: lt, value: 0.3}}",
    "{id: secret, effect: deny, reason: r, when: {field: memory.labels, op: contains_any, value: [secret]}}",
    "{id: old, effect: deny, reason: r, when: {all: [{field: memory.memory_type, op: eq, value: working}, {field: memory.created_at, op: older_than, value: 7d}]}}",
    "{id: rx, effect: deny, reason: r, when: {field: memory.heading, op: regex, value: '(?i)secret|^x'}}",
    "{id: glob, effect: deny, reason: r, when: {field: memory.source_ref, op: glob, value: 'vault://*'}}",
    "{id: no-labels, effect: deny, reason: r, when: {not: {field: memory.labels, op: exists}}}",
    "{id: public, effect: allow, when: {field: memory.namespace, op: eq, value: public}}",
    "{id: sure, effect: allow, when: {field: memory.confidence, op: gte, value: 0.5}}",
    "{id: any-ns, effect: allow, when: {any: [{field: memory.namespace, op: ne, value: hr}, {field: memory.tokens, op: gt, value: 50}]}}",
    "{id: pii, effect: redact, detectors: [email, phone], when: {field: memory.labels, op: contains, value: pii}}",
    "{id: code, effect: redact, detectors: [api_token, card, iban], when: {field: memory.source_type, op: eq, value: code}}",
    "{id: everywhere, effect: redact, detectors: [email, card, iban, phone, api_token]}",
    "{id: mail, effect: redact, detectors: [email], when: {field: memory.namespace, op: ne, value: public}}",
    "{id: cap-ep, effect: cap, max_items: 2, max_tokens: 150, when: {field: memory.memory_type, op: eq, value: episodic}}",
    "{id: cap-tok, effect: cap, max_tokens: 200, when: {field: memory.tokens, op: gte, value: 20}}",
    "{id: cap-all, effect: cap, max_items: 5}",
    # No anchors, so the column is first searched as one joined text: some values match.
    "{id: rx-word, effect: deny, reason: r, when: {field: memory.heading, op: regex, value: '\\bcard\\b|mail\\s'}}",
    "{id: rx-end, effect: deny, reason: r, when: {field: memory.content, op: regex, value: 'service$'}}",
    "{id: rx-label, effect: deny, reason: r, when: {field: memory.labels, op: regex, value: 'pi+'}}",
    # `all` over two fields: screened by one, the whole called on the rest.
    "{id: unsure-code, effect: deny, reason: r, when: {all: [{field: memory.confidence, op: lt, value: 0.5}, {field: memory.source_type, op: eq, value: code}]}}",
    # Large enough that it often never binds (left out of the walk), not always.
    "{id: cap-wide, effect: cap, max_items: 12, max_tokens: 400, when: {field: memory.namespace, op: ne, value: hr}}",
    "{id: cap-ns, effect: cap, max_items: 3, when: {field: memory.namespace, op: in, value: [eng, ops]}}",
]


@functools.cache
def _load(rules: str, combining: str, default_decision: str, on_error: str, mode: str) -> Bundle:
    settings_ = {"combining": combining, "default_decision": default_decision}
    return loaded(rules, **settings_, on_error=on_error, mode=mode).bundle


@st.composite
def bundles(draw: st.DrawFn) -> Bundle:
    """A named bundle, or one drawn from RULE_POOL with random modes and settings."""
    if draw(st.booleans()):
        named = dict(BUNDLES, bench=bench_bundle())
        picked = named[draw(st.sampled_from(sorted(named)))]
        return dataclasses.replace(picked, mode=draw(st.sampled_from(["enforce", "log_only"])))
    chosen = draw(st.lists(st.sampled_from(RULE_POOL), min_size=1, max_size=8, unique=True))
    lines = []
    for rule in chosen:
        log_only = draw(st.integers(0, 3)) == 0
        lines.append("- " + (rule.replace("{id:", "{mode: log_only, id:", 1) if log_only else rule))
    return _load(
        "\n".join(lines),
        draw(st.sampled_from(["deny-overrides", "first-applicable"])),
        draw(st.sampled_from(["allow", "deny"])),
        draw(st.sampled_from(["deny", "allow"])),
        draw(st.sampled_from(["enforce", "enforce", "log_only"])),
    )


TEXTS = [
    "",
    "plain text",
    "Heading 12 about the service",
    "mail ann@example.com",
    "call +1 415 555 0134",
    "card 4111 1111 1111 1111 and DE89 3704 0044 0532 0130 00",
    "key AKIAIOSFODNN7EXAMPLE",
    "Bearer abcdefghijklmnopqrstuvwxyz0123",
    "ann@example.com, 4111-1111-1111-1111, sk-proj-abcdefghijklmnopqrstuvwx",
    "2026-01-01 12:00:00, 192.168.100.100, 1234567",
    "a secret plan",
    "x marks \ud800 ann@example.com",  # a lone surrogate: valid JSON, so it can arrive
    "é ü ann@ex.co +44 20 7946 0958",
    "tel 012 345 678",  # 9 digits: the shortest phone number
    "x-ray results",
    "discard\nmail\tx",  # newlines inside a value, next to the joined text's own
    "card 4222222222222",  # 13 digits: the shortest card number
    "ids 12345678 and 123456789012",
]
# Values of the wrong kind (or of a kind equal to another's: True == 1), in pools: hashable ones
# alone still let the engine group memories by value, NaN alone still lets it test a column of
# numbers at once; any pool must not make it conflate values or skip a check.
ODD_POOLS: list[list[object]] = [
    [],
    [float("nan")],
    [3, 1.5, True, False, float("nan"), "0.5"],
    # Naive datetimes on purpose: an input error the engine must report, not compare.
    [b"bytes", datetime(2026, 1, 1), True],  # noqa: DTZ001
    [3, True, float("nan"), ["x"], {"a": 1}, b"bytes", datetime(2026, 1, 1), [1]],  # noqa: DTZ001
]


def _field(values: Sequence[object], odd: Sequence[object]) -> st.SearchStrategy[object]:
    plain = st.sampled_from(values)
    if not odd:
        return plain
    # Mostly plain values: a column with one odd value in it is the case to get right.
    return st.integers(0, 5).flatmap(lambda n: st.sampled_from(odd) if n == 0 else plain)


@st.composite
def candidates(draw: st.DrawFn) -> list[dict[str, object]]:
    odd = draw(st.sampled_from(ODD_POOLS))
    count = draw(st.integers(0, 30))
    # Mostly distinct texts, so that text rules test the whole column rather than run once
    # per distinct value.
    numbered = draw(st.booleans())
    items = []
    for i in range(count):
        item: dict[str, object] = {"memory_id": f"m{i}"}
        fields: dict[str, Sequence[object]] = {
            "namespace": ["eng", "hr", "public", "ops", "legal", None],
            "memory_type": ["semantic", "episodic", "working"],
            "heading": TEXTS,
            "content": TEXTS,
            "confidence": [0.1, 0.3, 0.5, 0.9, 1, 0, None],
            "labels": [[], ["pii"], ["secret"], ["x", "pii"], ("pii",), None],
            "source_type": ["chat", "doc", "code"],
            "source_ref": ["git://r", "vault://a", None],
            "created_at": [NOW - timedelta(days=d) for d in (0, 3, 7, 30)] + [None],
            "tokens": [0, 10, 40, 100, None, -30, 350],
        }
        for key, values in fields.items():
            if draw(st.integers(0, 9)) > 0:
                item[key] = draw(_field(values, odd))
        for key in ("heading", "content"):
            text = item.get(key)
            if numbered and isinstance(text, str) and i % 3:
                item[key] = f"{text} #{i}" if i % 3 == 1 else f"#{i} {text}"
        items.append(item)
    return items


requests = st.fixed_dictionaries(
    {},
    optional={
        "role": st.sampled_from(["agent", "hr_assistant", 3]),
        "purpose": st.sampled_from(["support", None]),
        "tenant": st.just("acme"),
    },
)


def _same(found: Evaluation, expected: Evaluation) -> None:
    assert found.refused == expected.refused
    assert found.mode == expected.mode
    assert [tuple(o) for o in found.outcomes] == [tuple(o) for o in expected.outcomes]
    assert [tuple(d) for d in found.decisions] == [tuple(d) for d in expected.decisions]
    assert found.to_json() == expected.to_json()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(bundles(), requests, candidates())
def test_evaluate_equals_the_reference(
    bundle: Bundle, request: dict[str, object], items: list[dict[str, object]]
) -> None:
    _same(evaluate(bundle, request, items, NOW), reference_evaluate(bundle, request, items, NOW))


@st.composite
def shown(draw: st.DrawFn, count: int) -> tuple[list[int], list[int]]:
    """(headings, full) positions, in any order, repeats and overlaps allowed."""
    positions = st.lists(st.integers(0, count - 1), max_size=count) if count else st.just([])
    return draw(positions), draw(positions)


def _disclosed(headings: list[int], full: list[int]) -> dict[int, bool]:
    return {**dict.fromkeys(headings, False), **dict.fromkeys(full, True)}


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(bundles(), requests, candidates(), st.data())
def test_redacting_what_is_shown_equals_the_reference(
    bundle: Bundle, request: dict[str, object], items: list[dict[str, object]], data: st.DataObject
) -> None:
    # Redaction on demand: whatever texts were asked for before, in whatever order, the
    # evaluation's verdicts are those of the whole evaluation and its redaction (decisions,
    # counts, texts) covers exactly the texts it is told were shown. Each `texts` answer is
    # the reference's rewritten texts for what it asked.
    judgement = judge(bundle, request, items, NOW)
    for headings, full in data.draw(st.lists(shown(len(items)), max_size=3)):
        answer = judgement.texts(headings=headings, full=full)
        asked = _disclosed(headings, full)
        expected = reference_evaluate(bundle, request, items, NOW, asked)
        rewritten = {}
        for m, outcome in enumerate(expected.outcomes):
            given = [items[m].get(key) for key in ("heading", "content")]
            heading, content = (value if isinstance(value, str) else "" for value in given)
            texts = (outcome.redacted_heading, outcome.redacted_content)
            if m in asked and (texts[0] != heading or (asked[m] and texts[1] != content)):
                rewritten[m] = texts
        assert answer == rewritten
    headings, full = data.draw(shown(len(items)))
    found = judgement.evaluation(headings=headings, full=full)
    _same(found, reference_evaluate(bundle, request, items, NOW, _disclosed(headings, full)))
    whole = evaluate(bundle, request, items, NOW)
    verdicts = [
        (o.outcome, o.outcome_if_enforced, o.rule_id, o.rule_id_if_enforced) for o in whole.outcomes
    ]
    assert list(zip(*judgement.verdicts, strict=True)) == verdicts


@pytest.mark.parametrize("heavy", [False, True])
@pytest.mark.parametrize("name", ["bench", "default", "strict"])
def test_benchmark_sets_equal_the_reference(name: str, heavy: bool) -> None:
    bundle = bench_bundle() if name == "bench" else BUNDLES[name]
    items = memories(500, heavy=heavy)
    for mode in ("enforce", "log_only"):
        variant = dataclasses.replace(bundle, mode=mode)
        _same(
            evaluate(variant, REQUEST, items, NOW), reference_evaluate(variant, REQUEST, items, NOW)
        )


def test_the_reference_is_not_trivially_equal() -> None:
    # A guard on the guard: the reference does see redactions, caps, denials and errors.
    odd: dict[str, object] = {
        "memory_id": "odd",
        "confidence": "high",
        "content": "mail ann@example.com",
    }
    items = [*memories(200, heavy=True), odd]
    found = reference_evaluate(BUNDLES["mixed"], {"purpose": "x"}, items, NOW)
    outcomes = {o.outcome for o in found.outcomes}
    assert {"admit", "deny", "cap"} <= outcomes
    assert any(o.redactions for o in found.outcomes)
    assert any(d.error for d in found.decisions)


def test_equal_values_of_different_classes_are_not_grouped() -> None:
    # 1 == 1.0 == True and 0 == False: as confidences the first two are valid, the bools not;
    # NaN in a column of floats is invalid too. Grouping by value must not blur any of that.
    bundle = loaded("- " + RULE_POOL[3] + "\n- " + RULE_POOL[10], default_decision="deny").bundle
    values: list[object] = [1, True, 1.0, 1, True, 0, False, 0, float("nan"), 0.9, 0.9, 0.9]
    items = [{"memory_id": f"m{i}", "confidence": value} for i, value in enumerate(values)]
    found = evaluate(bundle, {}, items, NOW)
    _same(found, reference_evaluate(bundle, {}, items, NOW))
    errors = [o.memory_id for o in found.outcomes if o.rule_id == "low"]
    assert errors == ["m1", "m4", "m5", "m6", "m7", "m8"]  # the bools and NaN: E001; 0 < 0.3
    # Without the bools the column is all numbers and is tested at once: NaN must still fail.
    items = [{"memory_id": f"n{i}", "confidence": v} for i, v in enumerate([0.9, NAN, 1, 0.1])]
    found = evaluate(bundle, {}, items, NOW)
    _same(found, reference_evaluate(bundle, {}, items, NOW))
    assert [o.rule_id for o in found.outcomes] == ["sure", "low", "sure", "low"]
    assert [d.error for d in found.decisions if d.memory_id == "n1"] == ["E001", "E001"]


@pytest.mark.parametrize(
    "pattern",
    ["^x", "service$", "(?m)^x", r"\Ax", r"e\z", r"\bcard\b", r"\Bard", "mail\\s", "(?s)a.b", ""],
)
def test_regex_over_a_column_of_distinct_texts(pattern: str) -> None:
    # Distinct texts are tested as a column, first as one joined text: anchors, boundaries and
    # newlines there must not hide a match (or invent one) in any single text.
    texts = ["a plain text", "x-ray at the start", "discard", "the card", "mail\tx", "a\nb"]
    texts += ["about the service", "zzz", "ends with e", "card"]
    items = [
        {"memory_id": f"m{i}", "heading": f"{i} {text}", "content": text, "labels": [text, "y"]}
        for i, text in enumerate(texts)
    ]
    quoted = pattern.replace("'", "''")
    for field in ("content", "heading", "labels"):
        rule = f"- {{id: rx, effect: deny, when: {{field: memory.{field}, op: regex, value: '{quoted}'}}}}"
        bundle = loaded(rule).bundle
        _same(evaluate(bundle, {}, items, NOW), reference_evaluate(bundle, {}, items, NOW))
        _same(
            evaluate(bundle, {}, items[::-1], NOW), reference_evaluate(bundle, {}, items[::-1], NOW)
        )


@pytest.mark.parametrize("mode", ["enforce", "log_only"])
@pytest.mark.parametrize(
    "tokens",
    [
        [100, 100, 100],  # exactly max_tokens, and exactly max_items: nothing capped
        [100, 100, 100, 0],  # one item over max_items
        [250, 100, -30, -30],  # adds up to less than max_tokens, yet the second does not fit
        [100, -30, 350],
        [100, None, 50],  # no valid count: never fits a cap with max_tokens
        [100, True, 50],
    ],
)
def test_caps_that_all_matching_items_fit(mode: str, tokens: list[object]) -> None:
    # A cap all its matching items fit together is left out of the walk: the edges of "fit".
    rules = f"""
    - {{id: cap-tok, effect: cap, mode: {mode}, max_tokens: 300}}
    - {{id: cap-items, effect: cap, max_items: 3, when: {{field: memory.namespace, op: eq, value: eng}}}}
    - {{id: cap-two, effect: cap, max_items: 2, when: {{field: memory.memory_type, op: eq, value: episodic}}}}
    """
    bundle = loaded(rules).bundle
    items = [
        {"memory_id": f"m{i}", "tokens": t, "namespace": "eng", "memory_type": "semantic"}
        for i, t in enumerate(tokens)
    ]
    items += [{"memory_id": "e1", "memory_type": "episodic", "namespace": "ops", "tokens": 1}] * 2
    _same(evaluate(bundle, {}, items, NOW), reference_evaluate(bundle, {}, items, NOW))


def test_memories_may_be_any_mapping() -> None:
    # Plain dicts are read column-wise in C; other mappings (a defaultdict would invent values
    # for missing keys if indexed) must be read with .get, and give the same evaluation.
    bundle = BUNDLES["mixed"]
    items = memories(40, heavy=True)
    del items[3]["labels"], items[5]["expires_at"]
    expected = evaluate(bundle, REQUEST, items, NOW)
    for wrap in (types.MappingProxyType, lambda item: collections.defaultdict(lambda: "x", item)):
        _same(evaluate(bundle, REQUEST, [wrap(item) for item in items], NOW), expected)
