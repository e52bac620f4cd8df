"""What per-key rate limiting costs (issue 16): /v1/search, interleaved per round, with a key
whose buckets are charged (the default limits) and with an unlimited key, on one gateway.

The limiter is the key lookup's own statement (an upsert of two unlogged bucket rows in a
data-modifying CTE, `gateway.store.keys`); an unlimited key runs the same statement with nothing
to charge. One closed-loop caller, so each latency is one request's; the queries cycle the
LongMemEval_S questions over a loaded corpus.
"""

from __future__ import annotations

import argparse
import asyncio
import time

import httpx
import psycopg

from bench.corpus import load_corpus, loaded_database
from bench.harness import (
    embedded_postgres,
    machine,
    markdown_table,
    percentile,
    serve,
    write_result,
)
from gateway.usecases.access.keys import issue_key

__all__ = ["main"]


async def _rounds(base_url: str, keys: dict[str, str], queries: tuple[str, ...], rounds: int) -> dict[str, list[float]]:  # fmt: skip
    times: dict[str, list[float]] = {name: [] for name in keys}
    async with httpx.AsyncClient(base_url=base_url, timeout=120) as http:
        for number in range(rounds + 5):
            for name, key in keys.items():
                body = {"query": queries[number % len(queries)], "limit": 8}
                started = time.perf_counter()
                response = await http.post("/v1/search", json=body, headers={"Authorization": f"Bearer {key}"})  # fmt: skip
                response.raise_for_status()
                if number >= 5:  # the first rounds warm connections and caches
                    times[name].append((time.perf_counter() - started) * 1000)
    return times


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench limits")
    parser.add_argument("--memories", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=300)
    args = parser.parse_args(argv)
    corpus = load_corpus()
    with embedded_postgres() as pg:
        db = loaded_database(pg, "limits", corpus, namespace="l", memories=args.memories)
        with psycopg.connect(db.url, autocommit=True) as conn:
            unlimited = issue_key(
                conn, tenant_id=db.tenant_id, role="agent", namespaces=["*"], agent_id="bench",
                requests_per_second=None, writes_per_second=None,
            )  # fmt: skip
        keys = {"limited key (200 requests/s)": db.key, "unlimited key": unlimited.key}
        with serve(db) as server:
            times = asyncio.run(_rounds(server.base_url, keys, corpus.queries[:50], args.rounds))
        info = machine(pg)
    base = percentile(times["unlimited key"], 50)
    rows = [
        [name, len(v), percentile(v, 50), percentile(v, 95), f"{percentile(v, 50) / base:.3f}×"]
        for name, v in times.items()
    ]
    print(f"{args.memories} memories, /v1/search limit 8, one caller\n")
    print(markdown_table(["key", "n", "p50 ms", "p95 ms", "p50 ÷ unlimited"], rows))
    path = write_result("limits", {"args": vars(args), "machine": info, "times_ms": times})
    print(f"\nraw: {path}")
    return 0
