"""The Python client of the gateway: typed, sync and async, on httpx.

    from gateway.client import Client

    with Client(key, "http://127.0.0.1:8080") as ctxgw:
        ctxgw.write_memory("atlas", "Atlas owners", "The payments team owns Atlas.")
        bundle = ctxgw.context("Who owns Atlas?", budget_tokens=800)
        print(bundle.bundle, bundle.receipt_id)

Results are the gateway's own response Structs (`gateway.responses`); problems are raised as
typed errors carrying `code`, `status` and `errors` (the tree is in `gateway.client.errors`).
429 and 503 are retried as `Retry-After` says; writes carry idempotency keys, so a retry never
writes twice. The package imports httpx, msgspec and `gateway.responses`, nothing of the server
(no Litestar, no database driver): an agent's process stays light.
"""

from gateway.client.asynchronous import AsyncClient
from gateway.client.errors import (
    ClientError,
    ConflictError,
    ConnectionFailedError,
    ForbiddenError,
    InvalidRequestError,
    NotFoundError,
    PolicyRefusedError,
    ProblemError,
    RateLimitedError,
    UnauthenticatedError,
    UnavailableError,
    UnexpectedResponseError,
)
from gateway.client.export import Exported
from gateway.client.options import NewMemory, NewTurn
from gateway.client.retrying import Retries
from gateway.client.sync import Client

__all__ = [
    "AsyncClient",
    "Client",
    "ClientError",
    "ConflictError",
    "ConnectionFailedError",
    "Exported",
    "ForbiddenError",
    "InvalidRequestError",
    "NewMemory",
    "NewTurn",
    "NotFoundError",
    "PolicyRefusedError",
    "ProblemError",
    "RateLimitedError",
    "Retries",
    "UnauthenticatedError",
    "UnavailableError",
    "UnexpectedResponseError",
]
