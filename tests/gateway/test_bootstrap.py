"""`ctxgw db bootstrap --url …` against a PostgreSQL of the test's own, treated as an external one:
as its superuser, and as a hosted server's administrator (CREATEROLE and CREATEDB, no superuser,
pgvector allowed by the provider). Both times the roles, grants and migrations are what the gateway
needs, a second run changes nothing, and the gateway serves through the URL it prints."""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from litestar.testing import TestClient

from gateway.http.app import create_app
from gateway.shell.cli import main
from gateway.shell.settings import Settings
from gateway.store.database import EmbeddedPostgres
from gateway.usecases.access.keys import issue_key
from tests.gateway.test_memories_write import memory


@pytest.fixture
def external() -> Iterator[EmbeddedPostgres]:
    with (
        tempfile.TemporaryDirectory(prefix="ctxgw-external-") as directory,
        EmbeddedPostgres(Path(directory)) as server,
    ):
        yield server


def _bootstrap(url: str, database: str, capsys: pytest.CaptureFixture[str]) -> str:
    # The command configures logging to this test's captured stderr, which closes with the test:
    # the root logger is put back, or every later log line meets a closed stream.
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        assert main(["db", "bootstrap", "--url", url, "--database", database]) == 0
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
    return capsys.readouterr().out


def _served_url(out: str) -> str:
    line = next(line for line in out.splitlines() if line.startswith("serve with: "))
    return line.removeprefix("serve with: GATEWAY_DATABASE_URL=").split(" ")[0]


def _state(url: str) -> dict[str, object]:
    with psycopg.connect(url) as conn:
        roles = conn.execute(
            "SELECT rolname, rolcanlogin, rolsuper, rolbypassrls, rolcreatedb, rolcreaterole"
            " FROM pg_roles WHERE rolname IN ('ctxgw_app', 'ctxgw_ledger') ORDER BY 1"
        ).fetchall()
        owners = conn.execute(
            "SELECT DISTINCT pg_get_userbyid(proowner) FROM pg_proc"
            " WHERE prosecdef AND pronamespace = 'public'::regnamespace"
        ).fetchall()
        grants = conn.execute(
            "SELECT has_table_privilege('ctxgw_app', 'receipts', 'INSERT'),"
            " has_table_privilege('ctxgw_app', 'receipts', 'UPDATE'),"
            " has_database_privilege('ctxgw_app', current_database(), 'CONNECT')"
        ).fetchone()
        migrations = conn.execute("SELECT count(*) FROM schema_migrations").fetchone()
    return {"roles": roles, "owners": owners, "grants": grants, "migrations": migrations}


def _serves(app_url: str, operator_url: str, tmp_path: Path) -> None:
    with psycopg.connect(operator_url, autocommit=True) as conn:
        key = issue_key(conn, tenant_id="acme", role="agent", namespaces=["*"], agent_id="a")
    settings = Settings(database_url=app_url, data_dir=tmp_path / "data", pool_min_size=1)
    headers = {"Authorization": f"Bearer {key.key}"}
    with TestClient(app=create_app(settings)) as client:
        assert client.get("/readyz").status_code == 200
        assert client.post("/v1/memories", json=memory(), headers=headers).status_code == 201
        answer = client.post("/v1/context", json={"task": "deploys"}, headers=headers)
        assert answer.status_code == 200 and answer.json()["receipt_id"]


_EXPECTED_ROLES = [
    ("ctxgw_app", True, False, False, False, False),
    ("ctxgw_ledger", False, False, False, False, False),
]


def test_bootstrap_as_superuser_is_idempotent_and_serves(
    external: EmbeddedPostgres, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    admin = external.url("postgres")
    first = _bootstrap(admin, "prod", capsys)
    assert "database prod, extension vector" in first and "skipped" not in first
    state = _state(external.url("prod"))
    assert state["roles"] == _EXPECTED_ROLES
    assert state["owners"] == [("ctxgw_ledger",)]
    assert state["grants"] == (True, False, True)
    second = _bootstrap(admin, "prod", capsys)
    assert "nothing to create" in second and "0 applied now" in second
    assert _state(external.url("prod")) == state
    _serves(_served_url(second), external.url("prod"), tmp_path)


def test_bootstrap_as_a_hosted_administrator_without_superuser(
    external: EmbeddedPostgres, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    with psycopg.connect(external.url("postgres"), autocommit=True) as conn:
        conn.execute("CREATE ROLE cloud_admin LOGIN CREATEROLE CREATEDB")
    with psycopg.connect(external.url("template1"), autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")  # the provider's allow-list
    admin = external.url("postgres", user="cloud_admin")
    first = _bootstrap(admin, "hosted", capsys)
    assert "role ctxgw_ledger, database hosted" in first
    assert "skipped: LEAKPROOF" in first
    state = _state(external.url("hosted"))
    assert state["roles"] == _EXPECTED_ROLES
    assert state["owners"] == [("ctxgw_ledger",)]  # handed over: cross-tenant reads work
    assert state["grants"] == (True, False, True)
    second = _bootstrap(admin, "hosted", capsys)
    assert "nothing to create" in second and "0 applied now" in second
    _serves(_served_url(second), external.url("hosted"), tmp_path)
