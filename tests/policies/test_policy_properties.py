"""Properties: lint never raises; evaluation is deterministic; log_only predicts enforce exactly."""

from __future__ import annotations

import copy
import dataclasses
import json
from datetime import UTC, datetime, timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from policies import LintIssue, evaluate, lint, load_canonical
from policies.shipped import shipped_bundle
from tests.policies.policy_helpers import NOW, loaded

RULES = """
- {id: need-purpose, effect: require, reason: r, when: {field: request.purpose, op: exists}}
- {id: hr, effect: deny, reason: r, when: {all: [{field: memory.namespace, op: eq, value: hr}, {field: request.role, op: not_in, value: [hr_assistant]}]}}
- {id: secret, effect: deny, reason: r, when: {field: memory.labels, op: contains_any, value: [secret]}}
- {id: unsure, effect: deny, reason: r, mode: log_only, when: {field: memory.confidence, op: lt, value: 0.3}}
- {id: old, effect: deny, reason: r, when: {all: [{field: memory.memory_type, op: eq, value: working}, {field: memory.created_at, op: older_than, value: 7d}]}}
- {id: public, effect: allow, when: {field: memory.namespace, op: eq, value: public}}
- {id: pii, effect: redact, detectors: [email, phone], when: {field: memory.labels, op: contains, value: pii}}
- {id: tokens, effect: redact, mode: log_only, detectors: [api_token, card]}
- {id: cap-ep, effect: cap, max_items: 2, max_tokens: 120, when: {field: memory.memory_type, op: eq, value: episodic}}
- {id: cap-all, effect: cap, max_items: 6}
"""

BUNDLES = {
    "mixed": loaded(RULES).bundle,
    "first-applicable": loaded(RULES, combining="first-applicable", default_decision="deny").bundle,
    "on-error-allow": loaded(RULES, on_error="allow").bundle,
    "strict": shipped_bundle("strict").bundle,
    "default": shipped_bundle("default").bundle,
}

texts = st.sampled_from(
    [
        "",
        "plain text",
        "mail ann@example.com",
        "call +1 415 555 0134",
        "card 4111 1111 1111 1111",
        "key AKIAIOSFODNN7EXAMPLE",
        "ann@example.com and 4111-1111-1111-1111",
    ]
)
maybe = st.one_of  # readability below: a field is a value, None, or a value of the wrong type

memories = st.fixed_dictionaries(
    {"memory_id": st.text("abc", min_size=1, max_size=3)},
    optional={
        "namespace": maybe(
            st.sampled_from(["eng", "hr", "public"]), st.none(), st.just(3), st.just(["hr"])
        ),
        "memory_type": st.sampled_from(["semantic", "episodic", "working", "procedural"]),
        "heading": texts,
        "content": maybe(texts, st.just(b"bytes")),
        "confidence": maybe(st.floats(0, 1), st.none(), st.just("high"), st.just(float("nan"))),
        "labels": maybe(
            st.lists(st.sampled_from(["pii", "secret", "x"]), max_size=3),
            st.just("pii"),
            st.just({"pii": 1}),
            st.just([["nested"]]),
        ),
        "created_at": maybe(
            # st.datetimes takes naive bounds and attaches the zone it is given.
            st.datetimes(datetime(2026, 1, 1), datetime(2026, 12, 31), timezones=st.just(UTC)),  # noqa: DTZ001
            st.just(datetime(2026, 1, 1)),  # noqa: DTZ001  naive on purpose: an input error
        ),
        "tokens": maybe(st.integers(0, 200), st.none(), st.just(True)),
    },
)
requests = st.fixed_dictionaries(
    {},
    optional={
        "role": st.sampled_from(["agent", "hr_assistant"]),
        "purpose": st.sampled_from(["support", None]),
        "tenant": st.just("acme"),
    },
)


def _snapshot(bundle_name: str, request: dict[str, object], items: list[dict[str, object]]) -> str:
    evaluation = evaluate(BUNDLES[bundle_name], request, items, NOW)
    texts = [(o.redacted_heading, o.redacted_content) for o in evaluation.outcomes]
    return json.dumps([evaluation.to_json(), texts], sort_keys=True, allow_nan=False)


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(BUNDLES)), requests, st.lists(memories, max_size=12))
def test_evaluate_is_deterministic(
    name: str, request: dict[str, object], items: list[dict[str, object]]
) -> None:
    first = _snapshot(name, request, items)
    # Fresh copies, and dicts built in the reverse key order: no identity or order dependence.
    reordered = [dict(reversed(list(copy.deepcopy(item).items()))) for item in items]
    assert _snapshot(name, dict(reversed(list(request.items()))), reordered) == first


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(BUNDLES)), requests, st.lists(memories, max_size=12))
def test_log_only_changes_nothing_and_predicts_enforce(
    name: str, request: dict[str, object], items: list[dict[str, object]]
) -> None:
    enforced_bundle = BUNDLES[name]
    observed = evaluate(dataclasses.replace(enforced_bundle, mode="log_only"), request, items, NOW)
    assert observed.refused is None
    default = "admit" if enforced_bundle.default_decision == "allow" else "deny"
    for outcome, item in zip(observed.outcomes, items, strict=True):
        assert (outcome.outcome, outcome.rule_id, outcome.redactions) == (default, None, ())
        assert outcome.redacted_heading == (item.get("heading") or "")
        content = item.get("content")
        assert outcome.redacted_content == (content if isinstance(content, str) else "")
    assert all(not d.applied for d in observed.decisions)
    # What log_only says enforcement would do is exactly what the fully enforced bundle does.
    everything = dataclasses.replace(
        enforced_bundle,
        rules=tuple(dataclasses.replace(r, mode="enforce") for r in enforced_bundle.rules),
    )
    enforced = evaluate(everything, request, items, NOW)
    predicted = [
        (o.outcome_if_enforced, o.rule_id_if_enforced, o.redactions_if_enforced)
        for o in observed.outcomes
    ]
    assert predicted == [(o.outcome, o.rule_id, o.redactions) for o in enforced.outcomes]


