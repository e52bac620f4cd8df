"""Closed-loop load over real HTTP: ``concurrency`` clients share a fixed list of requests (or run
for a fixed time) and every latency is kept; anything but 200 fails the benchmark."""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import httpx

from bench.harness import Server, percentile

__all__ = ["Latencies", "run_count", "run_for"]


@dataclass(frozen=True)
class Latencies:
    seconds: list[float]
    wall: float

    def ms(self, q: float) -> float:
        return 1000 * percentile(self.seconds, q)

    @property
    def per_second(self) -> float:
        return len(self.seconds) / self.wall if self.wall else 0.0

    def summary(self) -> dict[str, float]:
        return {
            "n": len(self.seconds),
            "p50_ms": round(self.ms(50), 2),
            "p95_ms": round(self.ms(95), 2),
            "p99_ms": round(self.ms(99), 2),
            "per_second": round(self.per_second, 1),
        }


async def _post(client: httpx.AsyncClient, path: str, body: dict[str, Any]) -> float:
    started = time.perf_counter()
    response = await client.post(path, json=body)
    elapsed = time.perf_counter() - started
    if response.status_code != 200:
        raise RuntimeError(f"{path} answered {response.status_code}: {response.text[:400]}")
    return elapsed


def _client(server: Server, headers: dict[str, str] | None, concurrency: int) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        base_url=server.base_url,
        headers=headers or server.headers,
        timeout=120,
        limits=httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency),
    )


async def run_count(
    server: Server,
    path: str,
    bodies: Sequence[dict[str, Any]],
    *,
    concurrency: int,
    count: int,
    headers: dict[str, str] | None = None,
) -> Latencies:
    """``count`` requests (cycling through ``bodies``) by ``concurrency`` clients."""
    queue = list(itertools.islice(itertools.cycle(bodies), count))
    latencies: list[float] = []
    async with _client(server, headers, concurrency) as client:

        async def worker() -> None:
            while queue:
                latencies.append(await _post(client, path, queue.pop()))

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        wall = time.perf_counter() - started
    return Latencies(latencies, wall)


async def run_for(
    server: Server,
    path: str,
    requests: Sequence[tuple[dict[str, str], dict[str, Any]]],
    *,
    concurrency: int,
    seconds: float,
) -> Latencies:
    """Clients cycle through (headers, body) pairs for ``seconds``; each client starts at its own
    offset, so with many tenants' headers the tenants interleave."""
    latencies: list[float] = []
    clients = {
        auth: httpx.AsyncClient(
            base_url=server.base_url, headers={"Authorization": auth}, timeout=120
        )
        for auth in {h["Authorization"] for h, _ in requests}
    }
    deadline = time.perf_counter() + seconds

    async def worker(offset: int) -> None:
        for position in itertools.count(offset, concurrency):
            if time.perf_counter() >= deadline:
                return
            headers, body = requests[position % len(requests)]
            latencies.append(await _post(clients[headers["Authorization"]], path, body))

    started = time.perf_counter()
    try:
        await asyncio.gather(*(worker(i) for i in range(concurrency)))
    finally:
        wall = time.perf_counter() - started
        for client in clients.values():
            await client.aclose()
    return Latencies(latencies, wall)
