"""Redaction on demand: `judge` decides every verdict, `disclose` redacts what is shown.

The equivalence with the reference for any sequence of disclosures is property-tested in
test_policy_equivalence.py; these pin the API's contract case by case.
"""

from __future__ import annotations

import pytest
from policy_helpers import NOW, REQUEST, bundle

from policies import evaluate, judge

RULES = """
- {id: secret, effect: deny, reason: r, when: {field: memory.labels, op: contains, value: secret}}
- {id: pii, effect: redact, detectors: [email]}
- {id: tokens, effect: redact, mode: log_only, detectors: [api_token]}
"""
MAIL = "write to ann@example.com"


def _memories() -> list[dict[str, object]]:
    return [
        {"memory_id": "a", "heading": f"A {MAIL}", "content": f"a: {MAIL}", "labels": []},
        {"memory_id": "b", "heading": "B", "content": f"b: {MAIL}", "labels": []},
        {"memory_id": "c", "heading": f"C {MAIL}", "content": MAIL, "labels": ["secret"]},
        {"memory_id": "d", "heading": "D", "content": "nothing to hide", "labels": []},
    ]


def test_disclose_returns_the_rewritten_texts_only() -> None:
    judgement = judge(bundle(RULES), REQUEST, _memories(), NOW)
    shown = judgement.disclose(headings=[0, 1, 3], full=[1])
    # a: heading rewritten, content not disclosed (empty); b: content rewritten; d: unchanged.
    assert shown == {
        0: ("A write to [redacted:email]", ""),
        1: ("B", "b: write to [redacted:email]"),
    }


def test_redaction_speaks_of_the_disclosed_texts_alone() -> None:
    judgement = judge(bundle(RULES), REQUEST, _memories(), NOW)
    judgement.disclose(headings=[0], full=[1])
    found = judgement.evaluation()
    by_id = {o.memory_id: o for o in found.outcomes}
    assert [tuple(r) for r in by_id["a"].redactions] == [("heading", "email", 1)]
    assert [tuple(r) for r in by_id["b"].redactions] == [("content", "email", 1)]
    # Texts never disclosed are empty, never handed out unredacted.
    assert (by_id["a"].redacted_content, by_id["d"].redacted_heading) == ("", "")
    assert (by_id["d"].redactions, by_id["d"].outcome) == ((), "admit")
    redacted = [(d.memory_id, d.rule_id) for d in found.decisions if d.effect == "redact"]
    assert redacted == [("a", "pii"), ("b", "pii")]
    # Verdicts do not wait for disclosure: the denied memory is denied, with its decision.
    assert (by_id["c"].outcome, by_id["c"].rule_id) == ("deny", "secret")
    assert [(d.memory_id, d.rule_id) for d in found.decisions if d.effect == "deny"] == [
        ("c", "secret")
    ]


def test_disclosing_more_of_a_memory_redacts_it_afresh() -> None:
    judgement = judge(bundle(RULES), REQUEST, _memories(), NOW)
    judgement.disclose(headings=[0])
    assert judgement.disclose(full=[0]) == {
        0: ("A write to [redacted:email]", "a: write to [redacted:email]")
    }
    # Asking for less afterwards takes nothing back, and counts are not doubled.
    assert judgement.disclose(headings=[0]) == {0: ("A write to [redacted:email]", "")}
    (outcome,) = [o for o in judgement.evaluation().outcomes if o.memory_id == "a"]
    assert [tuple(r) for r in outcome.redactions] == [
        ("content", "email", 1),
        ("heading", "email", 1),
    ]
    assert outcome.redacted_content == "a: write to [redacted:email]"


def test_disclosing_everything_is_evaluate() -> None:
    judgement = judge(bundle(RULES), REQUEST, _memories(), NOW)
    judgement.disclose(headings=[3, 2], full=[1])
    judgement.disclose_all()
    assert judgement.evaluation() == evaluate(bundle(RULES), REQUEST, _memories(), NOW)


def test_positions_out_of_range_are_refused() -> None:
    judgement = judge(bundle(RULES), REQUEST, _memories(), NOW)
    for bad in ([4], [-1]):
        with pytest.raises(IndexError):
            judgement.disclose(full=bad)
    assert judgement.disclose() == {}


def test_a_refused_request_discloses_nothing_rewritten() -> None:
    rules = (
        RULES
        + "- {id: need, effect: require, reason: r, when: {field: request.purpose, op: eq, value: audit}}\n"
    )
    judgement = judge(bundle(rules), REQUEST, _memories(), NOW)
    assert judgement.refused is not None
    assert judgement.disclose(full=[0, 1]) == {}
    found = judgement.evaluation()
    assert {o.outcome for o in found.outcomes} == {"deny"}
    assert [o.redacted_heading for o in found.outcomes] == [f"A {MAIL}", "B", "", ""]