@settings(max_examples=300)
@given(st.text(st.characters(codec=None, exclude_categories=()), max_size=400))
def test_lint_never_raises_on_text(source: str) -> None:
    issues = lint(source)
    assert all(isinstance(i, LintIssue) and i.line >= 1 and i.col >= 1 for i in issues)


@settings(max_examples=200)
@given(st.binary(max_size=300))
def test_lint_never_raises_on_bytes(source: bytes) -> None:
    assert all(i.line >= 1 and i.col >= 1 for i in lint(source))


keys = st.sampled_from(
    [
        "apiVersion",
        "kind",
        "metadata",
        "spec",
        "rules",
        "id",
        "effect",
        "when",
        "field",
        "op",
        "value",
        "all",
        "not",
        "mode",
    ]
)
scalars = st.one_of(
    st.sampled_from(
        ["ctxgw/v1", "PolicyBundle", "deny", "allow", "eq", "memory.namespace", "hr", "no", "1:30"]
    ),
    st.integers(-5, 5),
    st.none(),
)
documents = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(keys, inner, max_size=4)),
    max_leaves=25,
)


@settings(max_examples=200)
@given(documents)
def test_lint_never_raises_on_structured_nonsense(document: object) -> None:
    assert isinstance(lint(json.dumps(document)), tuple)


@settings(max_examples=60)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["deny", "allow", "redact", "cap"]),
            st.sampled_from(
                ["memory.namespace", "memory.confidence", "memory.created_at", "memory.labels"]
            ),
            st.sampled_from(["enforce", "log_only"]),
        ),
        max_size=6,
    )
)
def test_canonical_round_trip_of_generated_bundles(specs: list[tuple[str, str, str]]) -> None:
    conditions = {
        "memory.namespace": "{field: memory.namespace, op: in, value: [b, a]}",
        "memory.confidence": "{field: memory.confidence, op: gte, value: 0.125}",
        "memory.created_at": "{not: {field: memory.created_at, op: newer_than, value: 36h}}",
        "memory.labels": "{any: [{field: memory.labels, op: contains, value: x}, {field: memory.labels, op: missing}]}",
    }
    extra = {
        "deny": ", reason: r",
        "allow": "",
        "redact": ", detectors: [phone, email]",
        "cap": ", max_items: 2",
    }
    rules = "\n".join(
        f"- {{id: r{i}, effect: {effect}, mode: {mode}, when: {conditions[field]}{extra[effect]}}}"
        for i, (effect, field, mode) in enumerate(specs)
    )
    bundle = loaded(rules)
    assert load_canonical(bundle.canonical) == bundle.bundle
    assert loaded(rules.replace("[b, a]", "[a, b]")).digest == bundle.digest


def test_now_moves_time_conditions_only() -> None:
    bundle = loaded(
        "- {id: old, effect: deny, reason: r, when: {field: memory.created_at, op: older_than, value: 1d}}"
    ).bundle
    item = {"memory_id": "m", "created_at": NOW - timedelta(hours=12)}
    assert evaluate(bundle, {}, [item], NOW).outcomes[0].outcome == "admit"
    assert evaluate(bundle, {}, [item], NOW + timedelta(days=1)).outcomes[0].outcome == "deny"


anything = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),
    st.text(max_size=30),
    st.binary(max_size=10),
    st.lists(st.one_of(st.text(max_size=5), st.integers()), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
    st.datetimes(),
    st.datetimes(timezones=st.just(UTC)),
)
FIELD_NAMES = [
    "namespace", "memory_type", "heading", "content", "confidence", "labels",
    "source_type", "source_ref", "created_at", "expires_at", "tokens",
]  # fmt: skip


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(sorted(BUNDLES)),
    st.dictionaries(
        st.sampled_from(["role", "purpose", "namespaces", "budget_tokens", "tenant"]), anything
    ),
    st.lists(st.dictionaries(st.sampled_from(FIELD_NAMES), anything), max_size=5),
)
def test_evaluate_never_raises_on_odd_values(
    name: str, request: dict[str, object], items: list[dict[str, object]]
) -> None:
    memories_ = [{**item, "memory_id": f"m{i}"} for i, item in enumerate(items)]
    evaluation = evaluate(BUNDLES[name], request, memories_, NOW)
    json.dumps(evaluation.to_json(), allow_nan=False)
    assert [o.memory_id for o in evaluation.outcomes] == [m["memory_id"] for m in memories_]
