"""What an agent gets by naming only a budget, over real HTTP and a real PostgreSQL: a full
tier sized by the budget, an index that points where it stops, a receipt that records both
(no top_k, the profile's cut), and exact replay of it."""

from __future__ import annotations

from typing import Any

from litestar.testing import TestClient

from gateway.core.tokens import load_tokenizer
from gateway.core.versions import ASSEMBLER, DEFAULT_PROFILE
from tests.conftest import Key, KeyFactory
from tests.gateway.test_memories_write import memory

TOKENIZER = load_tokenizer()
TASK = "When does the rollback window for the payments deploy close?"


def _write(client: TestClient[Any], key: Key, count: int) -> None:
    # A namespace whose index cannot fit a 1,000-token bundle's share: a conversation of turns
    # about deploys, a few of them about the payments rollback.
    items = [
        memory(
            namespace="ops",
            heading=f"turn {n}",
            content=(
                f"Turn {n}: the payments deploy rollback window closes {n % 7} hours after it."
                if n % 10 == 0
                else f"Turn {n}: we talked about the weather and lunch plans, day {n}."
            ),
            memory_type="episodic",
            confidence=0.5,
        )
        for n in range(count)
    ]
    for start in range(0, count, 100):
        response = client.post(
            "/v1/memories/batch", json={"items": items[start : start + 100]}, headers=key.headers
        )
        assert response.status_code == 200, response.text


def test_only_a_budget_gets_the_ranking_and_an_index_that_points_beyond_it(
    client: TestClient[Any], agent: Key, make_key: KeyFactory
) -> None:
    _write(client, agent, 160)
    response = client.post(
        "/v1/context", json={"task": TASK, "budget_tokens": 1000}, headers=agent.headers
    )
    assert response.status_code == 200, response.text
    body = response.json()
    included = body["included"]
    # More than the six memories a request without top_k got before, the budget used.
    assert len(included) > 6
    assert TOKENIZER.count(body["bundle"]) == body["tokens_used"] <= 1000
    assert body["tokens_used"] >= 950
    # The index lists what the full tier did not show, and says how to reach the rest.
    entries = set(body["index"]["entries"])
    assert entries and not entries & {i["memory_id"] for i in included}
    assert "more: search for them, or fetch a ref above in full" in body["bundle"]
    # The receipt records the request as made (no top_k), the assembler, the profile's cut.
    auditor = make_key(role="auditor")
    receipt = client.get(f"/v1/receipts/{body['receipt_id']}", headers=auditor.headers)
    record = receipt.json()["body"]
    assert record["request"]["top_k"] is None
    assert record["assembler"]["version"] == ASSEMBLER.version
    profile = record["assembler"]["ranking_profile"]
    assert profile["version"] == DEFAULT_PROFILE.version
    replayed = client.post(
        f"/v1/receipts/{body['receipt_id']}/replay", json={"mode": "exact"}, headers=auditor.headers
    )
    assert replayed.status_code == 200, replayed.text
    assert replayed.json()["identical"] is True
    # An explicit top_k keeps its meaning.
    three = client.post(
        "/v1/context", json={"task": TASK, "budget_tokens": 1000, "top_k": 3}, headers=agent.headers
    ).json()
    assert len(three["included"]) == 3
