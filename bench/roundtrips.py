"""Database round trips per request, counted on the wire.

The gateway runs in-process on a pool of exactly one connection, so every request of the app uses
that connection; libpq's protocol trace (``PGconn.trace``) is attached to it. A round trip is a
turn of the conversation: the client sends one or more messages, then reads the server's answer;
in the trace, a run of client (F) messages followed by server (B) messages. Statements sent
together in a pipeline and read together count once. Requests go through the real ASGI app
(Litestar's in-process client, same event loop), after warm-up requests that make the state
steady (the shipped default policy stored, plans cached). Messages the client sends are counted
too (Query, Parse, Bind, Execute, Sync) to show what the trips carry.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from litestar.testing import AsyncTestClient
from psycopg.pq import Trace

from bench.corpus import load_corpus, loaded_database
from bench.harness import embedded_postgres, markdown_table, write_result
from gateway.http.app import create_app
from gateway.runtime import start_runtime
from gateway.settings import Settings

__all__ = ["count_round_trips", "main"]

NAMESPACE = "trips"
_SENT = ("Query", "Parse", "Bind", "Execute", "Sync", "Flush")


def _tally(trace: str) -> Counter[str]:
    found: Counter[str] = Counter()
    previous = ""
    for line in trace.splitlines():
        parts = line.split("\t")
        if len(parts) >= 3 and parts[0] in ("F", "B"):
            direction, message = parts[0], parts[2].split(" ")[0]
            if direction == "F" and message in _SENT:
                found[message] += 1
            found["round_trips"] += previous == "F" and direction == "B"
            previous = direction
    return found


async def count_round_trips(
    url: str, key: str, requests: list[tuple[str, dict[str, Any]]], *, warmup: int = 3
) -> list[Counter[str]]:
    """The wire tally of each request (path, JSON body), after `warmup` rounds of them all."""
    with tempfile.TemporaryDirectory(prefix="ctxgw-bench-trips-") as data_dir:
        settings = Settings(
            database_url=url,
            data_dir=Path(data_dir),
            migrate_on_start=False,
            pool_min_size=1,
            pool_max_size=1,
            log_level="WARNING",
        )
        async with start_runtime(settings) as runtime:
            app = create_app(settings, runtime=runtime)
            headers = {"Authorization": f"Bearer {key}"}
            async with AsyncTestClient(app=app) as client:
                for _ in range(warmup):
                    for path, body in requests:
                        (await client.post(path, json=body, headers=headers)).raise_for_status()
                tallies = []
                trace_path = Path(data_dir) / "trace.txt"
                for path, body in requests:
                    conn = await runtime.pool.getconn()
                    with trace_path.open("w") as out:
                        conn.pgconn.trace(out.fileno())
                        conn.pgconn.set_trace_flags(Trace.SUPPRESS_TIMESTAMPS)
                        await runtime.pool.putconn(conn)
                        response = await client.post(path, json=body, headers=headers)
                        conn = await runtime.pool.getconn()
                        conn.pgconn.untrace()
                        await runtime.pool.putconn(conn)
                    response.raise_for_status()
                    tallies.append(_tally(trace_path.read_text()))
                    if os.environ.get("CTXGW_TRACE_DUMP"):
                        print(path, trace_path.read_text(), sep="\n")
                return tallies


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench roundtrips", description=__doc__)
    parser.add_argument("--memories", type=int, default=1000)
    parser.add_argument("--requests", type=int, default=5, help="requests per endpoint")
    args = parser.parse_args(argv)
    corpus = load_corpus()
    queries = corpus.queries[: args.requests]
    requests: list[tuple[str, dict[str, Any]]] = [
        ("/v1/context", {"task": q, "namespaces": [NAMESPACE]}) for q in queries
    ] + [("/v1/search", {"query": q, "namespaces": [NAMESPACE]}) for q in queries]
    with embedded_postgres() as pg:
        db = loaded_database(
            pg, "bench_roundtrips", corpus, namespace=NAMESPACE, memories=args.memories
        )
        tallies = asyncio.run(count_round_trips(db.url, db.key, requests))
    rows = []
    for path in ("/v1/context", "/v1/search"):
        mine = [t for (p, _), t in zip(requests, tallies, strict=True) if p == path]
        trips = sorted(t["round_trips"] for t in mine)
        sent = {m: max(t[m] for t in mine) for m in _SENT}
        rows.append([path, trips[0], trips[-1], *(sent[m] for m in _SENT)])
    table = markdown_table(
        ["endpoint", "round trips (min)", "round trips (max)", *(f"{m} msgs" for m in _SENT)],
        rows,
    )
    write_result(
        "roundtrips",
        {
            "benchmark": "roundtrips",
            "command": "python -m bench roundtrips " + " ".join(argv),
            "pid": os.getpid(),
            "rows": rows,
        },
    )
    print(table)
    return 0
