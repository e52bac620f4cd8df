"""Evaluation: stages, combining algorithms, modes, on_error, caps, redaction, decision records."""

from __future__ import annotations

import dataclasses
import json
from datetime import datetime

import pytest

from policies import Decision, evaluate
from tests.policies.policy_helpers import NOW, REQUEST, bundle, memory

DENY_HR = "- {id: deny-hr, effect: deny, reason: HR only, when: {field: memory.namespace, op: eq, value: hr}}"
ALLOW_HR = "- {id: allow-hr, effect: allow, when: {field: memory.namespace, op: eq, value: hr}}"


def _floats(value: object) -> list[object]:
    if isinstance(value, float):
        return [value]
    if isinstance(value, dict):
        return [f for v in value.values() for f in _floats(v)]
    if isinstance(value, list | tuple):
        return [f for v in value for f in _floats(v)]
    return []


class TestCombining:
    def test_deny_overrides_an_earlier_allow(self) -> None:
        evaluation = evaluate(
            bundle(ALLOW_HR + "\n" + DENY_HR), REQUEST, [memory(namespace="hr")], NOW
        )
        outcome = evaluation.outcomes[0]
        assert (outcome.outcome, outcome.rule_id) == ("deny", "deny-hr")
        assert [d.rule_id for d in evaluation.decisions] == ["allow-hr", "deny-hr"]

    def test_first_applicable_takes_the_first_matching_rule(self) -> None:
        rules = ALLOW_HR + "\n" + DENY_HR
        evaluation = evaluate(
            bundle(rules, combining="first-applicable"), REQUEST, [memory(namespace="hr")], NOW
        )
        assert (evaluation.outcomes[0].outcome, evaluation.outcomes[0].rule_id) == (
            "admit",
            "allow-hr",
        )
        rules = DENY_HR + "\n" + ALLOW_HR
        evaluation = evaluate(
            bundle(rules, combining="first-applicable"), REQUEST, [memory(namespace="hr")], NOW
        )
        assert (evaluation.outcomes[0].outcome, evaluation.outcomes[0].rule_id) == (
            "deny",
            "deny-hr",
        )

    def test_deny_overrides_reports_the_first_allow_when_nothing_denies(self) -> None:
        rules = ALLOW_HR + "\n- {id: allow-all, effect: allow}"
        evaluation = evaluate(
            bundle(rules, default_decision="deny"),
            REQUEST,
            [memory(namespace="hr"), memory("m2")],
            NOW,
        )
        assert [(o.outcome, o.rule_id) for o in evaluation.outcomes] == [
            ("admit", "allow-hr"),
            ("admit", "allow-all"),
        ]

    @pytest.mark.parametrize(("default", "outcome"), [("allow", "admit"), ("deny", "deny")])
    def test_default_decision_when_no_rule_applies(self, default: str, outcome: str) -> None:
        evaluation = evaluate(bundle(DENY_HR, default_decision=default), REQUEST, [memory()], NOW)
        assert (evaluation.outcomes[0].outcome, evaluation.outcomes[0].rule_id) == (outcome, None)
        assert evaluation.decisions == ()


