"""What row-level security (migration 0010) costs POST /v1/context: an A/B in one run.

One database, one served gateway, one closed loop per round; between rounds the tenant wall is
lifted (``NO FORCE`` / ``DISABLE ROW LEVEL SECURITY`` on every walled table, as the operator) and
put back, alternating ``walled, open, walled, open, …`` so that drift in the machine's load falls
on both arms alike. The gateway still enters its tenant on every transaction in both arms; the
open arm measures the policies' absence, which is the whole of what RLS adds to a query.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
from typing import Any

import psycopg
from psycopg import sql

from bench.corpus import load_corpus, loaded_database
from bench.harness import (
    Server,
    embedded_postgres,
    machine,
    markdown_table,
    serve,
    write_result,
)
from bench.load import Latencies, run_count

__all__ = ["main"]

NAMESPACE = "wall"
_WALLED = """
SELECT c.oid::regclass::text FROM pg_class c
 WHERE c.relrowsecurity AND c.relnamespace = current_schema()::regnamespace ORDER BY 1
"""


def _set_wall(url: str, tables: list[str], *, up: bool) -> None:
    verb = "ENABLE" if up else "DISABLE"
    force = "FORCE" if up else "NO FORCE"
    with psycopg.connect(url, autocommit=True) as conn:
        for table in tables:
            name = sql.SQL(table)  # a regclass text, already quoted where needed
            conn.execute(
                sql.SQL("ALTER TABLE {} {} ROW LEVEL SECURITY").format(name, sql.SQL(verb))
            )
            conn.execute(
                sql.SQL("ALTER TABLE {} {} ROW LEVEL SECURITY").format(name, sql.SQL(force))
            )


def _round(server: Server, bodies: list[dict[str, Any]], concurrency: int, count: int) -> Latencies:
    return asyncio.run(
        run_count(server, "/v1/context", bodies, concurrency=concurrency, count=count)
    )


def _arm(rounds: list[Latencies]) -> dict[str, Any]:
    every = Latencies([s for r in rounds for s in r.seconds], sum(r.wall for r in rounds))
    return every.summary() | {
        "round_p50_ms": [round(r.ms(50), 2) for r in rounds],
        "round_per_second": [round(r.per_second, 1) for r in rounds],
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench rls", description=__doc__)
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=6, help="rounds per arm, alternating")
    parser.add_argument("--requests", type=int, default=300, help="requests per round")
    parser.add_argument("--concurrency", type=int, default=4)
    args = parser.parse_args(argv)
    corpus = load_corpus()
    bodies: list[dict[str, Any]] = [
        {"task": q, "namespaces": [NAMESPACE], "budget_tokens": 4000, "top_k": 6}
        for q in corpus.queries[:200]
    ]
    rounds: dict[str, list[Latencies]] = {"walled": [], "open": []}
    with embedded_postgres() as pg:
        db = loaded_database(pg, "bench_wall", corpus, namespace=NAMESPACE, memories=args.memories)
        with psycopg.connect(db.url) as conn:
            tables = [str(r[0]) for r in conn.execute(_WALLED).fetchall()]
        with serve(db) as server:
            _round(server, bodies, args.concurrency, 100)  # warm-up: plans and buffers
            for _ in range(args.rounds):
                for arm, latencies in rounds.items():
                    _set_wall(db.url, tables, up=arm == "walled")
                    latencies.append(_round(server, bodies, args.concurrency, args.requests))
            _set_wall(db.url, tables, up=True)
        host = machine(pg)
    walled, opened = _arm(rounds["walled"]), _arm(rounds["open"])
    p50_cost = walled["p50_ms"] / opened["p50_ms"] - 1
    throughput_cost = 1 - walled["per_second"] / opened["per_second"]
    rows = [
        (
            name,
            arm["p50_ms"],
            arm["p95_ms"],
            arm["per_second"],
            statistics.median(arm["round_p50_ms"]),
        )
        for name, arm in (("walled", walled), ("open", opened))
    ]
    print(markdown_table(("arm", "p50 ms", "p95 ms", "req/s", "median round p50 ms"), rows))
    print(f"RLS cost: p50 {p50_cost:+.1%}, throughput {throughput_cost:+.1%}")
    result = {
        "machine": host,
        "args": vars(args),
        "tables": tables,
        "arms": {"walled": walled, "open": opened},
        "p50_cost": round(p50_cost, 4),
        "throughput_cost": round(throughput_cost, 4),
    }
    print(write_result("rls", result))
    return 0
