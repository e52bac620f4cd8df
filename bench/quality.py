"""Retrieval quality on LongMemEval_S: the share of evidence turns delivered in full.

Per question: a fresh namespace, every turn written as an episodic memory over HTTP (batches of
100), then ``POST /v1/context`` with the question as task at each budget, index on and off. The
baselines rank the same stored memories in Python and are packed by the gateway's own fill rule
(:func:`gateway.core.fill.fill_tail`, ``skip``) from the same rendered blocks
(:func:`gateway.core.render.memory_block`) and the same tokenizer, without header or index.

Metric: per question, evidence turns (``has_answer``) among the memories included in full over
all evidence turns; averaged over questions (macro).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import psycopg
from pgvector.psycopg import register_vector

from bench.bm25 import BM25
from bench.harness import (
    OUT_DIR,
    Database,
    Server,
    embedded_postgres,
    machine,
    markdown_table,
    new_database,
    serve,
    write_result,
)
from bench.longmemeval import Question, load_questions, memory_items, select_half
from gateway.core.fill import fill_tail
from gateway.core.model import Candidate, MemoryId
from gateway.core.render import memory_block
from gateway.core.tokens import Tokenizer, load_tokenizer
from gateway.embedding import build_embedder
from gateway.settings import Settings
from gateway.usecases.memories import memory_text

__all__ = ["main"]

BUDGETS = (800, 2000, 4000)
TOP_K = 50  # the API maximum: let the budget, not top_k, decide how much is delivered
RRF_K = 60  # Cormack et al. 2009
BATCH = 100


@dataclass(frozen=True)
class Stored:
    """A question's memories as the gateway stored them, in haystack order."""

    refs: list[str]
    candidates: list[Candidate]
    vectors: np.ndarray[Any, Any]


async def _ingest(client: httpx.AsyncClient, question: Question, concurrency: int) -> None:
    items = memory_items(question)
    batches = [items[i : i + BATCH] for i in range(0, len(items), BATCH)]
    gate = asyncio.Semaphore(concurrency)

    async def send(batch: list[dict[str, Any]]) -> None:
        async with gate:
            response = await client.post("/v1/memories/batch", json={"items": batch})
            response.raise_for_status()
            body = response.json()
            if body["failed"]:
                raise RuntimeError(f"{question.question_id}: {body['failed']} items failed")

    await asyncio.gather(*(send(b) for b in batches))


def _stored(database: Database, question: Question) -> Stored:
    with psycopg.connect(database.url) as conn:
        register_vector(conn)
        rows = conn.execute(
            "SELECT memory_id, namespace, memory_type, heading, content,"
            " confidence::float8 AS confidence, source_type, source_ref, created_at,"
            " content_sha256, tokens, heading_tokens, embedding"
            " FROM memories WHERE tenant_id = %s AND namespace = %s",
            (database.tenant_id, question.namespace),
        )
        by_ref = {row[7]: row for row in rows.fetchall()}
    refs = [t.source_ref for t in question.turns]
    candidates, vectors = [], []
    for ref in refs:
        row = by_ref[ref]
        candidates.append(
            Candidate(
                memory_id=MemoryId(row[0]),
                namespace=row[1],
                memory_type=row[2],
                heading=row[3],
                content=row[4],
                confidence=row[5],
                labels=(),
                source_type=row[6],
                source_ref=row[7],
                created_at=row[8],
                expires_at=None,
                deleted_at=None,
                superseded_by=None,
                content_sha256=row[9],
                tokens=row[10],
                heading_tokens=row[11],
            )
        )
        vectors.append(np.asarray(row[12].to_numpy(), dtype=np.float64))
    return Stored(refs, candidates, np.vstack(vectors))


def _count(database: Database, question: Question) -> int:
    with psycopg.connect(database.url) as conn:
        row = conn.execute(
            "SELECT count(*) FROM memories WHERE tenant_id = %s AND namespace = %s",
            (database.tenant_id, question.namespace),
        ).fetchone()
    return int(row[0]) if row else 0


def _rrf(*rankings: Sequence[int]) -> list[int]:
    scores: dict[int, float] = {}
    for ranking in rankings:
        for position, doc in enumerate(ranking, start=1):
            scores[doc] = scores.get(doc, 0.0) + 1.0 / (RRF_K + position)
    return sorted(scores, key=lambda d: (-scores[d], d))


def _by_score(scores: Sequence[float]) -> list[int]:
    return sorted(range(len(scores)), key=lambda i: (-scores[i], i))


def baseline_rankings(
    question: Question, stored: Stored, query_vector: Sequence[float]
) -> dict[str, list[int]]:
    """Each baseline's order over the question's memories (indices into ``stored``)."""
    texts = [memory_text(c.heading, c.content) for c in stored.candidates]
    bm25 = _by_score(BM25(texts).scores(question.question))
    dense = _by_score(list(stored.vectors @ np.asarray(query_vector, dtype=np.float64)))
    newest = sorted(range(len(question.turns)), key=lambda i: -question.turns[i].order)
    return {
        "newest-first": newest,
        "BM25": bm25,
        "dense": dense,
        "BM25+dense RRF": _rrf(bm25, dense),
    }


