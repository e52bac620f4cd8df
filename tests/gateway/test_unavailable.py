"""503s: a dependency failed, so the gateway fails closed with `Retry-After`, says what failed in
its own words and logs the upstream's or driver's words without sending them.

The `openai` embedder failing (down, timing out, answering 5xx or garbage) is 503
`embedder_unavailable` for writes and disclosures, writes no receipt, and recovers without a
restart once the server answers again. The database failing is 503 for the readiness probe and
for requests, likewise."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from litestar.testing import TestClient

from gateway.http.app import create_app
from gateway.shell.settings import Settings
from tests.conftest import KeyFactory
from tests.gateway.embeddings_server import (
    UPSTREAM_WORDS,
    EmbeddingsServer,
    embedding_settings,
    embeddings_server,
)
from tests.gateway.test_memories_write import memory

DIM = 8
# How each failure is described to the client: what failed, never the upstream's or driver's words.
DETAILS = {
    "down": "the embedding server could not be reached",
    "hang": "the embedding server did not answer in time",
    "http_503": "the embedding server answered HTTP 503",
    "not_json": "the embedding server's answer is not an embeddings response",
    "not_embeddings": "the embedding server's answer is not an embeddings response",
}

# Every 503 ends so: whatever failed, the request disclosed nothing.
FAIL_CLOSED = "nothing was disclosed (fail closed)"


@pytest.fixture
def stand_in() -> Iterator[EmbeddingsServer]:
    with embeddings_server(DIM) as server:
        yield server


@pytest.fixture
def openai_client(settings: Settings, stand_in: EmbeddingsServer) -> Iterator[TestClient[Any]]:
    with TestClient(app=create_app(embedding_settings(settings, stand_in))) as client:
        yield client


def _receipts(database_url: str) -> int:
    with psycopg.connect(database_url) as conn:
        row = conn.execute("SELECT count(*) FROM receipts").fetchone()
    assert row is not None
    return int(row[0])


@pytest.mark.parametrize("failure", list(DETAILS))
def test_an_embedder_failure_is_503_embedder_unavailable(
    openai_client: TestClient[Any],
    stand_in: EmbeddingsServer,
    make_key: KeyFactory,
    database_url: str,
    caplog: pytest.LogCaptureFixture,
    failure: str,
) -> None:
    agent = make_key()
    assert (
        openai_client.post("/v1/memories", json=memory(), headers=agent.headers).status_code == 201
    )
    receipts = _receipts(database_url)
    if failure == "down":
        stand_in.stop()
    else:
        stand_in.mode = failure  # type: ignore[assignment]
    with caplog.at_level(logging.WARNING):
        responses = [
            openai_client.post("/v1/memories", json=memory(heading="x"), headers=agent.headers),
            openai_client.post("/v1/context", json={"task": "deploys"}, headers=agent.headers),
        ]
    for response in responses:
        assert response.status_code == 503, response.text
        assert response.headers["content-type"].startswith("application/problem+json")
        assert int(response.headers["retry-after"]) > 0
        problem = response.json()
        assert (problem["code"], problem["detail"]) == (
            "embedder_unavailable",
            f"{DETAILS[failure]}; {FAIL_CLOSED}",
        )
        assert UPSTREAM_WORDS not in response.text
    assert _receipts(database_url) == receipts  # fail closed: nothing disclosed, nothing receipted
    logged = [r for r in caplog.records if r.name == "gateway.embedding.remote"]
    assert len(logged) == 2 and all(r.levelno == logging.WARNING for r in logged)
    if failure in ("http_503", "not_json", "not_embeddings"):
        assert all(UPSTREAM_WORDS in r.getMessage() for r in logged)  # the operator sees them

    if failure == "down":
        stand_in.start()
    stand_in.mode = "ok"
    recovered = openai_client.post("/v1/context", json={"task": "deploys"}, headers=agent.headers)
    assert recovered.status_code == 200, recovered.text
    assert _receipts(database_url) == receipts + 1


def _drop_connections(database_url: str) -> None:
    """End every server process of the test database but ours: the pool's connections die."""
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )


@pytest.fixture
def one_connection_client(settings: Settings) -> Iterator[TestClient[Any]]:
    """One pooled connection, and no periodic checkpointing to take it: the request after the
    server ended it meets the dead connection, and the pool then replaces it."""
    single = dataclasses.replace(
        settings, pool_min_size=1, pool_max_size=1, checkpoint_interval_seconds=3600.0
    )
    with TestClient(app=create_app(single)) as client:
        yield client


def test_database_failures_are_503_in_our_words(
    one_connection_client: TestClient[Any],
    make_key: KeyFactory,
    database_url: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    agent = make_key()
    client = one_connection_client
    assert client.get("/readyz").status_code == 200
    _drop_connections(database_url)
    with caplog.at_level(logging.WARNING):
        probe = client.get("/readyz")
    assert probe.status_code == 503, probe.text
    assert int(probe.headers["retry-after"]) > 0
    assert (probe.json()["code"], probe.json()["detail"]) == (
        "not_ready",
        f"the database does not answer; {FAIL_CLOSED}",
    )
    assert client.get("/readyz").status_code == 200  # recovered without a restart

    _drop_connections(database_url)
    with caplog.at_level(logging.WARNING):
        response = client.post("/v1/context", json={"task": "x"}, headers=agent.headers)
    assert response.status_code == 503, response.text
    assert int(response.headers["retry-after"]) > 0
    assert response.json() == {
        "type": "/problems/store_unavailable",
        "title": "Service unavailable",
        "status": 503,
        "code": "store_unavailable",
        "detail": f"the database is unavailable; {FAIL_CLOSED}",
    }
    assert client.post("/v1/context", json={"task": "x"}, headers=agent.headers).is_success
    # The driver's words went to the log, for the operator.
    driver_words = [r for r in caplog.records if "terminat" in r.getMessage()]
    assert len(driver_words) >= 2, [r.getMessage() for r in caplog.records]


def test_the_default_policy_is_stored_even_when_its_first_transaction_rolls_back(
    openai_client: TestClient[Any],
    stand_in: EmbeddingsServer,
    make_key: KeyFactory,
    database_url: str,
) -> None:
    """The first disclosure stores the shipped default in its transaction; when that rolls back
    (here: the embedder fails after the policy was looked up), the next one stores it, so every
    receipt cites a digest its tenant's store holds."""
    agent = make_key()
    stand_in.mode = "http_503"
    failed = openai_client.post("/v1/context", json={"task": "x"}, headers=agent.headers)
    assert failed.status_code == 503, failed.text
    stand_in.mode = "ok"
    served = openai_client.post("/v1/context", json={"task": "x"}, headers=agent.headers)
    assert served.status_code == 200, served.text
    digest = served.json()["policy"]["digest"]
    with psycopg.connect(database_url) as conn:
        stored = conn.execute(
            "SELECT uploaded_by FROM policy_bundles WHERE tenant_id = %s AND digest = %s",
            (agent.tenant_id, digest),
        ).fetchall()
    assert stored == [("ctxgw:shipped-default",)]
