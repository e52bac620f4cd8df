"""Per-key rate limits and write quotas: token buckets in PostgreSQL, shared by every process."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from litestar import Litestar
from litestar.testing import TestClient

from gateway.http.app import create_app
from gateway.shell.settings import Settings
from gateway.usecases.access.keys import issue_key
from tests.conftest import Key
from tests.gateway.test_memories_write import memory


def limited_key(database_url: str, requests: float | None, writes: float | None) -> Key:
    """An agent key of acme with these limits (None: unlimited)."""
    with psycopg.connect(database_url, autocommit=True) as conn:
        issued = issue_key(
            conn,
            tenant_id="acme",
            role="agent",
            namespaces=["*"],
            agent_id="agent-1",
            requests_per_second=requests,
            writes_per_second=writes,
        )
    return Key(issued.key, issued.key_id, issued.tenant_id)


@pytest.fixture
def second_client(settings: Settings) -> Iterator[TestClient[Litestar]]:
    """Another gateway process on the same database, as a second worker would be."""
    with TestClient(app=create_app(settings)) as test_client:
        yield test_client


def _healthy(response: Any) -> bool:
    return bool(response.status_code == 200)


def test_requests_beyond_the_burst_are_429_across_processes(
    client: TestClient[Any], second_client: TestClient[Any], database_url: str
) -> None:
    key = limited_key(database_url, requests=0.5, writes=None)  # a burst of 1: two seconds of 0.5/s
    ask = {"query": "deploy"}
    first = client.post("/v1/search", json=ask, headers=key.headers)
    assert first.status_code == 200, first.text
    # The other process draws on the same bucket: empty.
    refused = second_client.post("/v1/search", json=ask, headers=key.headers)
    assert refused.status_code == 429, refused.text
    assert refused.headers["content-type"] == "application/problem+json"
    assert refused.headers["retry-after"] == "2"  # one token at 0.5/s, in whole seconds
    problem = refused.json()
    assert problem["code"] == "rate_limited" and "0.5 requests per second" in problem["detail"]
    # A refused request cost nothing and wrote no receipt.
    with psycopg.connect(database_url) as conn:
        receipts = conn.execute("SELECT count(*) FROM receipts").fetchone()
    assert receipts == (1,)


def test_a_bucket_refills_at_its_rate_up_to_its_burst(
    client: TestClient[Any], database_url: str
) -> None:
    key = limited_key(database_url, requests=1, writes=None)  # a burst of 2

    def statuses(n: int) -> list[int]:
        return [client.get(f"/v1/sessions/{'0' * 26}", headers=key.headers).status_code for _ in range(n)]  # fmt: skip

    def wait(seconds: int) -> None:  # as if `seconds` had passed since the last charge
        with psycopg.connect(database_url, autocommit=True) as conn:
            conn.execute(
                "UPDATE rate_buckets SET charged_at = charged_at - make_interval(secs => %s)",
                (seconds,),
            )

    assert statuses(3) == [404, 404, 429]
    wait(1)
    assert statuses(2) == [404, 429]
    wait(60)  # a long pause fills the bucket, no further than its burst
    assert statuses(3) == [404, 404, 429]


def test_writes_have_their_own_quota_counted_per_item(
    client: TestClient[Any], database_url: str
) -> None:
    key = limited_key(database_url, requests=None, writes=5)  # a burst of 10 writes
    batch = {"items": [memory(heading=f"Step {n}") for n in range(10)]}
    written = client.post("/v1/memories/batch", json=batch, headers=key.headers)
    assert written.status_code == 200 and written.json()["written"] == 10, written.text
    refused = client.post("/v1/memories", json=memory(heading="one more"), headers=key.headers)
    assert refused.status_code == 429
    assert refused.json()["code"] == "rate_limited" and "writes" in refused.json()["detail"]
    assert int(refused.headers["retry-after"]) >= 1
    # Reads are not writes: still answered.
    assert client.post("/v1/search", json={"query": "step"}, headers=key.headers).status_code == 200  # fmt: skip
    with psycopg.connect(database_url) as conn:
        assert conn.execute("SELECT count(*) FROM memories").fetchone() == (10,)


def test_a_wrong_secret_does_not_drain_the_owners_bucket(
    client: TestClient[Any], database_url: str
) -> None:
    key = limited_key(database_url, requests=0.5, writes=None)
    forged = Key(key.key[:-4] + "AAAA", key.key_id, key.tenant_id)
    for _ in range(3):
        assert client.post("/v1/search", json={"query": "x"}, headers=forged.headers).status_code == 401  # fmt: skip
    assert client.post("/v1/search", json={"query": "x"}, headers=key.headers).status_code == 200  # fmt: skip


def test_an_unlimited_key_is_never_charged(
    client: TestClient[Any], agent: Key, database_url: str
) -> None:
    unlimited = limited_key(database_url, requests=None, writes=None)
    assert client.post("/v1/search", json={"query": "x"}, headers=unlimited.headers).status_code == 200  # fmt: skip
    assert client.post("/v1/search", json={"query": "x"}, headers=agent.headers).status_code == 200  # fmt: skip
    with psycopg.connect(database_url) as conn:
        rows = conn.execute("SELECT key_id, bucket FROM rate_buckets ORDER BY bucket").fetchall()
    assert rows == [(agent.key_id, "requests")]  # the default-limited key only
