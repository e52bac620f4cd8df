"""Failing fast while PostgreSQL is down, and coming back without a restart (ARCHITECTURE §14).

`GatedPool` is the gateway's connection pool with a gate in front of it. A connection-level
failure makes the pool suspect the server: a probe connects afresh (bounded by a 1 s timeout),
and while it cannot, the gate is shut: every request is refused at once (503 with Retry-After,
`gateway.store.transactions.transaction`) instead of queueing for a connection that will not come,
and requests already waiting give up within a slice. The probe retries every quarter second;
when the server answers it checks the pooled connections (dropping the dead ones) and opens the
gate. The pool's own reconnection gives up after `RECONNECT_SECONDS`, so no connection slot sits
in a long backoff when the server returns: the next request grows the pool afresh.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from time import monotonic
from typing import Any

import psycopg
from psycopg_pool import AsyncConnectionPool, PoolTimeout

__all__ = ["PROBE_INTERVAL_SECONDS", "RECONNECT_SECONDS", "GatedPool"]

_log = logging.getLogger(__name__)

PROBE_INTERVAL_SECONDS = 0.25
PROBE_TIMEOUT_SECONDS = 1.0
RECONNECT_SECONDS = 2.0
# How long a request waits for a pooled connection before it looks at the gate again.
_WAIT_SLICE_SECONDS = 0.25

Connection = psycopg.AsyncConnection[tuple[object, ...]]


class GatedPool(AsyncConnectionPool[Connection]):
    def __init__(self, url: str, *, kwargs: dict[str, Any], **options: Any) -> None:
        super().__init__(url, kwargs=kwargs, reconnect_timeout=RECONNECT_SECONDS, **options)
        self._url = url
        self._connect_kwargs = kwargs
        self._shut = False
        self._probe: asyncio.Task[None] | None = None

    @property
    def shut(self) -> bool:
        """Whether the server is known not to answer (a probe is retrying)."""
        return self._shut

    def suspect(self) -> None:
        """A connection failed: probe the server (once at a time) and shut the gate until it
        answers. Cheap to call on every failure."""
        if self._probe is None or self._probe.done():
            self._probe = asyncio.get_running_loop().create_task(
                self._watch(), name="ctxgw-database-probe"
            )

    async def getconn(self, timeout: float | None = None) -> Connection:  # noqa: ASYNC109  the pool's
        """A pooled connection, as the pool gives it, but never while the gate is shut: a
        request waiting when it shuts gives up within a slice (`PoolTimeout`)."""
        deadline = monotonic() + (self.timeout if timeout is None else timeout)
        while True:
            if self._shut:
                raise PoolTimeout("the database does not answer (a probe is retrying)")
            left = deadline - monotonic()
            try:
                return await super().getconn(timeout=max(0.0, min(_WAIT_SLICE_SECONDS, left)))
            except PoolTimeout:
                if monotonic() >= deadline:
                    raise

    async def close(self, timeout: float = 5.0) -> None:  # noqa: ASYNC109  the pool's signature
        if self._probe is not None:
            self._probe.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._probe
        await super().close(timeout)

    async def _watch(self) -> None:
        while not await self._answers():
            if not self._shut:
                _log.warning("the database does not answer: refusing requests until it does")
            self._shut = True
            await asyncio.sleep(PROBE_INTERVAL_SECONDS)
        if self._shut:
            await self.check()  # drop the connections the outage killed; refill the pool
            _log.warning("the database answers again: serving")
        self._shut = False

    async def _answers(self) -> bool:
        kwargs = {**self._connect_kwargs, "connect_timeout": max(1, round(PROBE_TIMEOUT_SECONDS))}
        try:
            async with asyncio.timeout(PROBE_TIMEOUT_SECONDS + 0.5):
                conn = await psycopg.AsyncConnection.connect(self._url, **kwargs)
                async with conn:
                    await conn.execute("SELECT 1")
        except (psycopg.Error, OSError, TimeoutError) as exc:
            _log.info("database probe: %s", exc)
            return False
        return True
