"""The pool the gateway serves through: its connections' setup (pgvector, HNSW settings, the
least-privileged role) and one pooled connection whose failures say the database is unavailable.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import psycopg
from pgvector.psycopg import register_vector_async
from psycopg import sql
from psycopg_pool import PoolTimeout

from gateway.shell.settings import Settings
from gateway.store.availability import GatedPool
from gateway.store.database import APP_ROLE, Connection
from gateway.store.errors import DatabaseUnavailableError
from gateway.store.overflow import bound_instants

__all__ = ["HNSW_SETTINGS", "Pool", "connection", "open_pool"]

Pool = GatedPool


_MAY_ASSUME = (
    "SELECT pg_has_role(current_user, oid, 'MEMBER') FROM pg_roles WHERE rolname = %(role)s"
)


# relaxed_order lets HNSW keep scanning past filtered-out rows (pgvector 0.8; the recall's final
# ORDER BY restores exact distance order among what it found), and ef_search 100 keeps enough
# candidates for it. force_custom_plan: the driver prepares a statement run five times on a
# connection, and the server may then switch it to a generic plan, which can choose an exact
# scan where the custom plan chose the approximate HNSW one (or the reverse): the same request
# would recall other vector candidates on a connection that had served it more often. Planned
# for its parameters every time, a request recalls what it recalled before for as long as the
# table's statistics hold (an ANALYZE that moves the planner's estimates may still change the
# plan: README, Recall). Set once per connection, so no request spends a round trip on them;
# a tool that runs the store's recall on its own connection sets them too, or it ranks another
# pool.
HNSW_SETTINGS = (
    "SET hnsw.iterative_scan = relaxed_order; SET hnsw.ef_search = 100; "
    "SET plan_cache_mode = force_custom_plan"
)


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
