"""The gateway's database login (ARCHITECTURE §14): least privilege that no SQL can undo.

The pool logs in as `ctxgw_app`, neither superuser nor BYPASSRLS (not a superuser narrowed by
`SET ROLE`, which `RESET ROLE` undoes); start-up refuses a login that is either; and the role
may revoke an API key but never change what a key is.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import psycopg
import pytest
from litestar.testing import TestClient
from psycopg import errors

from gateway.http.app import create_app
from gateway.shell.runtime import Runtime, start_runtime
from gateway.shell.settings import Settings
from gateway.store.database import APP_ROLE, EmbeddedPostgres
from gateway.store.errors import PrivilegedLoginError
from tests.conftest import KeyFactory


def _pool_login(settings: Settings) -> tuple[object, ...]:
    """Who the running gateway's pool logs in as, after a `RESET ROLE` on that login."""
    with TestClient(app=create_app(settings)) as client:
        runtime: Runtime = client.app.state.runtime
        conninfo = runtime.pool.conninfo
        assert isinstance(conninfo, str)
        with psycopg.connect(conninfo, autocommit=True) as conn:
            conn.execute("RESET ROLE")
            row = conn.execute(
                "SELECT session_user, current_user, rolsuper, rolbypassrls"
                " FROM pg_roles WHERE rolname = current_user"
            ).fetchone()
    assert row is not None
    return tuple(row)


def test_the_pool_logs_in_least_privileged_and_reset_role_cannot_widen_it(
    settings: Settings,
) -> None:
    assert _pool_login(settings) == (APP_ROLE, APP_ROLE, False, False)


def test_the_embedded_server_serves_through_its_app_role(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data", pool_min_size=1, pool_max_size=2)
    assert _pool_login(settings) == (APP_ROLE, APP_ROLE, False, False)


def test_start_up_refuses_a_superuser_login(
    database_url: str, settings: Settings, embedded_pg: EmbeddedPostgres
) -> None:
    as_superuser = Settings(
        database_url=database_url, data_dir=settings.data_dir, pool_min_size=1, pool_max_size=2
    )

    async def start() -> None:
        async with start_runtime(as_superuser):
            pass

    with pytest.raises(PrivilegedLoginError, match="superuser"):
        asyncio.run(start())


def test_start_up_refuses_a_bypassrls_login(database_url: str, settings: Settings) -> None:
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("DROP ROLE IF EXISTS ctxgw_test_bypass")
        conn.execute(f"CREATE ROLE ctxgw_test_bypass LOGIN BYPASSRLS IN ROLE {APP_ROLE}")
    url = database_url.replace("postgres:@", "ctxgw_test_bypass@")
    bypassing = Settings(database_url=url, data_dir=settings.data_dir, migrate_on_start=False)

    async def start() -> None:
        async with start_runtime(bypassing):
            pass

    try:
        with pytest.raises(PrivilegedLoginError, match="BYPASSRLS"):
            asyncio.run(start())
    finally:
        with psycopg.connect(database_url, autocommit=True) as conn:
            conn.execute("DROP ROLE ctxgw_test_bypass")


def test_the_app_role_cannot_promote_a_key_but_can_revoke_one(
    app_database_url: str, make_key: KeyFactory
) -> None:
    agent = make_key(role="agent")
    with psycopg.connect(app_database_url, autocommit=True) as conn:
        for change in (
            "UPDATE api_keys SET role = 'admin' WHERE key_id = %(id)s",
            "UPDATE api_keys SET tenant_id = 'other' WHERE key_id = %(id)s",
            "UPDATE api_keys SET namespaces = ARRAY['*'] WHERE key_id = %(id)s",
            "UPDATE api_keys SET secret_sha256 = '\\x00' WHERE key_id = %(id)s",
        ):
            with pytest.raises(errors.InsufficientPrivilege):
                conn.execute(change, {"id": agent.key_id})
        with pytest.raises(errors.InsufficientPrivilege):
            conn.execute("UPDATE tenants SET tenant_id = tenant_id")
        with conn.transaction():  # inside the key's tenant wall (migration 0010)
            conn.execute("SELECT enter_tenant(%(t)s)", {"t": agent.tenant_id})
            revoked = conn.execute(
                "UPDATE api_keys SET revoked_at = now() WHERE key_id = %(id)s",
                {"id": agent.key_id},
            )
            assert revoked.rowcount == 1
            row = conn.execute(
                "SELECT role, revoked_at IS NOT NULL FROM api_keys WHERE key_id = %(id)s",
                {"id": agent.key_id},
            ).fetchone()
    assert row == ("agent", True)