class TestRequestStage:
    RULE = "- {id: need-purpose, effect: require, reason: Declare a purpose, when: {field: request.purpose, op: exists}}"

    def test_unmet_require_refuses_and_denies_everything(self) -> None:
        evaluation = evaluate(
            bundle(self.RULE), {**REQUEST, "purpose": None}, [memory(), memory("m2")], NOW
        )
        assert evaluation.refused is not None
        assert (evaluation.refused.rule_id, evaluation.refused.reason) == (
            "need-purpose",
            "Declare a purpose",
        )
        assert {(o.outcome, o.rule_id) for o in evaluation.outcomes} == {("deny", "need-purpose")}
        (decision,) = evaluation.decisions
        assert (decision.memory_id, decision.outcome, decision.applied) == (None, "refuse", True)

    def test_met_require_is_recorded(self) -> None:
        evaluation = evaluate(bundle(self.RULE), REQUEST, [memory()], NOW)
        assert evaluation.refused is None
        (decision,) = evaluation.decisions
        assert (decision.outcome, decision.outcome_if_enforced) == ("proceed", "proceed")
        assert decision.evidence[0].actual == "support"

    def test_log_only_require_is_recorded_but_does_not_refuse(self) -> None:
        rules = self.RULE.replace("effect: require", "effect: require, mode: log_only")
        evaluation = evaluate(bundle(rules), {**REQUEST, "purpose": None}, [memory()], NOW)
        assert evaluation.refused is None
        assert evaluation.outcomes[0].outcome == "admit"
        assert evaluation.outcomes[0].outcome_if_enforced == "deny"
        assert evaluation.outcomes[0].rule_id_if_enforced == "need-purpose"
        (decision,) = evaluation.decisions
        assert (decision.applied, decision.outcome, decision.outcome_if_enforced) == (
            False,
            "proceed",
            "refuse",
        )

    def test_request_stage_alone_with_no_memories(self) -> None:
        evaluation = evaluate(bundle(self.RULE), {}, [], NOW)
        assert evaluation.refused is not None and evaluation.outcomes == ()


class TestLogOnly:
    RULES = (
        DENY_HR
        + """
- {id: redact, effect: redact, detectors: [email]}
- {id: cap, effect: cap, max_items: 1}"""
    )

    def test_bundle_log_only_changes_nothing_and_records_everything(self) -> None:
        memories = [
            memory("a", namespace="hr"),
            memory("b", content="mail ann@example.com"),
            memory("c"),
        ]
        evaluation = evaluate(bundle(self.RULES, mode="log_only"), REQUEST, memories, NOW)
        assert evaluation.mode == "log_only"
        assert [o.outcome for o in evaluation.outcomes] == ["admit", "admit", "admit"]
        assert [o.outcome_if_enforced for o in evaluation.outcomes] == ["deny", "admit", "cap"]
        assert [o.rule_id_if_enforced for o in evaluation.outcomes] == ["deny-hr", None, "cap"]
        b = evaluation.outcomes[1]
        assert b.redacted_content == "mail ann@example.com"
        assert b.redactions == ()
        assert [tuple(r) for r in b.redactions_if_enforced] == [("content", "email", 1)]
        assert all(not d.applied and d.mode == "log_only" for d in evaluation.decisions)
        assert [
            (d.rule_id, d.memory_id, d.outcome, d.outcome_if_enforced) for d in evaluation.decisions
        ] == [
            ("deny-hr", "a", "admit", "deny"),
            ("redact", "b", "unchanged", "redact"),
            ("cap", "c", "admit", "cap"),
        ]

    def test_rule_log_only_inside_an_enforced_bundle(self) -> None:
        rules = (
            DENY_HR.replace("effect: deny", "effect: deny, mode: log_only")
            + "\n- {id: deny-big, effect: deny, reason: r, when: {field: memory.tokens, op: gt, value: 100}}"
        )
        evaluation = evaluate(
            bundle(rules), REQUEST, [memory("a", namespace="hr"), memory("b", tokens=500)], NOW
        )
        assert [(o.outcome, o.outcome_if_enforced) for o in evaluation.outcomes] == [
            ("admit", "deny"),
            ("deny", "deny"),
        ]
        assert [(d.rule_id, d.mode, d.applied) for d in evaluation.decisions] == [
            ("deny-hr", "log_only", False),
            ("deny-big", "enforce", True),
        ]

    def test_activation_mode_via_replace(self) -> None:
        # The gateway applies an activation's mode with dataclasses.replace.
        enforced = bundle(DENY_HR)
        relaxed = dataclasses.replace(enforced, mode="log_only")
        evaluation = evaluate(relaxed, REQUEST, [memory(namespace="hr")], NOW)
        assert (evaluation.outcomes[0].outcome, evaluation.outcomes[0].outcome_if_enforced) == (
            "admit",
            "deny",
        )


