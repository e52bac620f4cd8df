"""The auditor's console (issue 18): the receipts list page with 100k receipts in the tenant,
and one receipt's page with a 500-candidate ledger, each beside the API call that serves the
same data, in the same run, over real HTTP to the gateway in a child process.

How the data is made (honestly): six memories and one real POST /v1/context give a real context
receipt; its members (request, assembler, policy, candidates, included, excluded, index,
budget) are the template. 100k receipts are then appended in-process through the gateway's own
receipt writer (`Recorder.record`: canonical body, HMAC + Ed25519 signatures, the tenant's
chained log), 1000 per transaction, 20 agents in turn, times a millisecond apart. Their bodies
are the template's, so ~3 KB each, not the 500-candidate size. One more receipt, written the same
way, carries a 500-candidate ledger (the template's candidates repeated under new memory ids:
10 included, 490 excluded below top_k); recall gives at most 8 × top_k candidates (400), so no
real request makes one that large.

Timed (sequential requests, auditor key as Bearer, after warm-up):
- list: GET /console (newest 50, the page's columns decoded from each body) vs GET
  /v1/receipts?limit=50 (the API's page of the same size, oldest first, no body);
- list filtered: GET /console?agent_id=agent-7&kind=context vs the API with the same filter;
- receipt: GET /console/receipts/{id} (verification live, ledger rendered) vs GET
  /v1/receipts/{id} and vs that plus GET /v1/receipts/{id}/verify (what the page shows).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import tempfile
import time
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import psycopg

from bench.harness import (
    Database,
    embedded_postgres,
    machine,
    markdown_table,
    new_database,
    percentile,
    write_result,
)
from bench.receipt_cost import _serve_with_keyring  # the served gateway's generated keys
from bench.stages import principal_for
from gateway.shell.runtime import Runtime, start_runtime
from gateway.shell.settings import Settings
from gateway.store.transactions import transaction
from gateway.usecases.access.keys import issue_key
from gateway.usecases.receiptlog.kinds import CONTEXT

__all__ = ["main"]

AGENTS = 20
BATCH = 1000
HEADER = {
    "schema",
    "receipt_id",
    "kind",
    "tenant_id",
    "issued_at",
    "subject",
    "bundle",
    "log",
    "parent_receipt_id",
}  # fmt: skip  (what `Recorder.record` adds itself)
MEMORIES = [
    ("Rollback procedure", "Run atlasctl rollback --to <sha> and page the on-call engineer."),
    ("Deploy schedule", "Deploys leave every Tuesday at 10:00 UTC from a clean main branch."),
    ("Database version", "The ledger database runs PostgreSQL 16 with logical replication."),
    ("Support hours", "Support answers 07:00 to 22:00 CET on weekdays."),
    ("Refund policy", "Refunds under 200 EUR need one approval from a team lead."),
    ("Holiday rota", "The holiday rota is published every November for December."),
]


def _template(base: str, db: Database, auditor: str) -> dict[str, Any]:
    """The members of one real context receipt, written over HTTP."""
    agent = {"Authorization": f"Bearer {db.key}"}
    items = [
        {"namespace": "ops", "heading": h, "content": c, "memory_type": "semantic"}
        for h, c in MEMORIES
    ]
    with httpx.Client(base_url=base, timeout=60) as http:
        http.post("/v1/memories/batch", json={"items": items}, headers=agent).raise_for_status()
        ask = {"task": "how do I roll back a deploy?", "budget_tokens": 600, "top_k": 4}
        made = http.post("/v1/context", json=ask, headers=agent)
        made.raise_for_status()
        receipt_id = made.json()["receipt_id"]
        body = http.get(
            f"/v1/receipts/{receipt_id}", headers={"Authorization": f"Bearer {auditor}"}
        ).json()["body"]
    return {k: v for k, v in body.items() if k not in HEADER}


def _wide(members: dict[str, Any], candidates: int) -> dict[str, Any]:
    """The template's ledger widened to `candidates`: new ids, 10 included, the rest excluded."""
    cands, included = members["candidates"], members["included"]
    ids = [f"01M9{n:022d}" for n in range(candidates)]
    wide_c = [{**cands[n % len(cands)], "memory_id": i} for n, i in enumerate(ids)]
    wide_i = [{**included[n % len(included)], "memory_id": i} for n, i in enumerate(ids[:10])]
    wide_e = [
        {"memory_id": i, "reason": "below_top_k", "detail": f"ranked {n + 11}; top_k is 10"}
        for n, i in enumerate(ids[10:])
    ]
    return {**members, "candidates": wide_c, "included": wide_i, "excluded": wide_e}


@contextlib.asynccontextmanager
async def _runtime(db: Database, keyring: Path) -> AsyncIterator[Runtime]:
    """The gateway's runtime in this process, signing with the served gateway's keys (so that
    its live verification holds)."""
    with tempfile.TemporaryDirectory(prefix="ctxgw-bench-console-") as data_dir:
        settings = Settings(
            database_url=db.app_url,
            data_dir=Path(data_dir),
            migrate_on_start=False,
            pool_min_size=1,
            pool_max_size=2,
            receipt_keyring=keyring,
            receipt_ed25519_key=keyring.parent / "ed25519.pem",
            log_level="WARNING",
        )
        async with start_runtime(settings) as runtime:
            yield runtime


