"""Backup and restore that verify (gateway.shell.backup, gateway.shell.restored_log): the whole
round trip through the real commands (bench.restore, bounded), and the checks of a restored log
one by one on a log of the test's own: a stored receipt changed, a lost tail against an auditor's
checkpoint, a log head that is not the last receipt, a restore into a database that is not empty
and a dump that is not the one its manifest describes."""

from __future__ import annotations

import dataclasses
import json
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from litestar.testing import TestClient

from bench.harness import embedded_postgres, new_database
from bench.restore import restore_run
from gateway.shell.backup import backup, restore
from gateway.shell.restored_log import check_restored_logs, trusted_by_tenant
from gateway.shell.settings import Settings
from gateway.shell.signing import keyring_path
from gateway.store.database import EmbeddedPostgres
from gateway.usecases.access.keys import issue_key
from receipts import Keyring
from tests.conftest import Key, KeyFactory
from tests.gateway.test_memories_write import memory

_ASK = {"task": "when do deploys happen?", "budget_tokens": 400}


def test_backup_restore_round_trip_verifies_continues_and_detects_a_lost_tail() -> None:
    with (
        tempfile.TemporaryDirectory(prefix="ctxgw-restore-test-") as tmp,
        embedded_postgres(Path(tmp) / "pg") as pg,
    ):
        source = new_database(pg, "restore_source", writes_per_second=None)
        with psycopg.connect(source.url, autocommit=True) as conn:
            auditor = issue_key(conn, tenant_id=source.tenant_id, role="auditor", namespaces=["*"])
        work = Path(tmp) / "work"
        work.mkdir(mode=0o755)
        result = restore_run(pg, source, auditor.key, work, before=40, after=10)
    assert result.restore_exit == 0, result.restore_output
    assert result.restored == result.backed_up == result.verified >= 40
    assert result.next_chains_to_head and result.next_seq == result.restored + 1
    assert result.export_verified == result.restored + 1
    assert result.truncated_exit == 1 and result.truncated_reported, result.truncated_output
    assert f"{result.tail} acknowledged receipts are missing" in result.truncated_output


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return dataclasses.replace(settings, checkpoint_interval_seconds=3600.0)


@pytest.fixture
def logged(client: TestClient[Any], agent: Key, make_key: KeyFactory) -> tuple[Key, str]:
    """Six receipts and a checkpoint over them, which an auditor keeps; the auditor's key."""
    assert client.post("/v1/memories", json=memory(), headers=agent.headers).status_code == 201
    for _ in range(6):
        assert client.post("/v1/context", json=_ASK, headers=agent.headers).status_code == 200
    auditor = make_key(role="auditor", agent_id=None)
    note = client.get("/v1/log/checkpoint", headers=auditor.headers)
    assert note.status_code == 200
    return auditor, note.text


def _keyring(settings: Settings) -> Keyring:
    return Keyring.load(keyring_path(settings))


def _tamper(database_url: str, statement: str) -> None:
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("ALTER TABLE receipts DISABLE TRIGGER receipts_append_only")
        conn.execute(statement)
        conn.execute("ALTER TABLE receipts ENABLE ALWAYS TRIGGER receipts_append_only")


def test_an_intact_log_passes_every_check(
    database_url: str, settings: Settings, agent: Key, logged: tuple[Key, str]
) -> None:
    _, note = logged
    checks = check_restored_logs(
        database_url, _keyring(settings), trusted=trusted_by_tenant([note])
    )
    assert [(c.tenant_id, c.receipts, c.ok) for c in checks] == [(agent.tenant_id, 6, True)]
    assert checks[0].checkpoints >= 1


def test_a_changed_receipt_fails(
    database_url: str, settings: Settings, logged: tuple[Key, str]
) -> None:
    _tamper(database_url, "UPDATE receipts SET body = body || ' '::bytea WHERE seq = 3")
    (check,) = check_restored_logs(database_url, _keyring(settings))
    assert not check.ok and not check.truncated
    assert check.problem is not None and check.problem.startswith("not_canonical")
    assert "line=3" in check.problem


def test_a_lost_tail_is_truncated_against_the_auditors_checkpoint(
    database_url: str, settings: Settings, logged: tuple[Key, str]
) -> None:
    """The tail is gone with its checkpoints and head (a restore of an older backup): the log
    verifies on its own, and only the auditor's checkpoint shows what is missing."""
    _, note = logged
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("ALTER TABLE checkpoints DISABLE TRIGGER USER")
        conn.execute("DELETE FROM checkpoints WHERE size > 4")
    _tamper(database_url, "DELETE FROM receipts WHERE seq > 4")
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute(
            "UPDATE receipt_logs SET size = 4, head = (SELECT leaf FROM receipts WHERE seq = 4)"
        )
    (alone,) = check_restored_logs(database_url, _keyring(settings))
    assert alone.ok and alone.receipts == 4
    (check,) = check_restored_logs(
        database_url, _keyring(settings), trusted=trusted_by_tenant([note])
    )
    assert check.truncated and check.problem is not None
    assert "2 acknowledged receipts are missing" in check.problem


def test_a_head_that_is_not_the_last_receipt_fails(
    database_url: str, settings: Settings, logged: tuple[Key, str]
) -> None:
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("UPDATE receipt_logs SET size = 5, head = (SELECT leaf FROM receipts WHERE seq = 5)")  # fmt: skip
    (check,) = check_restored_logs(database_url, _keyring(settings))
    assert not check.ok and check.problem is not None and "next receipt" in check.problem


@pytest.fixture
def other_database(embedded_pg: EmbeddedPostgres) -> Iterator[str]:
    name = "restore_target_test"
    yield embedded_pg.url(name)
    with psycopg.connect(embedded_pg.url("postgres"), autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def test_restore_refuses_a_target_with_a_schema_and_a_dump_not_the_manifests(
    database_url: str,
    other_database: str,
    settings: Settings,
    logged: tuple[Key, str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert backup(database_url, tmp_path / "b", settings) == 0
    assert restore(database_url, tmp_path / "b", settings, checkpoints=[]) == 1
    assert "already holds a ctxgw schema" in capsys.readouterr().err
    manifest = json.loads((tmp_path / "b" / "manifest.json").read_text())
    (tmp_path / "b" / "manifest.json").write_text(json.dumps(manifest | {"dump_sha256": "0" * 64}))
    assert restore(other_database, tmp_path / "b", settings, checkpoints=[]) == 1
    assert "does not have the sha256" in capsys.readouterr().err
