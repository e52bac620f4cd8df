"""Receipt cost (issue 5): overhead on a context assembly, receipts/s for one tenant and across
64, and export + offline verification throughput.

1. Overhead, in-process (the gateway has no receipts-off switch): on one pooled connection in one
   committed transaction, (a) policy + gather + the pure core without a receipt, vs (b) the same
   through ``Discloser.record`` (canonical body, HMAC + Ed25519 DSSE signatures,
   append under the tenant's log-head lock, commit). Alternated per task, same inputs.
2. Throughput over HTTP: 16 closed-loop clients on POST /v1/context for a fixed time, all for one
   tenant (its requests serialize on the log head) and spread over 64 tenants (each with the same
   200 memories). Every answered request wrote exactly one receipt; the chains are checked
   gapless afterwards.
3. Export + verify: GET /v1/receipts/export of the single tenant (auditor key), then
   ``receipts.verify_export`` offline with the server's keyring (signatures, canonical form,
   chain, Merkle root against the signed checkpoint).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import psycopg

from bench.corpus import bulk_load, load_corpus
from bench.harness import (
    OUT_DIR,
    Database,
    Server,
    embedded_postgres,
    machine,
    markdown_table,
    new_database,
    percentile,
    serve,
    write_result,
)
from bench.load import run_for
from bench.stages import open_runtime, principal_for, timed_context
from gateway.core.model import ContextRequest
from gateway.usecases.access.keys import issue_key
from receipts import Keyring, verify_export

__all__ = ["main"]

NAMESPACE = "r"
TENANTS = 64


@contextlib.contextmanager
def _serve_with_keyring(db: Database) -> Iterator[tuple[Server, Path]]:
    """``harness.serve``, plus the keyring the server generates (``bench.serve`` puts its data
    dir under ``tempfile``'s directory, which the child takes from TMPDIR)."""
    with tempfile.TemporaryDirectory(prefix="ctxgw-bench-keys-") as parent:
        saved = os.environ.get("TMPDIR")
        os.environ["TMPDIR"] = parent
        try:
            with serve(db) as server:
                if saved is None:
                    del os.environ["TMPDIR"]
                else:
                    os.environ["TMPDIR"] = saved
                (keyring,) = Path(parent).glob("ctxgw-bench-*/keys/keyring.json")
                yield server, keyring
        finally:
            if saved is not None:
                os.environ["TMPDIR"] = saved


async def _overhead(db: Database, queries: tuple[str, ...], runs: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {"without": [], "with": []}
    stages: dict[str, list[float]] = {}
    async with open_runtime(db.app_url) as runtime:
        principal = await principal_for(runtime, db.key)
        for i in range(runs + 5):
            request = ContextRequest(
                task=queries[i % len(queries)],
                namespaces=(NAMESPACE,),
                budget_tokens=4000,
                top_k=6,
            )
            now = datetime.now(UTC)
            order = (False, True) if i % 2 else (True, False)
            for receipt in order:
                found = await timed_context(runtime, principal, request, now, receipt=receipt)
                if i >= 5:  # warm-up
                    times["with" if receipt else "without"].append(found["total"])
                    for stage, seconds in found.items():
                        key = f"{stage} ({'with' if receipt else 'without'})"
                        stages.setdefault(key, []).append(seconds)
    return times | stages


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench receipts", description=__doc__)
    parser.add_argument("--memories", type=int, default=10000, help="for the overhead part")
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    if args.quick:
        args.memories, args.runs, args.seconds = 1000, 10, 3.0
    corpus = load_corpus()
    queries = corpus.queries
    result: dict[str, Any] = {
        "benchmark": "receipts",
        "command": "python -m bench receipts " + " ".join(argv),
    }
    with embedded_postgres() as pg:
        db = new_database(pg, "bench_receipts", tenant="t00")
        tenants = [(db.tenant_id, db.key_id, db.key)]
        with psycopg.connect(db.url, autocommit=True) as conn:
            for n in range(1, TENANTS):
                issued = issue_key(
                    conn, tenant_id=f"t{n:02d}", role="agent", namespaces=["*"], agent_id="bench"
                )
                tenants.append((issued.tenant_id, issued.key_id, issued.key))
            # The single-tenant run and the export use t01: t00's log also holds the in-process
            # receipts of part 1, signed with that runtime's own generated keys.
            auditor = issue_key(conn, tenant_id="t01", role="auditor", namespaces=["*"])
        # Overhead: the first tenant gets the full corpus.
        bulk_load(
            db.url,
            corpus,
            tenants=[(db.tenant_id, db.key_id)],
            namespace=NAMESPACE,
            start=0,
            stop=args.memories,
        )
        overhead = asyncio.run(_overhead(db, queries, args.runs))
        without, with_ = overhead["without"], overhead["with"]
        print("overhead p50", percentile(without, 50), percentile(with_, 50), flush=True)
        # Throughput: 64 tenants × the same 200 memories, in another namespace.
        bulk_load(
            db.url,
            corpus,
            tenants=[(t, k) for t, k, _ in tenants],
            namespace="tp",
            start=0,
            stop=200,
        )
        bodies = [{"task": q, "namespaces": ["tp"], "budget_tokens": 4000} for q in queries]
        single = [({"Authorization": f"Bearer {tenants[1][2]}"}, b) for b in bodies]
        spread = [
            ({"Authorization": f"Bearer {tenants[i % TENANTS][2]}"}, bodies[i % len(bodies)])
            for i in range(TENANTS * 4)
        ]
        with _serve_with_keyring(db) as (server, keyring_path):
            asyncio.run(run_for(server, "/v1/context", spread, concurrency=4, seconds=2))
            one = asyncio.run(
                run_for(
                    server, "/v1/context", single, concurrency=args.clients, seconds=args.seconds
                )
            )
            print("one tenant", one.summary(), flush=True)
            many = asyncio.run(
                run_for(
                    server, "/v1/context", spread, concurrency=args.clients, seconds=args.seconds
                )
            )
            print("64 tenants", many.summary(), flush=True)
            started = time.perf_counter()
            response = httpx.get(
                server.base_url + "/v1/receipts/export",
                headers={"Authorization": f"Bearer {auditor.key}"},
                timeout=600,
            )
            response.raise_for_status()
            export_seconds = time.perf_counter() - started
            lines = response.text.splitlines()
            keyring = Keyring.load(keyring_path)
        started = time.perf_counter()
        report = verify_export(lines, keyring)
        verify_seconds = time.perf_counter() - started
        with psycopg.connect(db.url) as conn:
            chains = conn.execute(
                "SELECT tenant_id, count(*), max(seq) FROM receipts GROUP BY tenant_id"
            ).fetchall()
        gapless = all(count == top for _, count, top in chains)
        info = machine(pg)
    stage_names = sorted({k.rsplit(" (", 1)[0] for k in overhead if "(" in k})
    stage_rows = [
        [
            stage,
            1000 * percentile(overhead.get(f"{stage} (without)", [0.0]), 50),
            1000 * percentile(overhead.get(f"{stage} (with)", [0.0]), 50),
        ]
        for stage in stage_names
    ]
    p50a, p50b = percentile(without, 50), percentile(with_, 50)
    p99a, p99b = percentile(without, 99), percentile(with_, 99)
    overhead_table = markdown_table(
        ["context assembly, in-process, committed", "n", "p50 ms", "p99 ms"],
        [
            ["(a) policy + gather + core, no receipt", len(without), 1000 * p50a, 1000 * p99a],
            ["(b) the same + receipt (sign, append, commit)", len(with_), 1000 * p50b, 1000 * p99b],
            [
                "overhead (b − a) / a",
                "",
                f"{100 * (p50b - p50a) / p50a:+.1f}%",
                f"{100 * (p99b - p99a) / p99a:+.1f}%",
            ],
        ],
    )
    stage_table = markdown_table(["stage", "p50 ms without", "p50 ms with"], stage_rows)
    receipts_count = report.receipts
    throughput_table = markdown_table(
        ["what", "receipts", "seconds", "receipts/s", "p50 ms", "p99 ms"],
        [
            [
                f"POST /v1/context, 1 tenant, {args.clients} clients",
                len(one.seconds),
                round(one.wall, 1),
                f"{one.per_second:.1f}",
                one.ms(50),
                one.ms(99),
            ],
            [
                f"POST /v1/context, {TENANTS} tenants, {args.clients} clients",
                len(many.seconds),
                round(many.wall, 1),
                f"{many.per_second:.1f}",
                many.ms(50),
                many.ms(99),
            ],
            [
                "GET /v1/receipts/export (1 tenant, JSONL)",
                receipts_count,
                round(export_seconds, 2),
                f"{receipts_count / export_seconds:.0f}",
                "",
                "",
            ],
            [
                "receipts.verify_export offline",
                receipts_count,
                round(verify_seconds, 2),
                f"{receipts_count / verify_seconds:.0f}",
                "",
                "",
            ],
        ],
    )
    result |= {
        "machine": info,
        "memories": args.memories,
        "overhead_ms": {
            "p50_without": 1000 * p50a,
            "p50_with": 1000 * p50b,
            "p99_without": 1000 * p99a,
            "p99_with": 1000 * p99b,
        },
        "stages": stage_rows,
        "one_tenant": one.summary(),
        "many_tenants": many.summary(),
        "export_seconds": export_seconds,
        "verify_seconds": verify_seconds,
        "exported_receipts": receipts_count,
        "chains_gapless": gapless,
        "tenants_with_receipts": len(chains),
    }
    path = write_result("receipts", result)
    print(f"\nreceipt overhead ({args.memories:,} memories, shipped default policy)\n")
    print(overhead_table)
    print("\nstage p50 inside those transactions\n")
    print(stage_table)
    print(f"\nthroughput, export and offline verification (chains gapless: {gapless})\n")
    print(throughput_table)
    print(f"\nwritten to {path.relative_to(OUT_DIR.parent.parent)}")
    return 0
