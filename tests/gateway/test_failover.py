"""Failover without loss (README, high availability), on two real PostgreSQL servers of the test's
own (a primary and its synchronous standby, loopback only): a gateway process reaching them
through one multi-host URL with target_session_attrs=read-write, under /v1/context load, while the
primary is killed with -9 and the standby promoted. Every acknowledged receipt is on the new
primary, and so is every acknowledged memory write; every other answer is a 503 with Retry-After
and no content; the log stays gapless, its export verifies offline across the failover and its
checkpoints commit to it (bench.failover, bounded to seconds)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.failover import Ground, failover_ground, failover_round, verify_log
from gateway.shell.backup import backup, restore
from gateway.shell.settings import Settings, load_settings

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
