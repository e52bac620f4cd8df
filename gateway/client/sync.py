"""The synchronous client: `Client(key, base_url)`; every v1 endpoint is one method.

The methods are `gateway.client.endpoints`', shared with `AsyncClient`; here is only how a call
is sent: on an `httpx.Client`, retried as `gateway.client.retrying` decides."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Concatenate, ParamSpec, TypeVar

import httpx

from gateway.client.call import Call, Page
from gateway.client.endpoints import DEFAULT_URL, Endpoints, client_headers, key_and_url, now
from gateway.client.retrying import DEFAULT_RETRIES, Retries

__all__ = ["DEFAULT_URL", "Client", "client_headers", "key_and_url", "now"]

P = ParamSpec("P")
T = TypeVar("T")
Item = TypeVar("Item")


class Client(Endpoints):
    """A gateway client for one key. Use it as a context manager, or call `close()`.

    `transport` swaps the network (an `httpx.MockTransport`, a fault injector); `sleep` is what
    waits between retries."""

    def __init__(
        self,
        key: str,
        base_url: str = DEFAULT_URL,
        *,
        timeout: float = 30.0,
        retries: Retries = DEFAULT_RETRIES,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._http = httpx.Client(
            base_url=base_url, headers=client_headers(key), timeout=timeout, transport=transport
        )
        self._retries = retries
        self._sleep = sleep

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] = os.environ) -> Client:
        """The key from `CTXGW_API_KEY`, the gateway from `CTXGW_URL` (default local)."""
        return cls(*key_and_url(environ))

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def _exchange(self, call: Call[T]) -> T:
        attempt = 0
        while True:
            attempt += 1
            try:
                response = self._http.send(self._request(self._http, call), stream=True)
            except httpx.TransportError as exc:
                self._sleep(self._wait_after_error(attempt, call, exc))
                continue
            try:
                wait = self._wait_after(attempt, response)
                if wait is None:
                    return self._read(call, response)
            except httpx.TransportError as exc:
                raise self._failed(call, exc) from exc
            finally:
                response.close()
            self._sleep(wait)

    def _read(self, call: Call[T], response: httpx.Response) -> T:
        if call.stream is None or not response.is_success:
            return self._answer(call, response, response.read())
        with call.stream() as sink:
            for chunk in response.iter_bytes():
                sink.write(chunk)
            return sink.finish()

    @staticmethod
    def _endpoint(build: Callable[P, Call[T]]) -> Callable[Concatenate[Client, P], T]:
        def method(self: Client, /, *args: P.args, **kwargs: P.kwargs) -> T:
            return self._exchange(build(*args, **kwargs))

        return method

    @staticmethod
    def _pages(
        build: Callable[P, Call[Page[Item]]],
    ) -> Callable[Concatenate[Client, P], Iterator[Item]]:
        def method(self: Client, /, *args: P.args, **kwargs: P.kwargs) -> Iterator[Item]:
            call: Call[Page[Item]] | None = build(*args, **kwargs)
            while call is not None:
                page = self._exchange(call)
                yield from page.items
                call = page.following

        return method
