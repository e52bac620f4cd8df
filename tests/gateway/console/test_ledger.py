"""The ledger of a receipt body: every candidate accounted for, with its reason and rule."""

from __future__ import annotations

from gateway.usecases.audit.ledger import ledger_of, read_loosely, reason_counts, receipt_facts

BODY = {
    "subject": {"agent_id": "a", "key_id": "k", "purpose": "support"},
    "budget": {"budget_tokens": 600, "tokens_used": 58},
    "policy": {
        "mode": "enforce",
        "outcomes": [{"memory_id": "m3", "outcome": "deny", "rule_id": "no-hr"}],
    },
    "candidates": [
        {"memory_id": m, "content_sha256": f"h{m}", "vector_rank": n, "vector_distance": "0.5",
         "lexical_rank": None, "lexical_score": None}
        for n, m in enumerate(["m1", "m2", "m3", "m4", "m5"], start=1)
    ],
    "included": [
        {"memory_id": "m2", "content_sha256": "hm2", "tokens": 30, "score_micros": 1069186,
         "signals_micros": {"rrf": 250000, "lexical": 300000}},
        {"memory_id": "m1", "content_sha256": "hm1", "tokens": 28, "score_micros": 642170,
         "signals_micros": {}},
    ],
    "excluded": [
        {"memory_id": "m3", "reason": "policy_denied", "detail": "rule no-hr"},
        {"memory_id": "m4", "reason": "below_top_k", "detail": "ranked 3"},
    ],
}  # fmt: skip


def test_every_candidate_is_a_row_in_delivered_order_then_excluded_then_unaccounted() -> None:
    rows = ledger_of(read_loosely(BODY))
    assert [(r.memory_id, r.reason) for r in rows] == [
        ("m2", "included"),
        ("m1", "included"),
        ("m3", "policy_denied"),
        ("m4", "below_top_k"),
        ("m5", "unaccounted"),  # named by neither list: shown, never dropped
    ]
    assert rows[0].signals_micros == {"lexical": 300000, "rrf": 250000}
    assert rows[2].rule_id == "no-hr" and rows[2].content_sha256 == "hm3"
    assert rows[3].vector_rank == 4 and rows[3].score_micros is None
    assert reason_counts(rows) == [
        ("included", 2),
        ("below_top_k", 1),
        ("policy_denied", 1),
        ("unaccounted", 1),
    ]


def test_facts_of_a_body_and_of_one_of_another_shape() -> None:
    facts = receipt_facts(read_loosely(BODY))
    assert (facts.purpose, facts.included, facts.excluded) == ("support", 2, 2)
    assert (facts.tokens_used, facts.budget_tokens, facts.policy_mode) == (58, 600, "enforce")
    odd = receipt_facts(read_loosely({"subject": "not a dict", "included": "x", "budget": []}))
    assert odd.purpose is None and odd.included is None and odd.tokens_used is None
    assert ledger_of(read_loosely({"candidates": [1, "x", {"no": "id"}]})) == []
