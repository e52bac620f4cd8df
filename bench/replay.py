"""Exact replay of real context receipts (ARCHITECTURE §9, issue 6).

LongMemEval_S questions (MIT), each in its own namespace with every turn written as an episodic
memory over HTTP; ``POST /v1/context`` with the question as task at 800 / 2000 / 4000 tokens; then
every context receipt goes through ``POST /v1/receipts/{id}/replay`` with ``mode: exact`` (admin
key). Reported: the share reproduced byte for byte (``identical``), every ``problems`` entry and
hash mismatch, and replay latency next to the original /v1/context latency.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from typing import Any

import httpx
import psycopg

from bench.harness import (
    OUT_DIR,
    embedded_postgres,
    machine,
    markdown_table,
    new_database,
    percentile,
    serve,
    write_result,
)
from bench.longmemeval import Question, load_questions, memory_items
from gateway.usecases.access.keys import issue_key

__all__ = ["main"]

BUDGETS = (800, 2000, 4000)
BATCH = 100


async def _run(
    base_url: str, agent: dict[str, str], admin: dict[str, str], questions: list[Question]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    contexts: list[dict[str, Any]] = []
    replays: list[dict[str, Any]] = []
    async with (
        httpx.AsyncClient(base_url=base_url, headers=agent, timeout=300) as client,
        httpx.AsyncClient(base_url=base_url, headers=admin, timeout=300) as auditor,
    ):
        for number, question in enumerate(questions, 1):
            items = memory_items(question)
            written = await asyncio.gather(
                *(
                    client.post("/v1/memories/batch", json={"items": items[i : i + BATCH]})
                    for i in range(0, len(items), BATCH)
                )
            )
            for response in written:
                response.raise_for_status()
                if response.json()["failed"]:
                    raise RuntimeError(f"{question.question_id}: {response.text[:300]}")
            for budget in BUDGETS:
                body = {
                    "task": question.question,
                    "namespaces": [question.namespace],
                    "budget_tokens": budget,
                }
                started = time.perf_counter()
                response = await client.post("/v1/context", json=body)
                elapsed = time.perf_counter() - started
                response.raise_for_status()
                answer = response.json()
                contexts.append(
                    {
                        "question_id": question.question_id,
                        "budget": budget,
                        "receipt_id": answer["receipt_id"],
                        "bundle_sha256": answer["bundle_sha256"],
                        "seconds": elapsed,
                    }
                )
            print(f"{number}/{len(questions)} {question.question_id}", flush=True)
        for context in contexts:
            started = time.perf_counter()
            response = await auditor.post(
                f"/v1/receipts/{context['receipt_id']}/replay", json={"mode": "exact"}
            )
            elapsed = time.perf_counter() - started
            response.raise_for_status()
            found = response.json()
            replays.append(
                {
                    "receipt_id": context["receipt_id"],
                    "question_id": context["question_id"],
                    "budget": context["budget"],
                    "identical": found["identical"],
                    "problems": found["problems"],
                    "original_sha256": found["original"]["bundle_sha256"],
                    "response_sha256": context["bundle_sha256"],
                    "replayed_sha256": found["replayed"]["bundle_sha256"],
                    "diff": found["diff"] if not found["identical"] else None,
                    "seconds": elapsed,
                }
            )
    return contexts, replays


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench replay", description=__doc__)
    parser.add_argument("--questions", type=int, default=20)
    parser.add_argument("--full", action="store_true", help="every question (58)")
    parser.add_argument("--quick", action="store_true", help="3 questions")
    args = parser.parse_args(argv)
    questions = load_questions()
    count = len(questions) if args.full else 3 if args.quick else args.questions
    questions = questions[:count]
    with embedded_postgres() as pg:
        db = new_database(pg, "bench_replay")
        with psycopg.connect(db.url, autocommit=True) as conn:
            admin = issue_key(
                conn, tenant_id=db.tenant_id, role="admin", namespaces=["*"], agent_id="auditor"
            )
        with serve(db) as server:
            contexts, replays = asyncio.run(
                _run(
                    server.base_url,
                    server.headers,
                    {"Authorization": f"Bearer {admin.key}"},
                    questions,
                )
            )
        info = machine(pg)
    identical = sum(r["identical"] for r in replays)
    consistent = sum(r["original_sha256"] == r["response_sha256"] for r in replays)
    original = [c["seconds"] for c in contexts]
    replayed = [r["seconds"] for r in replays]
    rows = [
        [
            "POST /v1/context (original)",
            len(original),
            1000 * percentile(original, 50),
            1000 * percentile(original, 99),
        ],
        [
            "POST /v1/receipts/{id}/replay exact",
            len(replayed),
            1000 * percentile(replayed, 50),
            1000 * percentile(replayed, 99),
        ],
    ]
    table = markdown_table(["what", "n", "p50 ms", "p99 ms"], rows)
    by_budget = markdown_table(
        ["budget", "receipts", "identical"],
        [
            [
                budget,
                sum(r["budget"] == budget for r in replays),
                sum(r["identical"] for r in replays if r["budget"] == budget),
            ]
            for budget in BUDGETS
        ],
    )
    failures = [r for r in replays if not r["identical"] or r["problems"]]
    result = {
        "benchmark": "replay",
        "command": "python -m bench replay " + " ".join(argv),
        "machine": info,
        "questions": len(questions),
        "receipts": len(replays),
        "identical": identical,
        "receipt_hash_equals_response_hash": consistent,
        "failures": failures,
        "contexts": contexts,
        "replays": replays,
    }
    path = write_result("replay", result)
    print(
        f"\n{len(questions)} LongMemEval_S questions, {len(replays)} context receipts replayed "
        f"(exact): {identical}/{len(replays)} identical "
        f"({100 * identical / max(1, len(replays)):.1f}%); receipt bundle.sha256 = response "
        f"bundle_sha256 for {consistent}/{len(replays)}\n"
    )
    print(table)
    print()
    print(by_budget)
    for failure in failures[:10]:
        print("\nNOT IDENTICAL or with problems:", failure)
    print(f"\nwritten to {path.relative_to(OUT_DIR.parent.parent)}")
    return 0