async def _append(
    db: Database, keyring: Path, members: dict[str, Any], count: int
) -> tuple[str, str, float]:
    """`count` receipts through the receipt writer, then the wide one; its id, a memory only it
    disclosed, and the rate."""
    async with _runtime(db, keyring) as runtime:
        principal = await principal_for(runtime, db.key)
        recorder = runtime.discloser.recorder
        start_at = datetime.now(UTC) - timedelta(days=3)
        typed = CONTEXT.read(members)
        started = time.perf_counter()
        for first in range(0, count, BATCH):
            async with transaction(runtime.pool, principal.tenant_id) as conn:
                for n in range(first, min(first + BATCH, count)):
                    who = replace(principal, agent_id=f"agent-{n % AGENTS}")
                    await recorder.record(
                        conn,
                        who,
                        kind=CONTEXT,
                        issued_at=start_at + timedelta(milliseconds=n),
                        purpose="support",
                        delivered=b"bundle %d" % n,
                        members=typed,
                        disclosed_ids=[i["memory_id"] for i in members["included"]],
                        policy_digest=members["policy"]["digest"],
                    )
        rate = count / (time.perf_counter() - started)
        wide = _wide(members, 500)
        async with transaction(runtime.pool, principal.tenant_id) as conn:
            wide_id = await recorder.record(
                conn,
                replace(principal, agent_id="agent-wide"),
                kind=CONTEXT,
                issued_at=datetime.now(UTC) - timedelta(seconds=1),
                purpose="support",
                delivered=b"the wide bundle",
                members=CONTEXT.read(wide),
                disclosed_ids=[i["memory_id"] for i in wide["included"]],
                policy_digest=wide["policy"]["digest"],
            )
    return wide_id, wide["included"][0]["memory_id"], rate


def _timed(http: httpx.Client, paths: list[str], runs: int, headers: dict[str, str]) -> list[float]:
    """Milliseconds per run, a run being every path in turn (each must answer 200)."""
    times = []
    for run in range(runs + 5):
        start = time.perf_counter()
        for path in paths:
            response = http.get(path, headers=headers)
            assert response.status_code == 200, (path, response.status_code, response.text[:300])
        if run >= 5:  # the first five warm the caches and the pool
            times.append((time.perf_counter() - start) * 1e3)
    return times


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench console", description=__doc__)
    parser.add_argument("--receipts", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args(argv)
    with embedded_postgres() as server:
        db = new_database(server, "console")
        with psycopg.connect(db.url, autocommit=True) as conn:
            auditor = issue_key(conn, tenant_id=db.tenant_id, role="auditor", namespaces=["*"]).key
        with _serve_with_keyring(db) as (served, keyring):
            members = _template(served.base_url, db, auditor)
            wide_id, rare, rate = asyncio.run(_append(db, keyring, members, args.receipts))
            with psycopg.connect(db.url, autocommit=True) as conn:
                # What autovacuum does after a bulk load, so that plans are those of a store
                # that has its statistics.
                conn.execute("ANALYZE receipts")
            common = members["included"][0]["memory_id"]  # disclosed by every receipt
            headers = {"Authorization": f"Bearer {auditor}", "Accept": "text/html"}
            filtered = "agent_id=agent-7&kind=context"
            cases = {
                "list page": ["/console"],
                "list API (limit 50)": ["/v1/receipts?limit=50"],
                "list page, filtered": [f"/console?{filtered}"],
                "list API, filtered": [f"/v1/receipts?limit=50&{filtered}"],
                # "Which agents ever saw memory Y": one receipt of 100k disclosed it, or all did.
                "list API, a memory one receipt disclosed": [
                    f"/v1/receipts?limit=50&memory_id={rare}"
                ],
                "list page, a memory one receipt disclosed": [f"/console?memory_id={rare}"],
                "list API, a memory every receipt disclosed": [
                    f"/v1/receipts?limit=50&memory_id={common}"
                ],
                "receipt page (500 candidates)": [f"/console/receipts/{wide_id}"],
                "receipt API get": [f"/v1/receipts/{wide_id}"],
                "receipt API get + verify": [
                    f"/v1/receipts/{wide_id}",
                    f"/v1/receipts/{wide_id}/verify",
                ],
            }
            with httpx.Client(base_url=served.base_url, timeout=60) as http:
                page = http.get(f"/console/receipts/{wide_id}", headers=headers).text
                assert page.count('<tr class="out">') == 490 and "checked now: valid" in page
                times = {
                    name: _timed(http, paths, args.runs, headers) for name, paths in cases.items()
                }
    rows = [
        [name, round(percentile(t, 50), 1), round(percentile(t, 95), 1)]
        for name, t in times.items()
    ]
    print(f"{args.receipts} receipts appended at {rate:.0f}/s through the receipt writer")
    print(markdown_table(["request", "p50 ms", "p95 ms"], rows))
    path = write_result(
        "console",
        {
            "machine": machine(server=None),
            "receipts": args.receipts + 2,
            "append_rate_per_s": round(rate),
            "runs": args.runs,
            "ms": {name: {"p50": r[1], "p95": r[2]} for name, r in zip(times, rows, strict=True)},
        },
    )
    print(f"written {path}")
    return 0
