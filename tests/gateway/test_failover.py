"""Failover without loss (README, high availability), on two real PostgreSQL servers of the test's
own (a primary and its synchronous standby, loopback only): a gateway process reaching them
through one multi-host URL with target_session_attrs=read-write, under /v1/context load, while the
primary is killed with -9 and the standby promoted. Every acknowledged receipt is on the new
primary, and so is every acknowledged memory write; every other answer is a 503 with Retry-After
and no content; the log stays gapless, its export verifies offline across the failover and its
checkpoints commit to it (bench.failover, bounded to seconds)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from bench.failover import Ground, failover_ground, failover_round, verify_log
from bench.faults import running_gateway
from gateway.shell.backup import backup, restore
from gateway.shell.settings import Settings, load_settings
from gateway.store.database import APP_ROLE

MULTI_HOST = (
    "postgresql://ctxgw_app@10.0.0.1:5432,10.0.0.2:5432/ctxgw?target_session_attrs=read-write"
)


def test_settings_take_a_multi_host_url() -> None:
    assert load_settings({"GATEWAY_DATABASE_URL": MULTI_HOST}).database_url == MULTI_HOST


@pytest.fixture(scope="module")
def ground() -> Iterator[Ground]:
    with failover_ground() as ground:
        yield ground


def test_failover_loses_no_acknowledged_receipt_and_the_chain_verifies(ground: Ground) -> None:
    result = failover_round(ground, load_before=2.0, load_after=1.0, concurrency=4)
    assert result.acknowledged > 0
    assert result.lost == 0 and result.written > 0 and result.writes_lost == 0, result
    assert result.other == 0 and result.retry_after_missing == 0 and result.leaked == 0, result
    assert result.gapless and result.stored >= result.acknowledged
    assert result.unavailable_seconds < 30, result  # generous: a loaded 2-core machine
    report = verify_log(ground)
    assert report.complete and report.first_seq == 1
    assert report.receipts >= result.acknowledged


def test_the_pair_fails_over_back_the_other_way(ground: Ground) -> None:
    """After a failover the old primary's place holds a new standby: a second failover goes
    back to it through the same URL."""
    first_port = ground.pair.primary.port
    result = failover_round(ground, load_before=1.0, load_after=0.5, concurrency=2)
    assert ground.pair.primary.port != first_port
    assert result.lost == result.writes_lost == result.other == 0 and result.gapless, result
    verify_log(ground)


def test_a_standby_is_backed_up_and_verified_with_its_lag_reported(
    ground: Ground, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Audit reads from a replica, offline: a backup taken from the standby, and the log
    checked on the standby (`ctxgw restore --verify-only`), which says how far it trails."""
    settings = Settings(data_dir=ground.keyring.parent.parent)
    standby = ground.pair.standby.url("ctxgw")
    assert backup(standby, tmp_path / "from-standby", settings) == 0
    capsys.readouterr()
    assert restore(standby, tmp_path / "from-standby", settings, checkpoints=[], verify_only=True) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "read from a standby" in out and "verified" in out, out


def test_audit_reads_are_served_by_a_replica_with_its_lag(ground: Ground, tmp_path: Path) -> None:
    """`GATEWAY_READ_DATABASE_URL` names the standby: the receipts' list and reads come from it
    (keys are still looked up on the primary), each answer says how far the replica trails,
    and what the primary acknowledged reaches it. Verification runs there once a replayed
    checkpoint covers the receipt (before, on the primary, which signs one); an export is
    anchored on the primary and read from the replica."""
    primary = ground.pair.url("ctxgw", APP_ROLE)
    standby = ground.pair.standby.url("ctxgw", APP_ROLE)
    replica = {"GATEWAY_READ_DATABASE_URL": standby}
    data = ground.keyring.parent.parent  # the same signing keys as the gateway of the ground
    with running_gateway(primary, data, settings=replica) as gateway:
        agent = {"Authorization": f"Bearer {ground.agent_key}"}
        auditor = {"Authorization": f"Bearer {ground.auditor_key}"}
        asked = httpx.post(
            f"{gateway.base_url}/v1/context",
            json={"task": "what was written?", "budget_tokens": 300},
            headers=agent,
            timeout=60,
        )
        assert asked.status_code == 200, asked.text
        receipt_id = asked.json()["receipt_id"]
        assert "ctxgw-replica-lag-seconds" not in asked.headers  # a disclosure: the primary
        deadline = time.monotonic() + 30
        while True:  # synchronous commit waits for the standby's flush, not its replay
            read = httpx.get(
                f"{gateway.base_url}/v1/receipts/{receipt_id}", headers=auditor, timeout=60
            )
            if read.status_code == 200 or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert read.status_code == 200, read.text
        assert float(read.headers["ctxgw-replica-lag-seconds"]) >= 0
        cursor = str(read.json()["seq"] - 1)  # the page that starts with it
        listed = httpx.get(
            f"{gateway.base_url}/v1/receipts",
            params={"cursor": cursor},
            headers=auditor,
            timeout=60,
        )
        assert listed.status_code == 200 and "ctxgw-replica-lag-seconds" in listed.headers
        assert receipt_id in {r["receipt_id"] for r in listed.json()["receipts"]}
        verified = httpx.get(
            f"{gateway.base_url}/v1/receipts/{receipt_id}/verify", headers=auditor, timeout=60
        )
        assert verified.status_code == 200 and verified.json()["valid"] is True, verified.text
        # Verified on the replica once a checkpoint it has replayed covers the receipt (the
        # primary's checkpointer makes one every half second here); until then on the primary.
        deadline = time.monotonic() + 30
        while "ctxgw-replica-lag-seconds" not in verified.headers:
            assert time.monotonic() < deadline, "never verified on the replica"
            time.sleep(0.5)
            verified = httpx.get(
                f"{gateway.base_url}/v1/receipts/{receipt_id}/verify", headers=auditor, timeout=60
            )
            assert verified.status_code == 200 and verified.json()["valid"] is True
        # The export is anchored on the primary (it may sign a checkpoint) and read from the
        # replica once it has replayed it.
        exported = httpx.get(f"{gateway.base_url}/v1/receipts/export", headers=auditor, timeout=120)
        assert exported.status_code == 200 and "ctxgw-replica-lag-seconds" in exported.headers
        lines = exported.text.splitlines()
        assert json.loads(lines[-1])["receipts"] == len(lines) - 1 >= 1  # the end line
        # The replica cannot authenticate a key (its buckets are written): a bad key is still
        # refused by the primary, as without a replica.
        refused = httpx.get(
            f"{gateway.base_url}/v1/receipts", headers={"Authorization": "Bearer x"}, timeout=60
        )
        assert refused.status_code == 401
