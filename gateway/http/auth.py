"""Authentication and the unit of work: one transaction per request, identity from the key."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from litestar import Request
from litestar.di import NamedDependency
from litestar.params import SkipValidation

from gateway.errors import PolicyRefusedError
from gateway.principal import Principal
from gateway.runtime import Runtime
from gateway.store.database import Connection, transaction
from gateway.usecases.keys import authenticate

__all__ = ["RuntimeDep", "unit_of_work"]

_log = logging.getLogger(__name__)

# The runtime is ours, not client input: skip the signature model, which cannot (and need not)
# describe it.
RuntimeDep = NamedDependency[SkipValidation[Runtime]]


@asynccontextmanager
async def unit_of_work(
    request: Request[Any, Any, Any], runtime: Runtime
) -> AsyncIterator[tuple[Connection, Principal]]:
    """Authenticate and open the request's transaction; it commits before the response is built,
    so nothing is answered that is not durably recorded.

    Errors roll it back, but one: a policy refusal whose receipt was written commits that
    receipt, then fails the request. If the commit fails, the request is refused all the same,
    without a receipt id."""
    refused: PolicyRefusedError | None = None
    try:
        async with transaction(runtime.pool) as conn:
            principal = await authenticate(conn, request.headers.get("authorization"))
            try:
                yield conn, principal
            except PolicyRefusedError as exc:
                if exc.receipt_id is None:
                    raise
                refused = exc  # leave the block normally: the refusal receipt commits
    except Exception as exc:
        if refused is None:
            raise
        _log.error("the receipt %s of a refusal did not commit: %s", refused.receipt_id, exc)
        raise PolicyRefusedError(refused.rule_id, refused.reason) from exc
    if refused is not None:
        raise refused
