"""Redaction on demand: `judge` decides every verdict; `texts` gives what may be shown, redacted,
and `evaluation` records the redaction of what was shown.

The equivalence with the reference, whatever was asked for before, is property-tested in
test_policy_equivalence.py; these pin the API's contract case by case.
"""

from __future__ import annotations

import pytest

from policies import evaluate, judge
from tests.policies.policy_helpers import NOW, REQUEST, bundle

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


def test_texts_are_the_rewritten_ones_only() -> None:
    judgement = judge(bundle(RULES), REQUEST, _memories(), NOW)
    shown = judgement.texts(headings=[0, 1, 3], full=[1])
    # a: heading rewritten, content not asked for (empty); b: content rewritten; d: unchanged.
    assert shown == {
        0: ("A write to [redacted:email]", ""),
        1: ("B", "b: write to [redacted:email]"),
    }
    # Asking records nothing: an evaluation of nothing shown has no redaction decision.
    assert [d for d in judgement.evaluation().decisions if d.effect == "redact"] == []


def test_redaction_speaks_of_the_texts_shown_alone() -> None:
    judgement = judge(bundle(RULES), REQUEST, _memories(), NOW)
    judgement.texts(headings=[0, 1, 3], full=[0, 1])  # what the layout may use
    found = judgement.evaluation(headings=[0], full=[1])  # what it did show
    by_id = {o.memory_id: o for o in found.outcomes}
    assert [tuple(r) for r in by_id["a"].redactions] == [("heading", "email", 1)]
    assert [tuple(r) for r in by_id["b"].redactions] == [("content", "email", 1)]
    # Texts not shown are empty, never handed out unredacted.
    assert (by_id["a"].redacted_content, by_id["d"].redacted_heading) == ("", "")
    assert (by_id["d"].redactions, by_id["d"].outcome) == ((), "admit")
    redacted = [(d.memory_id, d.rule_id) for d in found.decisions if d.effect == "redact"]
    assert redacted == [("a", "pii"), ("b", "pii")]
    # Verdicts do not wait for redaction: the denied memory is denied, with its decision.
    assert (by_id["c"].outcome, by_id["c"].rule_id) == ("deny", "secret")
    assert [(d.memory_id, d.rule_id) for d in found.decisions if d.effect == "deny"] == [
        ("c", "secret")
    ]


def test_each_text_is_redacted_once_whatever_is_asked_again() -> None:
    judgement = judge(bundle(RULES), REQUEST, _memories(), NOW)
    assert judgement.texts(headings=[0]) == {0: ("A write to [redacted:email]", "")}
    both = {0: ("A write to [redacted:email]", "a: write to [redacted:email]")}
    assert judgement.texts(full=[0]) == both
    assert judgement.texts(headings=[0], full=[0]) == both  # in both: in full
    assert judgement.texts(headings=[0]) == {0: ("A write to [redacted:email]", "")}
    (outcome,) = [o for o in judgement.evaluation(full=[0]).outcomes if o.memory_id == "a"]
    assert [tuple(r) for r in outcome.redactions] == [
        ("content", "email", 1),
        ("heading", "email", 1),
    ]
    assert outcome.redacted_content == "a: write to [redacted:email]"


def test_showing_everything_is_evaluate() -> None:
    judgement = judge(bundle(RULES), REQUEST, _memories(), NOW)
    judgement.texts(headings=[3, 2], full=[1])
    found = judgement.evaluation(headings=[0, 1], full=range(4))
    assert found == evaluate(bundle(RULES), REQUEST, _memories(), NOW)


def test_positions_out_of_range_are_refused() -> None:
    judgement = judge(bundle(RULES), REQUEST, _memories(), NOW)
    for bad in ([4], [-1]):
        with pytest.raises(IndexError):
            judgement.texts(full=bad)
        with pytest.raises(IndexError):
            judgement.evaluation(headings=bad)
    assert judgement.texts() == {}


def test_a_refused_request_rewrites_nothing() -> None:
    rules = RULES + (
        "- {id: need, effect: require, reason: r,"
        " when: {field: request.purpose, op: eq, value: audit}}\n"
    )
    judgement = judge(bundle(rules), REQUEST, _memories(), NOW)
    assert judgement.refused is not None
    assert judgement.texts(full=[0, 1]) == {}
    found = judgement.evaluation(headings=[1], full=[0])
    assert {o.outcome for o in found.outcomes} == {"deny"}
    assert [o.redacted_heading for o in found.outcomes] == [f"A {MAIL}", "B", "", ""]
    assert [o.redacted_content for o in found.outcomes] == [f"a: {MAIL}", "", "", ""]


def test_a_policy_that_rewrites_nothing_in_force_shows_texts_as_stored() -> None:
    """Only an enforced redact rule rewrites what is shown: under a log-only one (or none) no
    text is rewritten, so none is redacted to show it; the evaluation still records what the
    rule would have redacted, as before."""
    log_only = "- {id: pii, effect: redact, mode: log_only, detectors: [email]}\n"
    for rules, rewrites in ((RULES, True), (log_only, False), ("", False)):
        judgement = judge(bundle(rules), REQUEST, _memories(), NOW)
        assert judgement.rewrites is rewrites
        assert bool(judgement.texts(full=[0, 1])) is rewrites
    judgement = judge(bundle(log_only), REQUEST, _memories(), NOW)
    assert judgement.texts(full=[0, 1]) == {}
    [decision] = [d for d in judgement.evaluation(full=[0]).decisions if d.effect == "redact"]
    assert decision.rule_id == "pii" and decision.outcome != "applied"
