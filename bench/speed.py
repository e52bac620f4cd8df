"""Latency of POST /v1/context and POST /v1/search over HTTP at growing memory counts, next to the
floor measured in the same run: a bare pgvector HNSW top-k and a bare GIN full-text top-k, each
alone (ARCHITECTURE §15), and, separately, the gateway's own hybrid recall SQL (``gateway.store.retrieval.recall``
on one of the gateway's pooled connections, query vectors computed beforehand).

One namespace grows 1k → 10k → 100k with the real turns of a dev corpus as they are
(``--corpus longmemeval``, the default: long chat turns, median 466 characters; ``locomo``: short
ones; ``bench.corpus.load_turns``), or the older synthetic memories of LongMemEval_S sentences
(``sentences``, 100-250 tokens each), rows exactly as the gateway writes them; queries are that
corpus's own questions. Each cell is a closed loop of ``concurrency`` clients. A stage breakdown (in-process,
``bench.stages``) shows where a /v1/context request spends its time at each size; ``--profile``
adds a cProfile of the in-process path at the largest size.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import pstats
import re
import time
from datetime import UTC, datetime
from typing import Any

from bench.corpus import CORPORA, MemorySource, bulk_load, load_corpus, load_turns
from bench.harness import (
    OUT_DIR,
    Database,
    cpu_seconds,
    embedded_postgres,
    machine,
    markdown_table,
    new_database,
    percentile,
    serve,
    write_result,
)
from bench.load import Latencies, run_count
from bench.stages import open_runtime, principal_for, timed_context
from gateway.core.model import ContextRequest
from gateway.store import retrieval
from gateway.store.scope import Scope
from gateway.store.transactions import transaction
from gateway.usecases.disclosure.retrieval import recall_depth

__all__ = ["main"]

NAMESPACE = "speed"
# The API's default since assembler 2026-12-04.2: no top_k, the full tier sized by the budget
# (and recall as deep as top_k 50's). The floor's k is the recall's per-retriever depth.
TOP_K: int | None = None
BUDGET = 4000


# The floor any system pays on the same data (ARCHITECTURE §15): a bare pgvector HNSW top-k and a
# bare GIN full-text top-k, each alone, with the same tenant and namespace filter and k = the
# recall's per-retriever limit, on the gateway's own pooled connections (same connection kind,
# same HNSW scan settings).
_BARE_VECTOR = (
    "SELECT memory_id FROM memories WHERE tenant_id = %(tenant_id)s"
    " AND namespace = %(namespace)s AND embedding_dim = 384"
    " ORDER BY embedding::vector(384) <=> %(vector)s::vector(384) LIMIT %(k)s"
)
_BARE_TEXT = (
    "SELECT memory_id FROM memories, websearch_to_tsquery('english', %(text)s) q"
    " WHERE tenant_id = %(tenant_id)s AND namespace = %(namespace)s AND tsv @@ q"
    " ORDER BY ts_rank(tsv, q) DESC LIMIT %(k)s"
)
# A question's words joined by OR, as the lexical branch matches them (any term, not all).
_OR_WORDS = re.compile(r"[A-Za-z0-9]+")


async def _floor(
    db: Database, queries: tuple[str, ...], concurrency: int, count: int, kind: str
) -> Latencies:
    """Latencies of one floor query kind: `recall` (the gateway's own recall SQL), `vector` or
    `text` (the bare top-k queries)."""
    async with open_runtime(db.app_url) as runtime:
        vectors = {q: runtime.embedder.embed([q])[0] for q in queries}
        scope = Scope(db.tenant_id, (NAMESPACE,), None, datetime.now(UTC))
        queue = [queries[i % len(queries)] for i in range(count)]
        latencies: list[float] = []
        k = recall_depth(_request(queries[0]))

        async def one(conn: Any, query: str) -> None:
            if kind == "recall":
                await retrieval.recall(
                    conn,
                    scope,
                    task=query,
                    query_vector=vectors[query],
                    embedding_model=runtime.embedder.model,
                    limit=k,
                )
                return
            base = {"tenant_id": db.tenant_id, "namespace": NAMESPACE, "k": k}
            if kind == "vector":
                vector = "[" + ",".join(repr(float(x)) for x in vectors[query]) + "]"
                await (await conn.execute(_BARE_VECTOR, base | {"vector": vector})).fetchall()
            else:
                text = " or ".join(_OR_WORDS.findall(query))
                await (await conn.execute(_BARE_TEXT, base | {"text": text})).fetchall()

        async def worker() -> None:
            while queue:
                query = queue.pop()
                async with transaction(runtime.pool, db.tenant_id) as conn:
                    started = time.perf_counter()
                    await one(conn, query)
                    latencies.append(time.perf_counter() - started)

        for query in queries[:10]:  # warm the plan and buffer caches like the endpoint's warmup
            queue.append(query)
        await worker()
        latencies.clear()
        queue[:] = [queries[i % len(queries)] for i in range(count)]
        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return Latencies(latencies, time.perf_counter() - started)


def _request(task: str) -> ContextRequest:
    return ContextRequest(task=task, namespaces=(NAMESPACE,), budget_tokens=BUDGET, top_k=TOP_K)


async def _breakdown(
    db: Database, queries: tuple[str, ...], runs: int, profile: bool
) -> tuple[dict[str, float], str | None]:
    """p50 (ms) of each stage of the in-process context path, and optionally a profile."""
    async with open_runtime(db.app_url) as runtime:
        principal = await principal_for(runtime, db.key)
        for query in queries[:5]:
            await timed_context(
                runtime, principal, _request(query), datetime.now(UTC), receipt=True
            )
        samples: list[dict[str, float]] = []
        profiler = cProfile.Profile() if profile else None
        if profiler is not None:
            profiler.enable()
        for i in range(runs):
            request = _request(queries[i % len(queries)])
            samples.append(
                await timed_context(runtime, principal, request, datetime.now(UTC), receipt=True)
            )
        report = None
        if profiler is not None:
            profiler.disable()
            out = io.StringIO()
            pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(25)
            report = out.getvalue()
    stages = samples[0].keys()
    return {s: round(1000 * percentile([x[s] for x in samples], 50), 2) for s in stages}, report


def main(argv: list[str]) -> int:  # noqa: C901  one flag per measurement, read top to bottom
    parser = argparse.ArgumentParser(prog="python -m bench speed", description=__doc__)
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--requests", type=int, default=200, help="requests per cell at c=1")
    parser.add_argument("--requests16", type=int, default=400, help="requests per cell at c=16")
    parser.add_argument("--breakdown-runs", type=int, default=60)
    parser.add_argument("--profile", action="store_true", help="cProfile at the largest size")
    parser.add_argument("--quick", action="store_true", help="a small smoke run")
    parser.add_argument("--workers", type=int, default=1, help="gateway worker processes")
    parser.add_argument("--corpus", default="longmemeval", choices=[*CORPORA, "sentences"])
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    if args.quick:
        sizes, args.requests, args.requests16, args.breakdown_runs = [300, 1500], 30, 64, 10
    corpus: MemorySource = load_corpus() if args.corpus == "sentences" else load_turns(args.corpus)
    queries = corpus.queries
    asked = {} if TOP_K is None else {"top_k": TOP_K}
    context_bodies = [
        {"task": q, "namespaces": [NAMESPACE], "budget_tokens": BUDGET, **asked} for q in queries
    ]
    search_bodies = [{"query": q, "namespaces": [NAMESPACE], "limit": 8} for q in queries]
    runs: list[dict[str, Any]] = []
    profile_report = None
    with embedded_postgres() as pg:
        db = new_database(pg, "bench_speed")
        loaded = 0
        for size in sizes:
            started = time.perf_counter()
            bulk_load(
                db.url,
                corpus,
                tenants=[(db.tenant_id, db.key_id)],
                namespace=NAMESPACE,
                start=loaded,
                stop=size,
            )
            loaded = size
            print(f"{size:,} memories loaded in {time.perf_counter() - started:.0f} s", flush=True)
            run: dict[str, Any] = {"size": size}
            with serve(db, workers=args.workers) as server:
                asyncio.run(
                    run_count(server, "/v1/context", context_bodies, concurrency=4, count=20)
                )
                asyncio.run(run_count(server, "/v1/search", search_bodies, concurrency=4, count=20))
                for c, count in ((1, args.requests), (16, args.requests16)):
                    for name, path, bodies in (
                        ("context", "/v1/context", context_bodies),
                        ("search", "/v1/search", search_bodies),
                    ):
                        used = cpu_seconds(server.pid) if server.pid else 0.0
                        found = asyncio.run(
                            run_count(server, path, bodies, concurrency=c, count=count)
                        )
                        used = (cpu_seconds(server.pid) if server.pid else 0.0) - used
                        run[f"{name}_c{c}"] = found.summary() | {
                            "server_cpu_ms": round(1000 * used / count, 2)
                        }
                        print(size, name, c, run[f"{name}_c{c}"], flush=True)
            for c, count in ((1, args.requests), (16, args.requests16)):
                for kind, name in (("recall", "floor"), ("vector", "hnsw"), ("text", "fts")):
                    found = asyncio.run(_floor(db, queries, c, count, kind))
                    run[f"{name}_c{c}"] = found.summary()
                    print(size, name, c, run[f"{name}_c{c}"], flush=True)
            last = size == sizes[-1]
            if args.breakdown_runs > 0:
                run["stages_p50_ms"], report = asyncio.run(
                    _breakdown(db, queries, args.breakdown_runs, args.profile and last)
                )
                print(size, "stages", run["stages_p50_ms"], flush=True)
                profile_report = report or profile_report
            runs.append(run)
        info = machine(pg)

    rows = []
    for r in runs:
        for c in (1, 16):
            hnsw, fts, own = (r[f"{n}_c{c}"]["p50_ms"] for n in ("hnsw", "fts", "floor"))
            # The bare floor: one vector and one text top-k, each alone, added (a request needs
            # both); the gateway's own recall is the other reference.
            bare = hnsw + fts
            for name, label in (
                ("context", "/v1/context"),
                ("search", "/v1/search"),
                ("floor", "recall SQL"),
                ("hnsw", "bare HNSW top-k"),
                ("fts", "bare GIN full-text top-k"),
            ):
                cell = r[f"{name}_c{c}"]
                rows.append(
                    [
                        f"{r['size']:,}",
                        c,
                        label,
                        cell["p50_ms"],
                        cell["p95_ms"],
                        cell["p99_ms"],
                        f"{cell['per_second']:.0f}",
                        f"{cell['p50_ms'] / bare:.1f}×",
                        f"{cell['p50_ms'] / own:.1f}×",
                        cell.get("server_cpu_ms", ""),
                    ]
                )
    table = markdown_table(
        [
            "memories",
            "c",
            "what",
            "p50 ms",
            "p95 ms",
            "p99 ms",
            "req/s",
            "÷ bare floor (HNSW + FTS p50)",
            "÷ own recall",
            "server CPU ms / request",
        ],
        rows,
    )
    growth_rows = []
    first, last_run = runs[0], runs[-1]
    for c in (1, 16):
        for name in ("context", "search", "floor"):
            a = first[f"{name}_c{c}"]["p50_ms"]
            b = last_run[f"{name}_c{c}"]["p50_ms"]
            growth_rows.append([name, c, a, b, f"{b / a:.2f}×"])
    growth = markdown_table(
        [
            "what",
            "c",
            f"p50 at {first['size']:,} (ms)",
            f"p50 at {last_run['size']:,} (ms)",
            "growth",
        ],
        growth_rows,
    )
    stage_names = list(runs[0].get("stages_p50_ms", {}))
    stages = markdown_table(
        ["memories", *stage_names],
        [[f"{r['size']:,}", *(r["stages_p50_ms"][s] for s in stage_names)] for r in runs],
    )
    result = {
        "benchmark": "speed",
        "command": "python -m bench speed " + " ".join(argv),
        "machine": info,
        "runs": runs,
        "profile": profile_report,
    }
    written = write_result("speed", result)
    print(
        "\nlatency over HTTP (closed loop, c clients) beside the bare HNSW and full-text top-k"
        " and the gateway's own recall SQL, each alone, same run\n"
    )
    print(table)
    print("\ngrowth of p50 from the smallest to the largest size\n")
    print(growth)
    print("\nin-process stage p50 (ms) of one /v1/context (c=1, receipt included)\n")
    print(stages)
    if profile_report:
        print("\ncProfile of the in-process context path at the largest size\n")
        print(profile_report)
    print(f"\nwritten to {written.relative_to(OUT_DIR.parent.parent)}")
    return 0
