"""The index fetch of a context request, with and without the entries' contents.

Index lines show headings only, so unless a rule of the policy in force reads `memory.content`,
`gateway.store.retrieval.index_entries` fetches them without it. How much that saves grows with
the budget (how many lines the index may reach). Both variants run alternately in one process on
the same database (real LongMemEval_S sentences, 100-250 tokens per memory, as `bench speed`
loads them): p50 of the query and the content bytes it brought back.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from datetime import UTC, datetime

import psycopg

from bench.corpus import bulk_load, load_corpus
from bench.harness import (
    embedded_postgres,
    machine,
    markdown_table,
    new_database,
    percentile,
    write_result,
)
from gateway.store import retrieval
from gateway.store.scope import Scope

__all__ = ["main"]

NAMESPACE = "idx"


async def _measure(url: str, tenant_id: str, budget: int, runs: int) -> dict[str, float]:
    scope = Scope(tenant_id, (NAMESPACE,), None, datetime.now(UTC))
    times: dict[bool, list[float]] = {True: [], False: []}
    rows = content_bytes = 0
    async with await psycopg.AsyncConnection.connect(url) as conn:
        for _ in range(runs):
            for with_content in (True, False):
                start = time.perf_counter()
                found = await retrieval.index_entries(
                    conn, scope, budget, with_content=with_content
                )
                times[with_content].append((time.perf_counter() - start) * 1e3)
                if with_content:
                    rows = len(found)
                    content_bytes = sum(len(c.content.encode()) for c in found)
    return {
        "rows": rows,
        "content_kb": content_bytes / 1024,
        "with_p50_ms": percentile(times[True], 50),
        "without_p50_ms": percentile(times[False], 50),
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench index", description=__doc__)
    parser.add_argument("--memories", type=int, default=10000)
    parser.add_argument("--budgets", default="4000,32000,128000")
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args(argv)
    corpus = load_corpus()
    result: dict[str, object] = {"machine": machine(), "memories": args.memories}
    rows = []
    with embedded_postgres() as pg:
        db = new_database(pg, "bench_index")
        bulk_load(
            db.url,
            corpus,
            tenants=[(db.tenant_id, db.key_id)],
            namespace=NAMESPACE,
            start=0,
            stop=args.memories,
        )
        for budget in (int(b) for b in args.budgets.split(",")):
            found = asyncio.run(_measure(db.url, db.tenant_id, budget, args.runs))
            result[str(budget)] = found
            rows.append(
                [
                    f"{budget:,}",
                    int(found["rows"]),
                    found["content_kb"],
                    found["with_p50_ms"],
                    found["without_p50_ms"],
                    f"{found['with_p50_ms'] / found['without_p50_ms']:.1f}×",
                ]
            )
    print(
        markdown_table(
            [
                "budget",
                "index rows",
                "content KB",
                "with content p50 ms",
                "without p50 ms",
                "ratio",
            ],
            rows,
        )
    )
    print(f"raw: {write_result('index', result)}")
    return 0
