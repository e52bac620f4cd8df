"""Who a key is, for an edge that must know before it hands the request on (`/mcp`)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from gateway.domain.principal import Principal
from gateway.store.pool import Pool, connection
from gateway.usecases.access.keys import authenticate, vouching
from gateway.usecases.access.request_record import note_principal

__all__ = ["identified"]


@asynccontextmanager
async def identified(pool: Pool, authorization: str | None) -> AsyncIterator[Principal]:
    """The key's principal; `UnauthenticatedError` for a missing, unknown or revoked key, 429
    when its requests are spent. One statement, no transaction: nothing else is read here.
    The requests made in process within the block with the same key (the tools the edge runs
    for it) reuse this identification: one request charged, one lookup."""
    async with connection(pool) as conn:
        principal = await authenticate(conn, authorization)
    note_principal(principal)
    with vouching(authorization, principal):
        yield principal
