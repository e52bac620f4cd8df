"""The asynchronous client: `AsyncClient(key, base_url)`, the same methods as `Client`, awaited.

The methods are `gateway.client.endpoints`', shared with `Client`; here is only how a call is
sent: on an `httpx.AsyncClient`, retried as `gateway.client.retrying` decides."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Mapping
from typing import Any, Concatenate, ParamSpec, TypeVar

import httpx

from gateway.client.call import Call, Page
from gateway.client.endpoints import DEFAULT_URL, Endpoints, client_headers, key_and_url
from gateway.client.retrying import DEFAULT_RETRIES, Retries

__all__ = ["AsyncClient"]

P = ParamSpec("P")
T = TypeVar("T")
Item = TypeVar("Item")


class AsyncClient(Endpoints):
    """A gateway client for one key. Use it as a context manager, or call `aclose()`.

    `transport` swaps the network (an `httpx.MockTransport`, a fault injector); `sleep` is what
    waits between retries."""

    def __init__(
        self,
        key: str,
        base_url: str = DEFAULT_URL,
        *,
        timeout: float = 30.0,
        retries: Retries = DEFAULT_RETRIES,
        transport: httpx.AsyncBaseTransport | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._http = httpx.AsyncClient(
            base_url=base_url, headers=client_headers(key), timeout=timeout, transport=transport
        )
        self._retries = retries
        self._sleep = sleep

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] = os.environ) -> AsyncClient:
        """The key from `CTXGW_API_KEY`, the gateway from `CTXGW_URL` (default local)."""
        return cls(*key_and_url(environ))

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _exchange(self, call: Call[T]) -> T:
        attempt = 0
        while True:
            attempt += 1
            try:
                response = await self._http.send(self._request(self._http, call), stream=True)
            except httpx.TransportError as exc:
                await self._sleep(self._wait_after_error(attempt, call, exc))
                continue
            try:
                wait = self._wait_after(attempt, response)
                if wait is None:
                    return await self._read(call, response)
            except httpx.TransportError as exc:
                raise self._failed(call, exc) from exc
            finally:
                await response.aclose()
            await self._sleep(wait)

    async def _read(self, call: Call[T], response: httpx.Response) -> T:
        if call.stream is None or not response.is_success:
            return self._answer(call, response, await response.aread())
        with call.stream() as sink:
            async for chunk in response.aiter_bytes():
                sink.write(chunk)
            return sink.finish()

    @staticmethod
    def _endpoint(
        build: Callable[P, Call[T]],
    ) -> Callable[Concatenate[AsyncClient, P], Coroutine[Any, Any, T]]:
        async def method(self: AsyncClient, /, *args: P.args, **kwargs: P.kwargs) -> T:
            return await self._exchange(build(*args, **kwargs))

        return method

    @staticmethod
    def _pages(
        build: Callable[P, Call[Page[Item]]],
    ) -> Callable[Concatenate[AsyncClient, P], AsyncIterator[Item]]:
        async def method(
            self: AsyncClient, /, *args: P.args, **kwargs: P.kwargs
        ) -> AsyncIterator[Item]:
            call: Call[Page[Item]] | None = build(*args, **kwargs)
            while call is not None:
                page = await self._exchange(call)
                for item in page.items:
                    yield item
                call = page.following

        return method
