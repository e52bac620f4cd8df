"""The same request on the same database recalls the same candidates, however often a pooled
connection has served it: the driver prepares a statement run five times on a connection, and a
generic plan could choose an exact scan where the custom one chose the approximate HNSW index.
Connections plan each recall for its parameters (`HNSW_SETTINGS`). Real HTTP, real PostgreSQL."""

from __future__ import annotations

from typing import Any

import psycopg
from litestar.testing import TestClient

from gateway.store.pool import HNSW_SETTINGS
from tests.conftest import Key, KeyFactory
from tests.gateway.test_memories_write import memory

TASK = "which region hosts the billing replica after the failover drill?"


def test_a_request_recalls_the_same_candidates_every_time(
    client: TestClient[Any], agent: Key, make_key: KeyFactory
) -> None:
    items = [
        memory(
            namespace="ops",
            heading=f"drill note {n}",
            content=f"Drill {n}: the billing replica moved to region {n % 9}; lunch was at {n}.",
        )
        for n in range(300)
    ]
    for start in range(0, 300, 100):
        written = client.post(
            "/v1/memories/batch", json={"items": items[start : start + 100]}, headers=agent.headers
        )
        assert written.status_code == 200, written.text
    auditor = make_key(role="auditor")
    recalled, bundles = set(), set()
    # Past the driver's prepare threshold (5) and the server's generic-plan trial (5 more).
    for _ in range(14):
        body = client.post(
            "/v1/context", json={"task": TASK, "budget_tokens": 1500}, headers=agent.headers
        ).json()
        receipt = client.get(f"/v1/receipts/{body['receipt_id']}", headers=auditor.headers)
        candidates = receipt.json()["body"]["candidates"]
        recalled.add(tuple((c["memory_id"], c.get("vector_rank")) for c in candidates))
        bundles.add(body["bundle_sha256"])
    assert len(recalled) == len(bundles) == 1


def test_pool_connections_plan_every_recall_for_its_parameters(database_url: str) -> None:
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute(HNSW_SETTINGS)
        row = conn.execute("SHOW plan_cache_mode").fetchone()
    assert row is not None and row[0] == "force_custom_plan"