class TestOnError:
    RULE = "- {id: conf, effect: allow, when: {field: memory.confidence, op: gt, value: 0.5}}"

    def test_error_denies_by_default(self) -> None:
        evaluation = evaluate(bundle(self.RULE), REQUEST, [memory(confidence="high")], NOW)
        assert (evaluation.outcomes[0].outcome, evaluation.outcomes[0].rule_id) == ("deny", "conf")
        assert evaluation.decisions[0].error == "E001"

    def test_error_skips_the_rule_under_on_error_allow(self) -> None:
        rules = self.RULE + "\n" + DENY_HR
        evaluation = evaluate(
            bundle(rules, on_error="allow"), REQUEST, [memory(confidence="high")], NOW
        )
        assert (evaluation.outcomes[0].outcome, evaluation.outcomes[0].rule_id) == ("admit", None)
        assert [(d.rule_id, d.error, d.outcome) for d in evaluation.decisions] == [
            ("conf", "E001", "admit")
        ]

    def test_error_denies_even_under_deny_overrides_with_an_allow(self) -> None:
        rules = "- {id: everyone, effect: allow}\n" + self.RULE
        evaluation = evaluate(
            bundle(rules, combining="first-applicable"),
            REQUEST,
            [memory(confidence=None, tokens="x")],
            NOW,
        )
        # confidence missing: allow does not apply (unknown); no error since tokens is not read.
        assert evaluation.outcomes[0].outcome == "admit"
        evaluation = evaluate(
            bundle(rules, combining="first-applicable"), REQUEST, [memory(confidence="x")], NOW
        )
        assert evaluation.outcomes[0].outcome == "deny"

    def test_error_in_a_log_only_rule_only_affects_the_if_enforced_outcome(self) -> None:
        rules = self.RULE.replace("effect: allow", "effect: allow, mode: log_only")
        evaluation = evaluate(bundle(rules), REQUEST, [memory(confidence="x")], NOW)
        outcome = evaluation.outcomes[0]
        assert (outcome.outcome, outcome.outcome_if_enforced) == ("admit", "deny")

    def test_non_string_text_fails_a_redact_rule(self) -> None:
        rules = "- {id: redact, effect: redact, detectors: [email]}"
        evaluation = evaluate(bundle(rules), REQUEST, [memory(content=b"bytes")], NOW)
        assert (evaluation.outcomes[0].outcome, evaluation.outcomes[0].rule_id) == (
            "deny",
            "redact",
        )


class TestCaps:
    def test_max_items_keeps_the_first_in_rank_order(self) -> None:
        rules = "- {id: cap-ep, effect: cap, max_items: 2, when: {field: memory.memory_type, op: eq, value: episodic}}"
        memories = [
            memory(f"m{i}", memory_type="episodic" if i != 1 else "semantic") for i in range(5)
        ]
        evaluation = evaluate(bundle(rules), REQUEST, memories, NOW)
        assert [o.outcome for o in evaluation.outcomes] == ["admit", "admit", "admit", "cap", "cap"]
        assert [d.memory_id for d in evaluation.decisions] == ["m3", "m4"]

    def test_max_tokens_skips_what_does_not_fit(self) -> None:
        rules = "- {id: cap-t, effect: cap, max_tokens: 100}"
        memories = [
            memory("a", tokens=60),
            memory("b", tokens=50),
            memory("c", tokens=40),
            memory("d", tokens=1),
        ]
        evaluation = evaluate(bundle(rules), REQUEST, memories, NOW)
        assert [o.outcome for o in evaluation.outcomes] == ["admit", "cap", "admit", "cap"]

    def test_missing_tokens_do_not_fit_a_token_cap(self) -> None:
        evaluation = evaluate(
            bundle("- {id: cap-t, effect: cap, max_tokens: 100}"),
            REQUEST,
            [memory(tokens=None)],
            NOW,
        )
        assert evaluation.outcomes[0].outcome == "cap"

    def test_denied_memories_do_not_count_against_a_cap(self) -> None:
        rules = DENY_HR + "\n- {id: cap, effect: cap, max_items: 1}"
        evaluation = evaluate(
            bundle(rules), REQUEST, [memory("a", namespace="hr"), memory("b"), memory("c")], NOW
        )
        assert [o.outcome for o in evaluation.outcomes] == ["deny", "admit", "cap"]

    def test_a_memory_must_fit_every_cap_and_consumes_none_when_capped(self) -> None:
        rules = """
- {id: small, effect: cap, max_tokens: 30}
- {id: few, effect: cap, max_items: 2}"""
        memories = [
            memory("a", tokens=20),
            memory("b", tokens=20),
            memory("c", tokens=5),
            memory("d", tokens=5),
        ]
        evaluation = evaluate(bundle(rules), REQUEST, memories, NOW)
        assert [(o.outcome, o.rule_id) for o in evaluation.outcomes] == [
            ("admit", None),
            ("cap", "small"),
            ("admit", None),
            ("cap", "few"),
        ]

    def test_log_only_cap_counts_separately(self) -> None:
        rules = (
            DENY_HR.replace("effect: deny", "effect: deny, mode: log_only")
            + "\n- {id: cap, effect: cap, max_items: 1}"
        )
        evaluation = evaluate(
            bundle(rules), REQUEST, [memory("a", namespace="hr"), memory("b")], NOW
        )
        # Actually a is admitted and takes the one slot; if enforced, a is denied and b fits.
        assert [(o.outcome, o.outcome_if_enforced) for o in evaluation.outcomes] == [
            ("admit", "deny"),
            ("cap", "admit"),
        ]
        cap = evaluation.decisions[-1]
        assert (cap.rule_id, cap.memory_id, cap.outcome, cap.outcome_if_enforced) == (
            "cap",
            "b",
            "cap",
            "admit",
        )


