"""Every operator, the combinators' three-valued logic, and fail-closed reading of missing fields."""

from __future__ import annotations

from datetime import timedelta

import pytest

from policies import Evaluation, evaluate
from tests.policies.policy_helpers import NOW, REQUEST, bundle, memory


def _deny_if(condition: str, **memory_fields: object) -> Evaluation:
    rules = f"- {{id: r, effect: deny, reason: r, when: {condition}}}"
    return evaluate(bundle(rules), REQUEST, [memory(**memory_fields)], NOW)


def _applies(condition: str, **memory_fields: object) -> bool:
    return _deny_if(condition, **memory_fields).outcomes[0].outcome == "deny"


OPERATOR_CASES = [
    # (condition, memory fields, deny rule applies?)
    ("{field: memory.namespace, op: eq, value: eng}", {}, True),
    ("{field: memory.namespace, op: eq, value: hr}", {}, False),
    ("{field: memory.namespace, op: ne, value: hr}", {}, True),
    ("{field: memory.namespace, op: ne, value: eng}", {}, False),
    ("{field: memory.namespace, op: in, value: [hr, eng]}", {}, True),
    ("{field: memory.namespace, op: in, value: [hr, legal]}", {}, False),
    ("{field: memory.namespace, op: not_in, value: [hr, legal]}", {}, True),
    ("{field: memory.namespace, op: not_in, value: [eng]}", {}, False),
    ("{field: memory.content, op: contains, value: canary}", {}, True),
    ("{field: memory.content, op: contains, value: Canary}", {}, False),
    ("{field: memory.labels, op: contains, value: pii}", {"labels": ["pii", "x"]}, True),
    ("{field: memory.labels, op: contains, value: pii}", {"labels": ["x"]}, False),
    ("{field: memory.labels, op: contains_any, value: [a, pii]}", {"labels": ["pii"]}, True),
    ("{field: memory.labels, op: contains_any, value: [a, b]}", {"labels": ["pii"]}, False),
    ("{field: memory.content, op: contains_any, value: [zebra, canary]}", {}, True),
    ("{field: memory.labels, op: contains_all, value: [a, b]}", {"labels": ["b", "c", "a"]}, True),
    ("{field: memory.labels, op: contains_all, value: [a, b]}", {"labels": ["a"]}, False),
    ("{field: memory.content, op: contains_all, value: [Roll, canary]}", {}, True),
    ("{field: memory.confidence, op: gt, value: 0.5}", {"confidence": 0.9}, True),
    ("{field: memory.confidence, op: gt, value: 0.9}", {"confidence": 0.9}, False),
    ("{field: memory.confidence, op: gte, value: 0.9}", {"confidence": 0.9}, True),
    ("{field: memory.confidence, op: lt, value: 0.9}", {"confidence": 0.9}, False),
    ("{field: memory.confidence, op: lte, value: 0.9}", {"confidence": 0.9}, True),
    ("{field: memory.confidence, op: lt, value: 1}", {"confidence": 0.5}, True),
    ('{field: memory.confidence, op: lt, value: "0.6"}', {"confidence": 0.5}, True),
    ("{field: memory.confidence, op: eq, value: 1}", {"confidence": 1}, True),
    ("{field: memory.tokens, op: gt, value: 100}", {"tokens": 101}, True),
    ("{field: memory.tokens, op: gte, value: 101}", {"tokens": 100}, False),
    (
        "{field: memory.created_at, op: lt, value: 2026-11-01T00:00:00Z}",
        {"created_at": NOW - timedelta(days=60)},
        True,
    ),
    (
        "{field: memory.created_at, op: gt, value: 2026-11-01T00:00:00Z}",
        {"created_at": NOW - timedelta(days=60)},
        False,
    ),
    (
        '{field: memory.created_at, op: eq, value: "2026-11-29T14:00:00+02:00"}',
        {"created_at": NOW},
        True,
    ),
    ("{field: memory.heading, op: glob, value: 'Deploy*'}", {}, True),
    ("{field: memory.heading, op: glob, value: '*runbook'}", {}, True),
    ("{field: memory.heading, op: glob, value: '*ploy run*'}", {}, True),
    ("{field: memory.heading, op: glob, value: 'Deploy'}", {}, False),
    ("{field: memory.heading, op: glob, value: 'D?ploy*b??k'}", {}, True),
    ("{field: memory.heading, op: glob, value: 'D*y*q'}", {}, False),
    ("{field: memory.heading, op: glob, value: 'Deploy runbook'}", {}, True),
    ("{field: memory.heading, op: glob, value: '[D]eploy*'}", {"heading": "[D]eploy x"}, True),
    ("{field: memory.labels, op: glob, value: 'team-*'}", {"labels": ["x", "team-a"]}, True),
    ("{field: memory.heading, op: regex, value: '(?i)^deploy'}", {}, True),
    ("{field: memory.heading, op: regex, value: 'runbook$'}", {}, True),
    ("{field: memory.heading, op: regex, value: '^runbook'}", {}, False),
    ("{field: memory.labels, op: regex, value: '^pii-'}", {"labels": ["pii-email"]}, True),
    (
        "{field: memory.created_at, op: older_than, value: 30d}",
        {"created_at": NOW - timedelta(days=31)},
        True,
    ),
    (
        "{field: memory.created_at, op: older_than, value: 30d}",
        {"created_at": NOW - timedelta(days=29)},
        False,
    ),
    (
        "{field: memory.created_at, op: newer_than, value: 12h}",
        {"created_at": NOW - timedelta(hours=11)},
        True,
    ),
    (
        "{field: memory.created_at, op: newer_than, value: 90m}",
        {"created_at": NOW - timedelta(hours=2)},
        False,
    ),
    ("{field: memory.expires_at, op: exists}", {"expires_at": NOW}, True),
    ("{field: memory.expires_at, op: exists}", {}, False),
    ("{field: memory.expires_at, op: missing}", {}, True),
    ("{field: memory.expires_at, op: missing}", {"expires_at": NOW}, False),
    ("{field: request.role, op: eq, value: agent}", {}, True),
    ("{field: request.namespaces, op: contains, value: public}", {}, True),
    ("{field: request.budget_tokens, op: lte, value: 4000}", {}, True),
    ("{field: now, op: lt, value: 2027-01-01T00:00:00Z}", {}, True),
    ("{field: now, op: gt, value: 2027-01-01T00:00:00Z}", {}, False),
]


