"""Token economics: 200 memories of about 250 tokens, "dump everything" against the two-tier bundle.

Dump everything = the bundle header plus every memory rendered in full exactly as the bundle's
tail renders one (``gateway.core.render.memory_block``), counted with cl100k_base. The two-tier
bundle is what POST /v1/context returns for a task at 800 / 2000 / 4000 tokens (index on, and
off for comparison; top_k 6, the default, and 50, so that top_k is not what limits the fill); utilization = tokens_used / budget_tokens as the gateway reports it.
Tasks are the first sentence of every tenth memory (20 tasks).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import statistics
from typing import Any

import httpx
import psycopg

from bench.harness import (
    OUT_DIR,
    embedded_postgres,
    machine,
    markdown_table,
    new_database,
    serve,
    write_result,
)
from bench.synthetic import memories
from gateway.core.model import Candidate, MemoryId
from gateway.core.render import HEADERS, SEPARATOR, TAIL_TITLE, memory_block
from gateway.core.tokens import load_tokenizer
from gateway.core.versions import ASSEMBLER

__all__ = ["main"]

NAMESPACE = "tokens"
BUDGETS = (800, 2000, 4000)


def _dump_tokens(url: str) -> tuple[int, int]:
    """(tokens of everything rendered in full, sum of the stored per-memory counts)."""
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT memory_id, memory_type, heading, content, confidence::float8, created_at,"
            " namespace, tokens FROM memories ORDER BY memory_id"
        ).fetchall()
    blocks: list[str] = []
    for memory_id, memory_type, heading, content, confidence, created_at, namespace, _ in rows:
        candidate = Candidate(
            memory_id=MemoryId(memory_id),
            namespace=namespace,
            memory_type=memory_type,
            heading=heading,
            content=content,
            confidence=confidence,
            labels=(),
            source_type=None,
            source_ref=None,
            created_at=created_at,
            expires_at=None,
            deleted_at=None,
            superseded_by=None,
            content_sha256="",
            tokens=0,
            heading_tokens=0,
        )
        blocks.append(
            memory_block(
                f"m{len(blocks) + 1}", candidate, heading, content, labels=ASSEMBLER.heading_labels
            )
        )
    text = SEPARATOR.join([HEADERS[0], TAIL_TITLE, *blocks])
    return load_tokenizer("cl100k_base").count(text), sum(r[7] for r in rows)


async def _ask(base_url: str, headers: dict[str, str], bodies: list[dict[str, Any]]) -> list[Any]:
    async with httpx.AsyncClient(base_url=base_url, headers=headers, timeout=120) as client:
        found = []
        for body in bodies:
            response = await client.post("/v1/context", json=body)
            response.raise_for_status()
            found.append(response.json())
        return found


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench tokens", description=__doc__)
    parser.add_argument("--memories", type=int, default=200)
    parser.add_argument("--quick", action="store_true", help="5 tasks instead of 20")
    args = parser.parse_args(argv)
    items = [
        {
            "namespace": NAMESPACE,
            "heading": heading,
            "content": content,
            "confidence": round(0.5 + (i % 50) / 100, 2),
            "labels": ["bench"],
        }
        for i, (heading, content) in enumerate(memories(args.memories))
    ]
    tasks = [str(items[i]["content"]).split(".")[0] for i in range(0, len(items), 10)]
    if args.quick:
        tasks = tasks[:5]
    rows: list[list[object]] = []
    runs: list[dict[str, Any]] = []
    with embedded_postgres() as pg:
        db = new_database(pg, "bench_tokens")
        with serve(db) as server:
            for start in range(0, len(items), 100):
                response = httpx.post(
                    server.base_url + "/v1/memories/batch",
                    json={"items": items[start : start + 100]},
                    headers=server.headers,
                    timeout=300,
                )
                response.raise_for_status()
            dump, stored = _dump_tokens(db.url)
            for top_k, include_index, budget in itertools.product((6, 50), (True, False), BUDGETS):
                bodies = [
                    {
                        "task": task,
                        "namespaces": [NAMESPACE],
                        "budget_tokens": budget,
                        "top_k": top_k,
                        "include_index": include_index,
                    }
                    for task in tasks
                ]
                answers = asyncio.run(_ask(server.base_url, server.headers, bodies))
                used = [a["tokens_used"] for a in answers]
                util = [a["tokens_used"] / a["budget_tokens"] for a in answers]
                full = [len(a["included"]) for a in answers]
                lines = [a["index"]["shown"] for a in answers]
                run = {
                    "budget": budget,
                    "top_k": top_k,
                    "include_index": include_index,
                    "tokens_used_mean": round(statistics.mean(used), 1),
                    "utilization_mean": round(statistics.mean(util), 4),
                    "utilization_min": round(min(util), 4),
                    "in_full_mean": round(statistics.mean(full), 2),
                    "index_lines_mean": round(statistics.mean(lines), 1),
                    "dump_over_bundle": round(dump / statistics.mean(used), 1),
                }
                runs.append(run)
                rows.append(
                    [
                        budget,
                        top_k,
                        "on" if include_index else "off",
                        run["tokens_used_mean"],
                        f"{100 * run['utilization_mean']:.1f}%",
                        f"{100 * run['utilization_min']:.1f}%",
                        run["in_full_mean"],
                        run["index_lines_mean"],
                        f"{run['dump_over_bundle']:.0f}×",
                    ]
                )
        info = machine(pg)
    table = markdown_table(
        [
            "budget",
            "top_k",
            "index",
            "tokens used (mean)",
            "utilization (mean)",
            "utilization (min)",
            "memories in full",
            "index lines",
            "dump ÷ bundle",
        ],
        rows,
    )
    result = {
        "benchmark": "tokens",
        "command": "python -m bench tokens " + " ".join(argv),
        "machine": info,
        "memories": len(items),
        "tasks": len(tasks),
        "dump_everything_tokens": dump,
        "stored_tokens_sum": stored,
        "runs": runs,
    }
    path = write_result("tokens", result)
    print(
        f"\n{len(items)} memories, {stored / len(items):.0f} tokens each on average; "
        f"dump everything = {dump:,} tokens; {len(tasks)} tasks per row\n"
    )
    print(table)
    print(f"\nwritten to {path.relative_to(OUT_DIR.parent.parent)}")
    return 0