class TestRedaction:
    def test_redacts_heading_and_content_and_names_the_detector(self) -> None:
        rules = "- {id: pii, effect: redact, detectors: [email, phone], when: {field: memory.labels, op: contains, value: pii}}"
        memories = [
            memory(
                "a",
                heading="Ann <ann@example.com>",
                content="Call +1 415 555 0134 or ann@example.com",
                labels=["pii"],
            ),
            memory("b", heading="Bob <bob@example.com>", labels=[]),
        ]
        evaluation = evaluate(bundle(rules), REQUEST, memories, NOW)
        a, b = evaluation.outcomes
        assert a.redacted_heading == "Ann <[redacted:email]>"
        assert a.redacted_content == "Call [redacted:phone] or [redacted:email]"
        assert [tuple(r) for r in a.redactions] == [
            ("content", "email", 1),
            ("content", "phone", 1),
            ("heading", "email", 1),
        ]
        assert a.redactions == a.redactions_if_enforced
        assert b.redacted_heading == "Bob <bob@example.com>"
        (decision,) = evaluation.decisions
        assert decision.to_json()["redactions"] == [
            {"count": 1, "detector": "email", "field": "content"},
            {"count": 1, "detector": "phone", "field": "content"},
            {"count": 1, "detector": "email", "field": "heading"},
        ]
        assert "ann@example.com" not in json.dumps(evaluation.to_json())

    def test_redact_rules_apply_in_order_and_do_not_double_count(self) -> None:
        rules = """
- {id: emails, effect: redact, detectors: [email]}
- {id: everything, effect: redact, detectors: [email, phone, card]}"""
        evaluation = evaluate(
            bundle(rules), REQUEST, [memory(content="x@y.io, 4111-1111-1111-1111")], NOW
        )
        assert evaluation.outcomes[0].redacted_content == "[redacted:email], [redacted:card]"
        assert [(d.rule_id, [tuple(r) for r in d.redactions]) for d in evaluation.decisions] == [
            ("emails", [("content", "email", 1)]),
            ("everything", [("content", "card", 1)]),
        ]

    def test_no_decision_when_nothing_is_found(self) -> None:
        evaluation = evaluate(
            bundle("- {id: pii, effect: redact, detectors: [email]}"), REQUEST, [memory()], NOW
        )
        assert evaluation.decisions == ()
        assert evaluation.outcomes[0].redacted_content == memory()["content"]

    def test_denied_memories_are_not_redacted(self) -> None:
        rules = DENY_HR + "\n- {id: pii, effect: redact, detectors: [email]}"
        evaluation = evaluate(
            bundle(rules), REQUEST, [memory(namespace="hr", content="a@b.io")], NOW
        )
        assert evaluation.outcomes[0].redacted_content == "a@b.io"
        assert [d.rule_id for d in evaluation.decisions] == ["deny-hr"]


