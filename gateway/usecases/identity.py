"""Who a key is, for an edge that must know before it hands the request on (`/mcp`)."""

from __future__ import annotations

from gateway.principal import Principal
from gateway.store.database import Pool
from gateway.usecases.work import unit_of_work

__all__ = ["identify"]


async def identify(pool: Pool, authorization: str | None) -> Principal:
    """The key's principal; `UnauthenticatedError` for a missing, unknown or revoked key."""
    async with unit_of_work(pool, authorization) as (_, principal):
        return principal
