"""Deadlines for slow clients: a request's headers, then its body, must arrive in time.

uvicorn bounds only the idle time between keep-alive requests (`timeout_keep_alive`): a client
that sends its headers a byte at a time, or announces a body and never sends it, holds a
connection (and, for a body, a handler and a pool slot) for as long as it likes. Two deadlines
close that:

- **headers** (`GATEWAY_HEADER_TIMEOUT_SECONDS`): from the moment a connection opens, or the
  previous response on it ends, to the end of the next request's headers. Enforced in uvicorn's
  h11 protocol (`DeadlinedH11Protocol`), since no ASGI app sees a request before its headers;
  past it the connection is closed.
- **body** (`GATEWAY_BODY_TIMEOUT_SECONDS`): from the headers to the last byte of the body.
  Enforced on the ASGI `receive` (`with_body_deadline`); past it the request fails with a 408
  problem and the connection closes.

The protocol subclass uses uvicorn's h11 protocol internals (`conn`, `transport`,
`handle_events`, `on_response_complete`); uvicorn is pinned below its next major version in
pyproject.toml and `tests/gateway/test_slow_clients.py` proves both deadlines over a real socket.
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any

import h11
from litestar.enums import ScopeType
from litestar.types import ASGIApp, Receive, ReceiveMessage, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

from gateway.domain.errors import RequestTimeoutError

__all__ = ["DeadlinedH11Protocol", "http_protocol", "with_body_deadline"]


class DeadlinedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol, closing a connection whose request headers are late."""

    def __init__(self, *args: Any, header_timeout: float, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._header_timeout = header_timeout
        self._header_deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        # The next request on this keep-alive connection has its own deadline, unless its
        # headers were already in (pipelined) and it is being answered.
        if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
            self._arm()

    def handle_events(self) -> None:
        super().handle_events()
        # Past IDLE the headers are in: the body (if any) is the ASGI deadline's.
        if self.conn.their_state is not h11.IDLE:
            self._disarm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._disarm()
        self._header_deadline = self.loop.call_later(self._header_timeout, self._headers_late)

    def _disarm(self) -> None:
        if self._header_deadline is not None:
            self._header_deadline.cancel()
            self._header_deadline = None

    def _headers_late(self) -> None:
        self._header_deadline = None
        if not self.transport.is_closing():
            self.transport.close()


def http_protocol(header_timeout: float) -> Any:
    """What uvicorn's `Config(http=...)` takes: the protocol with its deadline bound (a
    partial of a module-level class, so that `--workers` can hand it to spawned processes)."""
    return functools.partial(DeadlinedH11Protocol, header_timeout=header_timeout)


def with_body_deadline(app: ASGIApp, seconds: float) -> ASGIApp:
    """The request body must be complete within `seconds` of the app first asking for it."""

    async def deadlined(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != ScopeType.HTTP:
            await app(scope, receive, send)
            return
        deadline: float | None = None
        complete = False

        async def receiving() -> ReceiveMessage:
            nonlocal deadline, complete
            if complete:  # after the body: waiting for a disconnect is not the client's delay
                return await receive()
            loop = asyncio.get_running_loop()
            if deadline is None:
                deadline = loop.time() + seconds
            try:
                async with asyncio.timeout_at(deadline):
                    message = await receive()
            except TimeoutError:
                raise RequestTimeoutError(
                    f"the request body did not arrive within {seconds:g} s "
                    "(GATEWAY_BODY_TIMEOUT_SECONDS)"
                ) from None
            complete = message["type"] != "http.request" or not message.get("more_body", False)
            return message

        await app(scope, receiving, send)

    return deadlined
