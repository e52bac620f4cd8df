"""Authentication and the unit of work: one transaction per request, identity from the key."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from litestar import Request
from litestar.di import NamedDependency
from litestar.params import SkipValidation

from gateway.principal import Principal
from gateway.runtime import Runtime
from gateway.store.database import Connection, transaction
from gateway.usecases.keys import authenticate

__all__ = ["RuntimeDep", "unit_of_work"]

# The runtime is ours, not client input: skip the signature model, which cannot (and need not)
# describe it.
RuntimeDep = NamedDependency[SkipValidation[Runtime]]


@asynccontextmanager
async def unit_of_work(
    request: Request[Any, Any, Any], runtime: Runtime
) -> AsyncIterator[tuple[Connection, Principal]]:
    """Authenticate and open the request's transaction; it commits before the response is built,
    so nothing is answered that is not durably recorded."""
    async with transaction(runtime.pool) as conn:
        principal = await authenticate(conn, request.headers.get("authorization"))
        yield conn, principal
