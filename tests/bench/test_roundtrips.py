"""The disclosure path's database round trips, counted on the wire (bench.roundtrips): a
regression guard, since each trip costs the network's latency on every request."""

from __future__ import annotations

import asyncio
from typing import Any

from litestar.testing import TestClient

from bench.roundtrips import count_round_trips
from tests.conftest import Key
from tests.gateway.test_memories_write import memory

# On the request's connection the key (a statement committed before the transaction) with BEGIN,
# the policy in force, the candidates (count, index and recall in one statement), COMMIT; on the
# receipt writer's, BEGIN with the log head, then the receipt with COMMIT and the durable
# transaction of its signatures (gateway.usecases.receiptlog.group_commit).
DISCLOSURE_TRIPS = 6


def test_context_and_search_take_six_round_trips(
    client: TestClient[Any], agent: Key, app_database_url: str
) -> None:
    items = [memory(heading=f"Deploy step {n}", content=f"Run step {n} of the deploy.") for n in range(12)]  # fmt: skip
    assert client.post("/v1/memories/batch", json={"items": items}, headers=agent.headers).status_code == 200  # fmt: skip
    requests = [
        ("/v1/context", {"task": "how do I deploy?"}),
        ("/v1/search", {"query": "deploy step"}),
    ]
    tallies = asyncio.run(count_round_trips(app_database_url, agent.key, requests))
    assert [t["round_trips"] for t in tallies] == [DISCLOSURE_TRIPS, DISCLOSURE_TRIPS]
    # Each statement is sent once: no statement is split into a query per memory. The key, its
    # commit, BEGIN and the tenant's entry are one simple query; the rest are executed, the
    # receipt writer's pipelined: BEGIN, the commit that does not wait for the disk, the tenant's
    # entry (migration 0010) and the head's lock in one trip; the append, COMMIT and the durable
    # transaction (BEGIN, the tenant's entry, the signatures, COMMIT) in the next.
    assert all(t["Query"] == 1 and t["Execute"] <= DISCLOSURE_TRIPS + 7 for t in tallies)
