"""The unit of work: one transaction per request, identity from the key.

Every use case that reads or writes opens its work here; the HTTP edge passes the raw
`Authorization` header and never sees a connection.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from gateway.domain.errors import PolicyRefusedError
from gateway.domain.principal import Principal
from gateway.store.database import Connection
from gateway.store.pool import Pool, connection
from gateway.store.replicas import read_replica_lag
from gateway.store.transactions import begin
from gateway.usecases.access.keys import authenticated
from gateway.usecases.access.request_record import note_principal, note_replica_lag

__all__ = ["reading_unit_of_work", "unit_of_work"]

_log = logging.getLogger(__name__)


@asynccontextmanager
async def unit_of_work(
    pool: Pool, authorization: str | None, *, writes: int = 0
) -> AsyncIterator[tuple[Connection, Principal]]:
    """Authenticate, charging the key's rate limits (one request, and `writes` memories or turns
    written), then open the request's transaction; it commits before the response is built, so
    nothing is answered that is not durably recorded. The key is looked up before the
    transaction, in a statement of its own that commits first, so a key's bucket is never
    locked for longer; that statement and the transaction's BEGIN share one round trip.

    Errors roll it back, but one: a policy refusal whose receipt was written leaves the block
    normally (the transaction commits what the refusal wrote), then fails the request. The
    receipt itself is durable already (the log's group commit writes it on its own
    connection), so if this commit fails the request is refused all the same, with it."""
    refused: PolicyRefusedError | None = None
    try:
        async with (
            connection(pool) as conn,
            authenticated(conn, authorization, writes=writes) as principal,
        ):
            note_principal(principal)
            try:
                yield conn, principal
            except PolicyRefusedError as exc:
                if exc.receipt_id is None:
                    raise
                refused = exc  # leave the block normally: the refusal receipt commits
    except Exception as exc:
        if refused is None:
            raise
        _log.error("the transaction of refusal %s did not commit: %s", refused.receipt_id, exc)
        raise refused from exc
    if refused is not None:
        raise refused


@asynccontextmanager
async def reading_unit_of_work(
    pool: Pool, replica: Pool | None, authorization: str | None
) -> AsyncIterator[tuple[Connection, Principal]]:
    """A unit of work that only reads, served by `replica` when there is one
    (`GATEWAY_READ_DATABASE_URL`): the key is looked up on the primary (its rate buckets are
    written, which a standby cannot do) in a transaction that ends at once, then the reads run
    in a transaction on the replica, in the key's tenant, and the replica's lag is noted for the
    response (`Ctxgw-Replica-Lag-Seconds`). What they read may trail the primary by that much:
    a receipt just acknowledged may not be there yet. Without a replica, `unit_of_work`."""
    if replica is None:
        async with unit_of_work(pool, authorization) as work:
            yield work
        return
    async with unit_of_work(pool, authorization) as (_, principal):
        pass
    async with connection(replica) as conn, begin(conn, principal.tenant_id):
        lag = await read_replica_lag(conn)
        note_replica_lag(0.0 if lag is None else lag.seconds)
        yield conn, principal