@pytest.mark.parametrize(("condition", "fields", "applies"), OPERATOR_CASES)
def test_operator(condition: str, fields: dict[str, object], applies: bool) -> None:
    assert _applies(condition, **fields) is applies


def test_every_operator_is_covered() -> None:
    from policies.operators import OPERATORS

    used = {case[0].split("op: ")[1].split(",")[0].rstrip("}") for case in OPERATOR_CASES}
    assert used == set(OPERATORS)


def test_float_thresholds_compare_as_floats() -> None:
    # Decimal("0.9") < 0.9 as a float; a threshold must mean what the author wrote.
    assert not _applies("{field: memory.confidence, op: gt, value: 0.9}", confidence=0.9)
    assert _applies("{field: memory.confidence, op: eq, value: 0.3}", confidence=0.1 + 0.2) is False
    assert _applies("{field: memory.confidence, op: eq, value: 0.3}", confidence=0.3)


@pytest.mark.parametrize(
    ("condition", "applies"),
    [
        (
            "{all: [{field: memory.namespace, op: eq, value: eng}, {field: memory.tokens, op: gt, value: 5}]}",
            True,
        ),
        (
            "{all: [{field: memory.namespace, op: eq, value: eng}, {field: memory.tokens, op: gt, value: 50}]}",
            False,
        ),
        (
            "{any: [{field: memory.namespace, op: eq, value: hr}, {field: memory.tokens, op: gt, value: 5}]}",
            True,
        ),
        (
            "{any: [{field: memory.namespace, op: eq, value: hr}, {field: memory.tokens, op: gt, value: 50}]}",
            False,
        ),
        ("{not: {field: memory.namespace, op: eq, value: hr}}", True),
        ("{not: {field: memory.namespace, op: eq, value: eng}}", False),
        (
            "{not: {any: [{field: memory.namespace, op: eq, value: hr}, {not: {field: memory.tokens, op: gt, value: 50}}]}}",
            False,
        ),
        (
            "{all: [{any: [{field: request.role, op: eq, value: agent}, {field: request.role, op: eq, value: x}]}, {field: memory.namespace, op: in, value: [eng]}]}",
            True,
        ),
    ],
)
def test_combinators(condition: str, applies: bool) -> None:
    assert _applies(condition) is applies


