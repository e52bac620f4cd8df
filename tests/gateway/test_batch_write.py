"""Batch writes in bulk: per-item answers as if each item were its own request, in order (in-batch
idempotent retries and conflicts, supersedes between plain items, a failed item leaving nothing),
and database round trips that do not grow with the batch. Real HTTP, real PostgreSQL."""

from __future__ import annotations

import asyncio
from typing import Any

import psycopg
from litestar.testing import TestClient

from bench.roundtrips import count_round_trips
from tests.conftest import Key
from tests.gateway.test_memories_write import memory, write


def test_a_mixed_batch_answers_each_item_in_order(
    client: TestClient[Any], agent: Key, database_url: str
) -> None:
    old = write(client, agent, heading="old runbook").json()["memory_id"]
    earlier = write(client, agent, heading="keyed", idempotency_key="k-earlier").json()
    items = [
        memory(heading="a", idempotency_key="k-a"),
        memory(heading="keyed", idempotency_key="k-earlier"),  # retry of an earlier request
        memory(heading="new runbook", supersedes=old),
        memory(heading="a", idempotency_key="k-a"),  # retry of item 0, same content
        memory(heading="not a", idempotency_key="k-a"),  # the key, other content
        memory(heading="b", supersedes="01J00000000000000000000000"),  # unknown
        memory(heading="c", idempotency_key="k-c"),
    ]
    response = client.post("/v1/memories/batch", json={"items": items}, headers=agent.headers)
    assert response.status_code == 200, response.text
    body = response.json()["items"]
    assert [i["status"] for i in body] == [201, 200, 201, 200, 409, 404, 201]
    assert body[1]["memory_id"] == earlier["memory_id"]
    assert body[3]["memory_id"] == body[0]["memory_id"]
    assert body[2]["supersedes"] == old
    assert body[4]["code"] == "idempotency_conflict"
    with psycopg.connect(database_url) as conn:
        rows = conn.execute(
            "SELECT heading, superseded_by, deleted_at IS NOT NULL FROM memories"
            " ORDER BY created_at, memory_id"
        ).fetchall()
    assert [r[0] for r in rows] == ["old runbook", "keyed", "a", "new runbook", "c"]
    assert rows[0][1] == body[2]["memory_id"] and rows[0][2]  # retired by its successor
    ids = [i["memory_id"] for i in body if i["status"] == 201]
    assert ids == sorted(ids)  # written in item order


def test_round_trips_of_a_batch_do_not_grow_with_it(
    client: TestClient[Any], agent: Key, app_database_url: str
) -> None:
    def batch(size: int, tag: str) -> dict[str, Any]:
        return {
            "items": [
                memory(heading=f"{tag} {n}", idempotency_key=f"{tag}-{n}") for n in range(size)
            ]
        }

    requests = [("/v1/memories/batch", batch(2, "small")), ("/v1/memories/batch", batch(100, "big"))]  # fmt: skip
    small, big = asyncio.run(count_round_trips(app_database_url, agent.key, requests, warmup=0))
    # BEGIN, the key, the keys' earlier writes, the insert, COMMIT; a large pipeline may be read
    # while it is still being sent (a full socket buffer), which the trace shows as one more
    # turn. Row by row, 100 items took three trips each.
    assert small["round_trips"] <= 6
    assert big["round_trips"] <= small["round_trips"] + 2
