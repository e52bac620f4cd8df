"""The resilience suite (bench.faults) in CI, bounded to seconds, loopback only: a gateway
process killed with -9 mid-load loses no acknowledged receipt and its log still verifies;
PostgreSQL stopped answers 503 within a second and the gateway serves again within 5 s of its
return; receipt writes revoked are 503 with no content."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest

from bench.faults import kill_mid_load, postgres_outage, revoked_receipts
from gateway.store.database import APP_ROLE, EmbeddedPostgres
from gateway.store.migrator import apply_migrations
from gateway.usecases.access.keys import issue_key


@dataclass(frozen=True)
class Ground:
    operator_url: str
    app_url: str
    key: str
    pgdata: Path
    data_dir: Path


@pytest.fixture
def ground() -> Iterator[Ground]:
    """A PostgreSQL of the test's own (it is stopped and started) and a data dir outside pytest's
    basetemp (the embedded server runs as another system user and must traverse the path)."""
    with tempfile.TemporaryDirectory(prefix="ctxgw-faults-") as directory:
        root = Path(directory)
        with EmbeddedPostgres(root / "pg-home") as server:
            url = server.url()
            apply_migrations(url)
            with psycopg.connect(url, autocommit=True) as conn:
                agent = issue_key(conn, tenant_id="acme", role="agent", namespaces=["*"], agent_id="a")  # fmt: skip
            yield Ground(url, server.url(user=APP_ROLE), agent.key, server.pgdata, root / "data")


def test_kill_9_mid_load_loses_no_acknowledged_receipt(ground: Ground) -> None:
    result = kill_mid_load(
        ground.operator_url, ground.app_url, ground.key, ground.data_dir,
        load_seconds=4.0, kill_after=2.0, concurrency=4,
    )  # fmt: skip
    assert result.acknowledged > 0
    assert result.lost == 0 and result.stored >= result.acknowledged
    assert result.export_verified, result.verify_output


def test_postgres_stopped_then_started_is_503_then_recovery(ground: Ground) -> None:
    result = postgres_outage(ground.app_url, ground.key, ground.pgdata, ground.data_dir, probes=5)
    assert result.all_503_with_retry_after
    assert result.slowest_503_ms < 1000
    assert result.recovery_ms < 5000


def test_receipt_writes_revoked_are_503_without_content(ground: Ground) -> None:
    result = revoked_receipts(ground.operator_url, ground.app_url, ground.key, ground.data_dir)
    assert (result.context_status, result.context_code) == (503, "receipt_unavailable")
    assert not result.content_leaked and result.receipts_written == 0
    assert result.readyz_status == 503 and result.recovered
