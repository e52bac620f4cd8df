"""How far a read replica (a streaming standby) trails its primary: for the offline checks
(`ctxgw restore --verify-only` on a standby) and for the audit reads a replica serves
(`GATEWAY_READ_DATABASE_URL`), which tell the caller how old what they read may be."""

from __future__ import annotations

from dataclasses import dataclass

import psycopg

from gateway.store.database import Connection

__all__ = ["ReplicaLag", "has_replayed", "read_replica_lag", "replica_lag", "wal_position"]


@dataclass(frozen=True, slots=True)
class ReplicaLag:
    """How far a standby's reads trail its primary."""

    seconds: float  # since the last commit it replayed was made on the primary
    unreplayed_bytes: int  # WAL received and not yet applied


# None on a primary. On a standby `seconds` is how old the newest replayed commit is: an idle
# primary ages it too, so it bounds what a reader may miss rather than measuring a backlog.
_LAG = """
SELECT EXTRACT(EPOCH FROM now() - pg_last_xact_replay_timestamp())::float8,
       pg_wal_lsn_diff(pg_last_wal_receive_lsn(), pg_last_wal_replay_lsn())::bigint
 WHERE pg_is_in_recovery()
"""


def _lag(row: tuple[object, ...] | None) -> ReplicaLag | None:
    if row is None:
        return None
    seconds, unreplayed = row
    return ReplicaLag(
        seconds=float(seconds) if isinstance(seconds, float) else 0.0,
        unreplayed_bytes=int(unreplayed) if isinstance(unreplayed, int) else 0,
    )


def replica_lag(conn: psycopg.Connection[tuple[object, ...]]) -> ReplicaLag | None:
    """The lag of the server `conn` is on, if it is a standby."""
    return _lag(conn.execute(_LAG).fetchone())


async def read_replica_lag(conn: Connection) -> ReplicaLag | None:
    """As `replica_lag`, on a pooled connection."""
    cur = await conn.execute(_LAG)
    row = await cur.fetchone()
    return _lag(None if row is None else tuple(row))


async def wal_position(conn: Connection) -> str:
    """Where the primary's write-ahead log is now (an LSN, as text)."""
    cur = await conn.execute("SELECT pg_current_wal_lsn()::text")
    row = await cur.fetchone()
    assert row is not None
    return str(row[0])


async def has_replayed(conn: Connection, position: str) -> bool:
    """Whether the server `conn` is on has replayed the primary's log up to `position` (a
    primary has, by definition)."""
    cur = await conn.execute(
        "SELECT NOT pg_is_in_recovery() OR pg_last_wal_replay_lsn() >= %(lsn)s::pg_lsn",
        {"lsn": position},
    )
    row = await cur.fetchone()
    return row is not None and row[0] is True
