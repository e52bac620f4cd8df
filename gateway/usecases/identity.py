"""Who a key is, for an edge that must know before it hands the request on (`/mcp`)."""

from __future__ import annotations

from gateway.principal import Principal
from gateway.request_record import note_principal
from gateway.store.database import Pool, connection
from gateway.usecases.keys import authenticate

__all__ = ["identify"]


async def identify(pool: Pool, authorization: str | None) -> Principal:
    """The key's principal; `UnauthenticatedError` for a missing, unknown or revoked key, 429
    when its requests are spent. One statement, no transaction: nothing else is read here."""
    async with connection(pool) as conn:
        principal = await authenticate(conn, authorization)
    note_principal(principal)
    return principal
