"""Transactions inside the tenant wall: opened on a connection or through the pool, after a
statement of their own, or queued in a pipeline (the receipt log's writer); and `ping`, the one
that checks receipts can be written.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from typing import Any

import psycopg
from psycopg import sql
from psycopg_pool import PoolTimeout

from gateway.store.availability import GatedPool
from gateway.store.database import Connection
from gateway.store.errors import DatabaseUnavailableError, ReceiptWriteError
from gateway.store.pool import connection

__all__ = [
    "ENTER_TENANT",
    "begin",
    "begin_after",
    "in_tenant",
    "log_pipeline",
    "ping",
    "queued_transaction",
    "transaction",
]


# Row-level security (migration 0010): a transaction sees the rows of the tenant it entered
# (enter_tenant(), a SET LOCAL) and no other; one that entered none sees nothing. The tenant is
# entered in the same round trip as what it guards: `begin` sends it with BEGIN, `in_tenant`
# with a statement run on its own (the key lookup, before the request's transaction), each as
# one simple-query message, which PostgreSQL runs as one transaction.


ENTER_TENANT = "SELECT enter_tenant(%(tenant_id)s)"  # for a transaction already open (the CLI)


def _entering(tenant_id: str) -> sql.Composed:
    return sql.SQL("SELECT enter_tenant({})").format(sql.Literal(tenant_id))


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
async def log_pipeline(pool: GatedPool) -> AsyncIterator[Connection]:
    """A connection of `pool` in a libpq pipeline, for the receipt log's writer: a statement is
    sent as soon as it is queued, and its answer awaited only when it is read; the block ends
    once every answer is in. Any failure raises by then: one the server refused is a
    `ReceiptWriteError`, a lost link (or a pool that cannot give a connection) a
    `DatabaseUnavailableError`, and a connection left broken makes the pool suspect its server.
    A transaction left open is rolled back.

    Nothing in it is prepared but what the caller prepares: psycopg counts a statement that a
    failed pipeline skipped as run, and may believe prepared one the server never saw
    ("prepared statement _pg3_0 does not exist" after)."""
    if pool.shut:
        raise DatabaseUnavailableError("the database does not answer (a probe is retrying)")
    try:
        async with pool.connection() as conn:
            try:
                async with conn.pipeline():
                    yield conn
            except BaseException as exc:
                if not conn.closed:
                    with suppress(psycopg.Error):
                        await conn.execute("ROLLBACK")
                if conn.broken:
                    pool.suspect()
                if isinstance(exc, psycopg.Error) and not isinstance(
                    exc, psycopg.OperationalError | psycopg.InterfaceError
                ):
                    raise ReceiptWriteError(f"the receipts could not be written: {exc}") from exc
                raise
    except (psycopg.OperationalError, psycopg.InterfaceError, PoolTimeout) as exc:
        pool.suspect()
        raise DatabaseUnavailableError(str(exc)) from exc


@asynccontextmanager
async def queued_transaction(
    conn: Connection, tenant_id: str, *, durable: bool = True
) -> AsyncIterator[Connection]:
    """A transaction queued in `conn`'s pipeline (`log_pipeline`), inside the wall of
    `tenant_id`: BEGIN and the tenant's entry go with its first statement, and COMMIT is sent
    when the block ends, not awaited (the pipeline's end awaits it; a statement that failed
    makes the server skip the rest, COMMIT included).

    Not `durable`: COMMIT does not wait for the WAL flush, so the transaction's row locks go as
    soon as the server reaches it, and whoever waits for them does not also wait for the disk.
    Nobody may be told it is written until a durable transaction after it on this connection
    has committed: PostgreSQL flushes its WAL in order, so that flush (and a synchronous
    standby's confirmation of it) covers this one, and a crash before it loses both. Others
    may read its rows in between."""
    await conn.execute("BEGIN", prepare=False)
    if not durable:
        await conn.execute("SET LOCAL synchronous_commit = off", prepare=False)
    await conn.execute(ENTER_TENANT, {"tenant_id": tenant_id}, prepare=False)
    yield conn
    await conn.execute("COMMIT", prepare=False)


# Whether this login may write receipts now: the database answers, is not read-only, and the
# grants to append a receipt, advance its log and store its signatures are in place.
_RECEIPTS_WRITABLE = """
SELECT current_setting('transaction_read_only') = 'off'
       AND has_table_privilege('receipts', 'INSERT')
       AND has_table_privilege('receipt_logs', 'UPDATE')
       AND has_table_privilege('receipt_signatures', 'INSERT')
       AND has_table_privilege('receipt_disclosures', 'INSERT')
"""


async def ping(pool: GatedPool) -> None:
    """Through the pool: the database answers and receipts can be written there;
    `DatabaseUnavailableError` or `ReceiptWriteError` when not."""
    async with transaction(pool) as conn:
        cur = await conn.execute(_RECEIPTS_WRITABLE)
        row = await cur.fetchone()
    if row is None or row[0] is not True:
        raise ReceiptWriteError("receipts cannot be written: read-only or without the grants")