def pack(
    tokenizer: Tokenizer,
    blocks: Sequence[str],
    costs: Sequence[int],
    order: Sequence[int],
    budget: int,
) -> set[int]:
    """Indices delivered by the gateway's fill rule (skip) for blocks in ``order``, no header.

    ``costs`` are the blocks' own counts: a block costing more than the budget alone can never be
    admitted, so it is left out before the (exact, re-counting) fill instead of counted again.
    """
    fit = [i for i in order if costs[i] <= budget]
    tail = fill_tail(tokenizer, "", [blocks[i] for i in fit], budget, "skip")
    return {fit[i] for i in tail.admitted}


def _recall(evidence: frozenset[str], refs: set[str]) -> float:
    return len(evidence & refs) / len(evidence)


async def _gateway(
    client: httpx.AsyncClient, question: Question, by_id: dict[str, str], budgets: Sequence[int]
) -> dict[str, dict[int, float]]:
    results: dict[str, dict[int, float]] = {"gateway, index on": {}, "gateway, index off": {}}
    for include_index in (True, False):
        name = "gateway, index on" if include_index else "gateway, index off"
        for budget in budgets:
            response = await client.post(
                "/v1/context",
                json={
                    "task": question.question,
                    "namespaces": [question.namespace],
                    "budget_tokens": budget,
                    "top_k": TOP_K,
                    "include_index": include_index,
                    "fill": "skip",
                },
            )
            response.raise_for_status()
            included = {by_id[item["memory_id"]] for item in response.json()["included"]}
            results[name][budget] = _recall(question.evidence, included)
    return results


async def _run(
    questions: Sequence[Question],
    server: Server,
    database: Database,
    embedder_name: str,
    budgets: Sequence[int],
    concurrency: int,
) -> list[dict[str, Any]]:
    tokenizer = load_tokenizer("cl100k_base")
    embedder = build_embedder(Settings(embedder=embedder_name))  # type: ignore[arg-type]
    records: list[dict[str, Any]] = []
    async with httpx.AsyncClient(
        base_url=server.base_url, headers=server.headers, timeout=600
    ) as client:
        for number, question in enumerate(questions, start=1):
            started = time.perf_counter()
            if _count(database, question) != len(question.turns):
                await _ingest(client, question, concurrency)
            ingested = time.perf_counter()
            stored = _stored(database, question)
            by_id: dict[str, str] = {
                c.memory_id: ref for c, ref in zip(stored.candidates, stored.refs, strict=True)
            }
            scores = await _gateway(client, question, by_id, budgets)
            blocks = [memory_block(c, c.heading, c.content) for c in stored.candidates]
            costs = [tokenizer.count(b) for b in blocks]
            query_vector = embedder.embed([question.question])[0]
            for name, order in baseline_rankings(question, stored, query_vector).items():
                scores[name] = {
                    budget: _recall(
                        question.evidence,
                        {stored.refs[i] for i in pack(tokenizer, blocks, costs, order, budget)},
                    )
                    for budget in budgets
                }
            records.append(
                {
                    "question_id": question.question_id,
                    "question_type": question.question_type,
                    "turns": len(question.turns),
                    "evidence": len(question.evidence),
                    "ingest_seconds": round(ingested - started, 3),
                    "scores": {m: {str(b): s for b, s in v.items()} for m, v in scores.items()},
                }
            )
            line = " ".join(
                f"{m.split(',')[0][:8]}={v[budgets[len(budgets) // 2]]:.2f}"
                for m, v in scores.items()
            )
            print(f"[{number}/{len(questions)}] {question.question_id} {line}", flush=True)
    return records


def summarize(records: Sequence[dict[str, Any]], budgets: Sequence[int]) -> dict[str, list[float]]:
    methods = list(records[0]["scores"])
    return {
        m: [statistics.fmean(r["scores"][m][str(b)] for r in records) for b in budgets]
        for m in methods
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench quality", description=__doc__)
    parser.add_argument("--limit", type=int, default=None, help="first N questions only")
    parser.add_argument("--questions", default="all", choices=["all", "A", "B"], help="half")
    parser.add_argument("--embedder", default="hash", choices=["hash", "sentence-transformers"])
    parser.add_argument("--budgets", default=",".join(map(str, BUDGETS)))
    parser.add_argument("--concurrency", type=int, default=4, help="batches in flight")
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        help="keep the embedded PostgreSQL here and reuse its ingested questions",
    )
    args = parser.parse_args(argv)
    budgets = [int(b) for b in args.budgets.split(",")]
    questions = select_half(load_questions(), args.questions)[: args.limit]
    started = time.perf_counter()
    with embedded_postgres(args.data_dir) as pg:
        name = "quality_" + ("hash" if args.embedder == "hash" else "st")
        database = new_database(pg, name, reuse=args.data_dir is not None)
        with serve(database, args.embedder) as server:
            records = asyncio.run(
                _run(questions, server, database, args.embedder, budgets, args.concurrency)
            )
        info = machine(pg)
    summary = summarize(records, budgets)
    table = markdown_table(
        ["method", *(f"{b} tokens" for b in budgets)],
        [[m, *values] for m, values in summary.items()],
    )
    result = {
        "benchmark": "quality",
        "command": "python -m bench quality " + " ".join(argv),
        "machine": info,
        "embedder": args.embedder,
        "questions": args.questions,
        "n_questions": len(records),
        "budgets": budgets,
        "summary": summary,
        "seconds": round(time.perf_counter() - started, 1),
        "records": records,
    }
    path = write_result(f"quality-{args.embedder}-{args.questions}", result)
    print(f"\n{len(records)} questions ({args.questions}), embedder {args.embedder}\n")
    print(table)
    print(f"\nwritten to {path.relative_to(OUT_DIR.parent.parent)}")
    return 0
