"""Streamable HTTP MCP at `/mcp`: the same tools as `ctxgw mcp`, served by the gateway.

Before any tool runs the request must carry a key that authenticates (401 otherwise) and, when a
browser sends an `Origin`, come from a loopback page or one of `GATEWAY_MCP_ORIGINS` (403
otherwise): the MCP specification's guard against DNS rebinding. Each tool call is then a
request of the caller's own key to this very app, in process (`httpx.ASGITransport`), through
the Python client: the same policy, receipts and metrics as over HTTP, no second path. The key
was identified once, before the tool ran, and that identification stands for its request (one
request charged against the key's limit, not two; writes are charged as they are made). The
transport is stateless (JSON responses, no MCP session kept between requests), so any worker or
replica may answer any request.

A key is offered the tools its role may call, and only those: one server per role
(`gateway.client.mcp_server.TOOLS`), chosen by the key identified before the request is handled.
A tool outside the role is neither listed nor run (the SDK answers it as unknown).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlsplit

import httpx
from litestar import Litestar, asgi
from litestar.types import Receive, Scope, Send
from mcp.server.transport_security import TransportSecuritySettings

from gateway.client import AsyncClient
from gateway.client.mcp_server import TOOLS, build_server
from gateway.domain.errors import ForbiddenError
from gateway.domain.principal import ROLES, Role
from gateway.usecases.access.identity import identified

__all__ = ["McpEndpoint", "mcp_route"]

_LOOPBACK = frozenset({"localhost", "127.0.0.1", "::1"})
_INTERNAL = "http://ctxgw.internal"  # never resolved: the transport is the app itself


class McpEndpoint:
    """The MCP servers of one app (one per role), and the lifespan their session managers
    need. Made once the app's runtime is, whose tokenizer counts the tool results."""

    def __init__(self, app: Litestar) -> None:
        self._app = app
        tokenizer: str = app.state.runtime.tokenizer.name
        # The SDK logs every message at INFO; the gateway's own request logs already say it.
        logging.getLogger("mcp").setLevel(logging.WARNING)

        @contextlib.asynccontextmanager
        async def connect(ctx: Any) -> AsyncIterator[AsyncClient]:
            key = _bearer(ctx.request_context.request.headers.get("authorization"))
            # (Litestar's ASGI signature is narrower than the generic one httpx names.)
            transport = httpx.ASGITransport(app=self._app)  # type: ignore[arg-type]
            async with AsyncClient(key, _INTERNAL, transport=transport) as client:
                yield client

        self.servers = {
            role: build_server(
                connect,
                tokenizer=tokenizer,
                offered=TOOLS[role],
                stateless_http=True,
                json_response=True,
                streamable_http_path="/",
                # The Origin is checked by `mcp_route` before this; the SDK's own check also
                # pins the Host to loopback, which a gateway behind a proxy or on a LAN does
                # not have.
                transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
            )
            for role in ROLES
        }
        for server in self.servers.values():
            server.streamable_http_app()  # creates the session manager handle() uses

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        async with contextlib.AsyncExitStack() as stack:
            for server in self.servers.values():
                await stack.enter_async_context(server.session_manager.run())
            yield

    async def handle(self, role: Role, scope: Scope, receive: Receive, send: Send) -> None:
        manager = self.servers[role].session_manager
        # (The SDK names Starlette's ASGI types; these are the same dicts, typed by Litestar.)
        await manager.handle_request(scope, receive, send)  # type: ignore[arg-type]


def _bearer(header: str | None) -> str:
    return (header or "").removeprefix("Bearer ").strip()


def _origin_allowed(origin: str | None, allowed: tuple[str, ...]) -> bool:
    if origin is None:
        return True  # not a browser: nothing to rebind
    if origin in allowed:
        return True
    return (urlsplit(origin).hostname or "") in _LOOPBACK


@asgi("/mcp", is_mount=True, copy_scope=True, include_in_schema=False)
async def mcp_route(scope: Scope, receive: Receive, send: Send) -> None:
    app = scope["litestar_app"]
    runtime = app.state.runtime
    headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
    if not _origin_allowed(headers.get("origin"), runtime.settings.mcp_origins):
        raise ForbiddenError("this Origin may not use /mcp (GATEWAY_MCP_ORIGINS)")
    endpoint: McpEndpoint = app.state.mcp
    # 401 before any tool runs; the tools' own requests then reuse this identification.
    async with identified(runtime.pool, headers.get("authorization")) as principal:
        await endpoint.handle(principal.role, scope, receive, send)