class TestDecisionRecords:
    def test_json_has_no_floats_and_renders_times_in_utc(self) -> None:
        rules = """
- {id: low, effect: deny, reason: unsure, when: {field: memory.confidence, op: lt, value: 0.5}}
- {id: old, effect: deny, reason: stale, when: {field: memory.created_at, op: older_than, value: 30d}}"""
        created = datetime.fromisoformat("2026-01-02T03:04:05.120000+02:00")
        evaluation = evaluate(
            bundle(rules), REQUEST, [memory(confidence=0.25, created_at=created)], NOW
        )
        document = evaluation.to_json()
        assert _floats(document) == []
        low, old = (d.to_json() for d in evaluation.decisions)
        assert low["evidence"] == [
            {
                "actual": "0.25",
                "expected": "0.5",
                "field": "memory.confidence",
                "op": "lt",
                "result": "true",
            }
        ]
        old_evidence = old["evidence"]
        assert isinstance(old_evidence, list) and isinstance(old_evidence[0], dict)
        assert old_evidence[0]["actual"] == "2026-01-02T01:04:05.12Z"
        assert old_evidence[0]["expected"] == "30d"
        assert list(low) == sorted(low)
        json.dumps(document, allow_nan=False)

    def test_sensitive_text_is_summarized_in_evidence(self) -> None:
        rules = "- {id: secret, effect: deny, reason: r, when: {field: memory.content, op: contains, value: password}}"
        evaluation = evaluate(
            bundle(rules), REQUEST, [memory(content="the password is hunter2")], NOW
        )
        assert evaluation.decisions[0].evidence[0].actual == "<23 chars>"

    def test_long_values_are_cut_in_evidence(self) -> None:
        rules = "- {id: src, effect: deny, reason: r, when: {field: memory.source_ref, op: glob, value: 'x*'}}"
        evaluation = evaluate(bundle(rules), REQUEST, [memory(source_ref="x" * 1000)], NOW)
        actual = evaluation.decisions[0].evidence[0].actual
        assert isinstance(actual, str) and actual.endswith("…(+800 chars)") and len(actual) < 220

    def test_decision_fields(self) -> None:
        evaluation = evaluate(bundle(DENY_HR), REQUEST, [memory(namespace="hr")], NOW)
        decision: Decision = evaluation.decisions[0]
        assert decision.to_json() == {
            "applied": True,
            "effect": "deny",
            "error": None,
            "evidence": [
                {
                    "actual": "hr",
                    "expected": "hr",
                    "field": "memory.namespace",
                    "op": "eq",
                    "result": "true",
                }
            ],
            "memory_id": "m1",
            "mode": "enforce",
            "outcome": "deny",
            "outcome_if_enforced": "deny",
            "reason": "HR only",
            "redactions": [],
            "rule_id": "deny-hr",
            "stage": "admit",
        }

    def test_outcomes_keep_input_order_and_decisions_follow_it(self) -> None:
        memories = [memory(f"m{i}", namespace="hr" if i % 2 else "eng") for i in range(6)]
        evaluation = evaluate(bundle(DENY_HR), REQUEST, memories, NOW)
        assert [o.memory_id for o in evaluation.outcomes] == [f"m{i}" for i in range(6)]
        assert [d.memory_id for d in evaluation.decisions] == ["m1", "m3", "m5"]


class TestMisuse:
    def test_naive_now_is_rejected(self) -> None:
        with pytest.raises(ValueError, match="timezone-aware"):
            evaluate(bundle(DENY_HR), REQUEST, [memory()], NOW.replace(tzinfo=None))

    def test_memory_without_id_is_rejected(self) -> None:
        with pytest.raises(TypeError, match="memory_id"):
            evaluate(bundle(DENY_HR), REQUEST, [{"namespace": "hr"}], NOW)