MISSING_FIELD = "{field: memory.expires_at, op: lt, value: 2027-01-01T00:00:00Z}"


def test_missing_field_makes_a_deny_rule_apply() -> None:
    evaluation = _deny_if(MISSING_FIELD)
    assert evaluation.outcomes[0].outcome == "deny"
    (decision,) = evaluation.decisions
    assert decision.evidence[0].result == "unknown"
    assert decision.evidence[0].actual is None


def test_missing_field_does_not_make_an_allow_rule_apply() -> None:
    rules = f"- {{id: a, effect: allow, when: {MISSING_FIELD}}}"
    evaluation = evaluate(bundle(rules, default_decision="deny"), REQUEST, [memory()], NOW)
    assert (evaluation.outcomes[0].outcome, evaluation.outcomes[0].rule_id) == ("deny", None)
    assert evaluation.decisions == ()


def test_missing_field_makes_a_require_rule_unmet() -> None:
    rules = (
        "- {id: need, effect: require, reason: r, when: {field: request.purpose, op: ne, value: x}}"
    )
    evaluation = evaluate(bundle(rules), {**REQUEST, "purpose": None}, [memory()], NOW)
    assert evaluation.refused is not None and evaluation.refused.rule_id == "need"


def test_not_of_unknown_is_still_unknown_so_deny_still_applies() -> None:
    # Negation must not turn "we do not know" into "no": that would fail open.
    assert _applies(f"{{not: {MISSING_FIELD}}}")


def test_all_with_a_false_branch_does_not_apply_despite_unknown() -> None:
    # The guard pattern: test presence first, then the value.
    guard = "{field: memory.expires_at, op: exists}"
    assert not _applies(f"{{all: [{guard}, {MISSING_FIELD}]}}")
    assert _applies(f"{{all: [{guard}, {MISSING_FIELD}]}}", expires_at=NOW)


def test_any_with_a_true_branch_applies_despite_unknown() -> None:
    assert _applies(f"{{any: [{MISSING_FIELD}, {{field: memory.namespace, op: eq, value: eng}}]}}")


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("confidence", "high"),
        ("confidence", float("nan")),
        ("confidence", True),
        ("tokens", "10"),
        ("tokens", 1.5),
        ("labels", "pii"),
        ("labels", [1, 2]),
        ("namespace", 7),
        ("created_at", "2026-01-01T00:00:00Z"),
    ],
)
def test_wrong_input_type_is_an_error_that_denies(field: str, value: object) -> None:
    condition = {
        "confidence": "{field: memory.confidence, op: lt, value: 0.5}",
        "tokens": "{field: memory.tokens, op: gt, value: 100}",
        "labels": "{field: memory.labels, op: contains, value: pii}",
        "namespace": "{field: memory.namespace, op: eq, value: hr}",
        "created_at": "{field: memory.created_at, op: older_than, value: 1d}",
    }[field]
    rules = f"- {{id: r, effect: allow, when: {condition}}}"
    evaluation = evaluate(bundle(rules), REQUEST, [memory(**{field: value})], NOW)
    outcome = evaluation.outcomes[0]
    assert (outcome.outcome, outcome.rule_id) == ("deny", "r")
    (decision,) = evaluation.decisions
    assert decision.error == "E001"
    assert decision.outcome == "deny"
    assert decision.evidence[0].result == "error"
    assert decision.evidence[0].actual == "<invalid>"


def test_naive_datetime_in_a_memory_is_an_error() -> None:
    naive = NOW.replace(tzinfo=None)
    assert (
        _deny_if("{field: memory.created_at, op: older_than, value: 1d}", created_at=naive)
        .decisions[0]
        .error
        == "E001"
    )


def test_catastrophic_pattern_runs_in_linear_time() -> None:
    text = "a" * 200_000 + "!"
    assert not _applies("{field: memory.content, op: regex, value: '^(a+)+$'}", content=text)
    assert _applies("{field: memory.content, op: regex, value: '(a+)+!$'}", content=text)
