"""A mixed load over real HTTP: half the clients write memories, half ask for context bundles.

One namespace holds ``--memories`` real LongMemEval_S turns (``bench.corpus.load_turns``); then
``--clients`` clients run for ``--seconds`` in a closed loop, the first half each posting one real
turn after another to ``POST /v1/memories`` (turns beyond the loaded ones, so every write is new),
the other half posting the LongMemEval_S questions to ``POST /v1/context`` (budget 4000, top_k 6,
receipts on, as always). Reported per kind: latency percentiles, throughput and every answer that
was not a success; and the resident memory (RSS) of each serving process, sampled through the run.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import time
from typing import Any

import httpx

from bench.corpus import bulk_load, load_turns
from bench.harness import (
    OUT_DIR,
    Server,
    embedded_postgres,
    machine,
    markdown_table,
    new_database,
    percentile,
    resident_mib,
    serve,
    write_result,
)

__all__ = ["main"]

NAMESPACE = "mixed"


async def _load(
    server: Server, writes: list[dict[str, Any]], asks: list[dict[str, Any]], args: Any
) -> tuple[dict[str, list[float]], dict[str, int], dict[int, float]]:
    latencies: dict[str, list[float]] = {"write": [], "context": []}
    failures: dict[str, int] = {}
    peak: dict[int, float] = {}
    deadline = time.perf_counter() + args.seconds
    next_write = itertools.count()
    limits = httpx.Limits(max_connections=args.clients, max_keepalive_connections=args.clients)
    async with httpx.AsyncClient(
        base_url=server.base_url, headers=server.headers, timeout=120, limits=limits
    ) as http:

        async def client(kind: str, offset: int) -> None:
            for n in itertools.count(offset, args.clients):
                if time.perf_counter() >= deadline:
                    return
                if kind == "write":
                    path, body = "/v1/memories", writes[next(next_write) % len(writes)]
                else:
                    path, body = "/v1/context", asks[n % len(asks)]
                started = time.perf_counter()
                response = await http.post(path, json=body)
                if response.is_success:
                    latencies[kind].append(time.perf_counter() - started)
                else:
                    key = f"{kind} {response.status_code}"
                    failures[key] = failures.get(key, 0) + 1

        async def sample() -> None:
            while time.perf_counter() < deadline:
                if server.pid is not None:
                    for pid, mib in resident_mib(server.pid).items():
                        peak[pid] = max(peak.get(pid, 0.0), mib)
                await asyncio.sleep(0.5)

        half = args.clients // 2
        await asyncio.gather(
            sample(),
            *(client("write", i) for i in range(half)),
            *(client("context", i) for i in range(args.clients - half)),
        )
    return latencies, failures, peak


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench mixed", description=__doc__)
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=90.0)
    parser.add_argument("--workers", type=int, default=1, help="gateway worker processes")
    args = parser.parse_args(argv)
    corpus = load_turns("longmemeval")
    writes = [
        {"namespace": NAMESPACE, "memory_type": "episodic", "heading": h, "content": c}
        for h, c in corpus.turns[args.memories :]
    ]
    asks = [
        {"task": q, "namespaces": [NAMESPACE], "budget_tokens": 4000, "top_k": 6}
        for q in corpus.queries
    ]
    with embedded_postgres() as pg:
        db = new_database(pg, "bench_mixed")
        bulk_load(
            db.url,
            corpus,
            tenants=[(db.tenant_id, db.key_id)],
            namespace=NAMESPACE,
            start=0,
            stop=args.memories,
        )
        with serve(db, workers=args.workers) as server:
            asyncio.run(_warm(server, asks))
            latencies, failures, peak = asyncio.run(_load(server, writes, asks, args))
        info = machine(pg)
    rows = []
    for kind, seconds in latencies.items():
        rows.append(
            [
                kind,
                len(seconds),
                round(1000 * percentile(seconds, 50), 1),
                round(1000 * percentile(seconds, 95), 1),
                round(1000 * percentile(seconds, 99), 1),
                round(len(seconds) / args.seconds, 1),
            ]
        )
    result = {
        "benchmark": "mixed",
        "command": "python -m bench mixed " + " ".join(argv),
        "machine": info,
        "rows": rows,
        "failures": failures,
        "rss_peak_mib": peak,
    }
    written = write_result("mixed", result)
    print(
        f"\n{args.clients} clients for {args.seconds:.0f} s (half write, half context) over "
        f"{args.memories:,} memories, {args.workers} worker(s)\n"
    )
    print(markdown_table(["kind", "n", "p50 ms", "p95 ms", "p99 ms", "per s"], rows))
    print(f"\nnot a success: {failures or 'none'}; peak RSS by process (MiB): {peak}")
    print(f"\nwritten to {written.relative_to(OUT_DIR.parent.parent)}")
    return 0


async def _warm(server: Server, asks: list[dict[str, Any]]) -> None:
    async with httpx.AsyncClient(
        base_url=server.base_url, headers=server.headers, timeout=120
    ) as http:
        for body in asks[:10]:
            (await http.post("/v1/context", json=body)).raise_for_status()
