"""Retrieval quality on two conversation corpora: the share of evidence turns in the bundle.

``python -m bench quality`` runs LoCoMo (``bench.locomo``: short turns, two friends over months)
and LongMemEval_S (``bench.longmemeval``: assistant chats, long turns) side by side, with the
``hash`` embedder and, where the ``local`` extra is installed, ``sentence-transformers``
(MiniLM). Per conversation a fresh namespace; every turn one episodic memory, written over HTTP
in batches of 100. Then, per question and budget (800 / 2000 / 4000 tokens):

- **ctxgw, API defaults**: ``POST /v1/context`` with the question as task and nothing else set
  but the budget (index on, no ``top_k``: the full tier sized by the budget and the profile's
  relevance cut, the index pointing where it stops): the headline, the bundle as an agent gets
  it;
- **ctxgw, ranking-only**: index off, ``top_k`` 50 (the API maximum), so the budget decides;
- **ctxgw ranking, packed raw**: the gateway's own order (the store's ``recall`` SQL at the
  ``top_k`` 50 pool, ranked by the pure core's default profile, in process) packed as raw text
  by the baselines' rule, so that rendering loss and ranking quality are seen apart;
- baselines, all packed raw: newest-first, BM25 (``bench.bm25``), dense-only (cosine of the stored
  vectors: MiniLM in the ``sentence-transformers`` run, the hash embedder's in the other), and
  BM25 + dense by reciprocal rank fusion.

Packing rule for everything "raw": best first, each memory's content at its own cl100k_base count
plus one token (the separator), skipped when it does not fit, no header.

Metric: per question, the evidence turns among the memories delivered in full over all its
evidence turns; averaged over questions (macro). Framing tokens are measured on the API-defaults
bundles: per memory in full, its rendered block (with its separator) minus its content's own
tokens; per index line, the index section minus its title and "more" line minus the headings
shown, over the lines shown; and for the whole bundle, its tokens minus every shown memory's own
text (contents in full, headings in the index) over the memories shown.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import random
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import psycopg
from pgvector.psycopg import register_vector, register_vector_async

from bench import locomo, longmemeval
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
from bench.longmemeval import Question, memory_items
from gateway.core.liveness import split_live
from gateway.core.model import MemoryId
from gateway.core.ranking import rank
from gateway.core.render import more_line
from gateway.core.tokens import Tokenizer, load_tokenizer
from gateway.core.versions import DEFAULT_PROFILE
from gateway.embedding import Embedder, build_embedder
from gateway.shell.settings import Settings
from gateway.store import retrieval
from gateway.store.pool import HNSW_SETTINGS
from gateway.store.scope import Scope
from gateway.usecases.disclosure.retrieval import recall_limit

__all__ = ["CORPORA", "main", "pack_raw", "run_quality", "sample_questions"]

BUDGETS = (800, 2000, 4000)
RANKING_TOP_K = 50  # the API maximum: let the budget, not top_k, decide how much is delivered
RRF_K = 60  # Cormack et al. 2009
BATCH = 100
SEED = 15  # the subsample of LongMemEval_S questions, fixed so runs compare
LME_SAMPLE = 16
CORPORA: dict[str, Callable[[], list[Question]]] = {
    "LoCoMo": locomo.load_questions,
    "LongMemEval": longmemeval.load_questions,
}
DEFAULTS = "ctxgw, API defaults"
RANKING_ONLY = "ctxgw, ranking-only"
RANKING_RAW = "ctxgw ranking, packed raw"
EMBEDDER_LABEL = {"hash": "hash", "sentence-transformers": "MiniLM"}


@dataclass(frozen=True)
class Stored:
    """A namespace's memories as the gateway stored them, in haystack order."""

    refs: list[str]
    ids: list[MemoryId]
    contents: list[str]
    content_tokens: list[int]
    heading_tokens: dict[MemoryId, int]
    vectors: np.ndarray[Any, Any]
    bm25: BM25


def _stored(database: Database, question: Question, tokenizer: Tokenizer) -> Stored:
    with psycopg.connect(database.url) as conn:
        register_vector(conn)
        rows = conn.execute(
            "SELECT memory_id, source_ref, content, heading, embedding"
            " FROM memories WHERE tenant_id = %s AND namespace = %s",
            (database.tenant_id, question.namespace),
        ).fetchall()
    by_ref = {row[1]: row for row in rows}
    ordered = [by_ref[t.source_ref] for t in question.turns]
    contents = [str(r[2]) for r in ordered]
    return Stored(
        refs=[str(r[1]) for r in ordered],
        ids=[MemoryId(r[0]) for r in ordered],
        contents=contents,
        content_tokens=[tokenizer.count(c) for c in contents],
        heading_tokens={MemoryId(r[0]): tokenizer.count(str(r[3])) for r in ordered},
        vectors=np.vstack([np.asarray(r[4].to_numpy(), dtype=np.float64) for r in ordered]),
        bm25=BM25(contents),
    )


def _count(database: Database, namespace: str) -> int:
    with psycopg.connect(database.url) as conn:
        row = conn.execute(
            "SELECT count(*) FROM memories WHERE tenant_id = %s AND namespace = %s",
            (database.tenant_id, namespace),
        ).fetchone()
    return int(row[0]) if row else 0


async def _ingest(client: httpx.AsyncClient, question: Question, concurrency: int) -> None:
    items = memory_items(question)
    gate = asyncio.Semaphore(concurrency)

    async def send(batch: list[dict[str, Any]]) -> None:
        async with gate:
            response = await client.post("/v1/memories/batch", json={"items": batch})
            response.raise_for_status()
            if response.json()["failed"]:
                raise RuntimeError(f"{question.namespace}: some items failed")

    await asyncio.gather(*(send(items[i : i + BATCH]) for i in range(0, len(items), BATCH)))


def _rrf(*rankings: Sequence[int]) -> list[int]:
    scores: dict[int, float] = {}
    for ranking in rankings:
        for position, doc in enumerate(ranking, start=1):
            scores[doc] = scores.get(doc, 0.0) + 1.0 / (RRF_K + position)
    return sorted(scores, key=lambda d: (-scores[d], d))


def _by_score(scores: Sequence[float]) -> list[int]:
    return sorted(range(len(scores)), key=lambda i: (-scores[i], i))


def baseline_rankings(
    question: Question, stored: Stored, query_vector: Sequence[float], dense_label: str
) -> dict[str, list[int]]:
    """Each baseline's order over the namespace's memories (indices into ``stored``)."""
    bm25 = _by_score(stored.bm25.scores(question.question))
    dense = _by_score(list(stored.vectors @ np.asarray(query_vector, dtype=np.float64)))
    newest = sorted(range(len(question.turns)), key=lambda i: -question.turns[i].order)
    return {
        "newest-first": newest,
        "BM25": bm25,
        f"dense ({dense_label})": dense,
        f"BM25 + dense ({dense_label}), RRF": _rrf(bm25, dense),
    }


def pack_raw(costs: Sequence[int], order: Sequence[int], budget: int) -> set[int]:
    """The baselines' rule: in ``order``, admit each item whose ``costs`` entry (its raw text's
    own count) plus one token still fits, skip the others."""
    used, admitted = 0, set()
    for i in order:
        if used + costs[i] + 1 <= budget:
            admitted.add(i)
            used += costs[i] + 1
    return admitted


def _recall(evidence: frozenset[str], refs: set[str]) -> float:
    return len(evidence & refs) / len(evidence)


@dataclass(frozen=True)
class Framing:
    """Framing tokens of one bundle: sums and counts, so means can be taken over a corpus."""

    full_tokens: int
    full_shown: int
    index_tokens: int
    index_shown: int
    bundle_tokens: int


def framing(tokenizer: Tokenizer, answer: dict[str, Any], stored: Stored) -> Framing:
    """What an API-defaults bundle spent besides the memories' own text (see the module doc)."""
    position = {memory_id: i for i, memory_id in enumerate(stored.ids)}
    full = [
        (item["tokens"] + 1, stored.content_tokens[position[item["memory_id"]]])
        for item in answer["included"]
    ]
    index = answer["index"]
    headings = sum(stored.heading_tokens[m] for m in index["entries"])
    # The index title as this bundle rendered it (the rendering, and so the title, is the
    # server's assembler version's).
    title = next((x for x in answer["bundle"].split("\n") if x.startswith("## Index")), "")
    left = index["total_live"] - index["shown"]
    more = tokenizer.count("\n" + more_line(left)) if left > 0 else 0
    index_framing = (
        index["tokens"] - tokenizer.count(title) - more - headings if index["shown"] else 0
    )
    own = sum(content for _, content in full) + headings
    return Framing(
        full_tokens=sum(block - content for block, content in full),
        full_shown=len(full),
        index_tokens=index_framing,
        index_shown=index["shown"],
        bundle_tokens=answer["tokens_used"] - own,
    )


async def _context(client: httpx.AsyncClient, body: dict[str, Any]) -> dict[str, Any]:
    response = await client.post("/v1/context", json=body)
    response.raise_for_status()
    answer: dict[str, Any] = response.json()
    return answer


async def _gateway_ranking(
    conn: psycopg.AsyncConnection[Any],
    database: Database,
    question: Question,
    embedder: Embedder,
    query_vector: Sequence[float],
) -> list[MemoryId]:
    """The gateway's order over its ``top_k`` 50 recall pool: the store's SQL, the core's rank."""
    now = datetime.now(UTC)
    scope = Scope(database.tenant_id, (question.namespace,), None, now)
    async with conn.transaction():
        found = await retrieval.recall(
            conn,
            scope,
            task=question.question,
            query_vector=query_vector,
            embedding_model=embedder.model,
            limit=recall_limit(RANKING_TOP_K),
        )
    return [r.candidate.memory_id for r in rank(split_live(found, now).live, DEFAULT_PROFILE, now)]


async def _question(
    client: httpx.AsyncClient,
    conn: psycopg.AsyncConnection[Any],
    database: Database,
    question: Question,
    stored: Stored,
    embedder: Embedder,
    embedder_name: str,
    budgets: Sequence[int],
    tokenizer: Tokenizer,
) -> dict[str, Any]:
    label = EMBEDDER_LABEL[embedder_name]
    ref_of = dict(zip(stored.ids, stored.refs, strict=True))
    base = {"task": question.question, "namespaces": [question.namespace]}
    defaults = [{**base, "budget_tokens": b} for b in budgets]
    ranking_only = [
        {**base, "budget_tokens": b, "top_k": RANKING_TOP_K, "include_index": False}
        for b in budgets
    ]
    answers = await asyncio.gather(*(_context(client, body) for body in defaults + ranking_only))
    scores: dict[str, dict[int, float]] = {}
    framings: dict[int, Framing] = {}
    for name, chunk in (
        (DEFAULTS, answers[: len(budgets)]),
        (RANKING_ONLY, answers[len(budgets) :]),
    ):
        scores[f"{name}, {label}"] = {
            b: _recall(question.evidence, {ref_of[i["memory_id"]] for i in a["included"]})
            for b, a in zip(budgets, chunk, strict=True)
        }
    for b, a in zip(budgets, answers[: len(budgets)], strict=True):
        framings[b] = framing(tokenizer, a, stored)
    query_vector = embedder.embed([question.question])[0]
    position = {memory_id: i for i, memory_id in enumerate(stored.ids)}
    own = [
        position[m]
        for m in await _gateway_ranking(conn, database, question, embedder, query_vector)
    ]
    orders = {
        f"{RANKING_RAW}, {label}": own,
        **baseline_rankings(question, stored, query_vector, label),
    }
    for name, order in orders.items():
        scores[name] = {
            b: _recall(
                question.evidence,
                {stored.refs[i] for i in pack_raw(stored.content_tokens, order, b)},
            )
            for b in budgets
        }
    return {
        "question_id": question.question_id,
        "scores": {m: {str(b): s for b, s in v.items()} for m, v in scores.items()},
        "framing": {str(b): vars(f) for b, f in framings.items()},
    }


async def _run_embedder(
    corpora: dict[str, list[Question]],
    server: Server,
    database: Database,
    embedder_name: str,
    budgets: Sequence[int],
    concurrency: int,
) -> dict[str, list[dict[str, Any]]]:
    tokenizer = load_tokenizer("cl100k_base")
    embedder = build_embedder(Settings(embedder=embedder_name))  # type: ignore[arg-type]
    records: dict[str, list[dict[str, Any]]] = {}
    async with (
        httpx.AsyncClient(base_url=server.base_url, headers=server.headers, timeout=600) as client,
        await psycopg.AsyncConnection.connect(database.url) as conn,
    ):
        await register_vector_async(conn)
        await conn.execute(HNSW_SETTINGS)  # the gateway's own recall, not a starved one
        for corpus, questions in corpora.items():
            stored: dict[str, Stored] = {}
            records[corpus] = []
            for number, question in enumerate(questions, start=1):
                if question.namespace not in stored:
                    if _count(database, question.namespace) != len(question.turns):
                        await _ingest(client, question, concurrency)
                    stored[question.namespace] = _stored(database, question, tokenizer)
                record = await _question(
                    client,
                    conn,
                    database,
                    question,
                    stored[question.namespace],
                    embedder,
                    embedder_name,
                    budgets,
                    tokenizer,
                )
                records[corpus].append(record)
                if number % 50 == 0 or number == len(questions):
                    print(f"[{embedder_name} {corpus} {number}/{len(questions)}]", flush=True)
    return records


def summarize(records: Sequence[dict[str, Any]], budgets: Sequence[int]) -> dict[str, list[float]]:
    methods = list(records[0]["scores"])
    return {
        m: [statistics.fmean(r["scores"][m][str(b)] for r in records) for b in budgets]
        for m in methods
    }


def framing_summary(records: Sequence[dict[str, Any]], budget: int) -> dict[str, float]:
    """Framing tokens per memory over a corpus' API-defaults bundles at ``budget``."""
    total = {
        key: sum(r["framing"][str(budget)][key] for r in records)
        for key in ("full_tokens", "full_shown", "index_tokens", "index_shown", "bundle_tokens")
    }
    shown = total["full_shown"] + total["index_shown"]
    return {
        "per memory in full": total["full_tokens"] / max(1, total["full_shown"]),
        "per index line": total["index_tokens"] / max(1, total["index_shown"]),
        "whole bundle per memory shown": total["bundle_tokens"] / max(1, shown),
        "memories in full (mean)": total["full_shown"] / len(records),
        "index lines (mean)": total["index_shown"] / len(records),
    }


def run_quality(
    corpora: dict[str, list[Question]],
    embedders: Sequence[str],
    budgets: Sequence[int],
    *,
    data_dir: Path | None = None,
    concurrency: int = 4,
) -> dict[str, Any]:
    """Every corpus under every embedder: per-question records, the summary and framing."""
    records: dict[str, dict[str, list[dict[str, Any]]]] = {}
    with embedded_postgres(data_dir) as pg:
        for name in embedders:
            database = new_database(
                pg, "quality_" + name.replace("-", "_"), reuse=data_dir is not None
            )
            with serve(database, name) as server:
                records[name] = asyncio.run(
                    _run_embedder(corpora, server, database, name, budgets, concurrency)
                )
        info = machine(pg)
    summary: dict[str, dict[str, list[float]]] = {}
    framings: dict[str, dict[str, dict[str, dict[str, float]]]] = {}
    for name, by_corpus in records.items():
        for corpus, rows in by_corpus.items():
            for method, values in summarize(rows, budgets).items():
                summary.setdefault(corpus, {}).setdefault(method, values)
            framings.setdefault(corpus, {})[name] = {
                str(b): framing_summary(rows, b) for b in budgets
            }
    return {
        "machine": info,
        "embedders": list(embedders),
        "budgets": list(budgets),
        "questions": {corpus: len(q) for corpus, q in corpora.items()},
        "summary": summary,
        "framing": framings,
        "records": records,
    }


def _order(method: str) -> tuple[int, str]:
    for position, prefix in enumerate(
        (DEFAULTS, RANKING_ONLY, RANKING_RAW, "newest", "BM25 +", "BM25", "dense")
    ):
        if method.startswith(prefix):
            return position, method
    return 99, method


def tables(result: dict[str, Any]) -> str:
    """The recall table (methods × corpus and budget) and the framing table, in markdown."""
    budgets = result["budgets"]
    corpora = list(result["summary"])
    methods = sorted({m for c in corpora for m in result["summary"][c]}, key=_order)
    rows = [
        [
            m,
            *(
                v
                for c in corpora
                for v in result["summary"][c].get(m, [float("nan")] * len(budgets))
            ),
        ]
        for m in methods
    ]
    recall = markdown_table(["method", *(f"{c} {b}" for c in corpora for b in budgets)], rows)
    frame_rows = [
        [c, EMBEDDER_LABEL[e], b, *(round(v, 1) for v in result["framing"][c][e][str(b)].values())]
        for c in corpora
        for e in result["framing"][c]
        for b in budgets
    ]
    first = next(iter(next(iter(result["framing"].values())).values()))
    columns = list(next(iter(first.values())))
    framing_table = markdown_table(["corpus", "embedder", "budget", *columns], frame_rows)
    return recall + "\n\n" + framing_table


def chart(result: dict[str, Any], path: Path) -> Path:
    """Recall against budget, one panel per corpus, one line per method (SVG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    corpora = list(result["summary"])
    budgets = result["budgets"]
    figure, axes = plt.subplots(1, len(corpora), figsize=(6.5 * len(corpora), 5), squeeze=False)
    for axis, corpus in zip(axes[0], corpora, strict=True):
        for method in sorted(result["summary"][corpus], key=_order):
            style = "-" if method.startswith("ctxgw") else "--"
            axis.plot(budgets, result["summary"][corpus][method], style, marker="o", label=method)
        axis.set_title(f"{corpus} ({result['questions'][corpus]} questions)")
        axis.set_xlabel("budget (cl100k_base tokens)")
        axis.set_ylabel("evidence turns in the bundle (macro recall)")
        axis.set_xticks(budgets)
        axis.set_ylim(0, 1)
        axis.grid(alpha=0.3)
    axes[0][-1].legend(fontsize=7, loc="lower right")
    figure.tight_layout()
    figure.savefig(path, format="svg")
    plt.close(figure)
    return path


def sample_questions(questions: list[Question], size: int, seed: int) -> list[Question]:
    """``size`` questions drawn with ``seed``, kept in file order (all when ``size`` is 0)."""
    if size <= 0 or size >= len(questions):
        return questions
    picked = set(random.Random(seed).sample(range(len(questions)), size))
    return [q for i, q in enumerate(questions) if i in picked]


def _local_extra() -> bool:
    return importlib.util.find_spec("sentence_transformers") is not None


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench quality", description=__doc__)
    parser.add_argument("--corpora", default=",".join(CORPORA), help="LoCoMo,LongMemEval")
    parser.add_argument(
        "--embedders",
        default=None,
        help="hash and, with the local extra installed, sentence-transformers",
    )
    parser.add_argument("--budgets", default=",".join(map(str, BUDGETS)))
    parser.add_argument("--lme-sample", type=int, default=LME_SAMPLE, help="0: all 58")
    parser.add_argument("--locomo-sample", type=int, default=0, help="0: all 494")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--concurrency", type=int, default=4, help="batches in flight")
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        help="keep the embedded PostgreSQL here and reuse its ingested conversations",
    )
    args = parser.parse_args(argv)
    budgets = [int(b) for b in args.budgets.split(",")]
    embedders = (
        args.embedders.split(",")
        if args.embedders
        else ["hash", *(["sentence-transformers"] if _local_extra() else [])]
    )
    samples = {"LoCoMo": args.locomo_sample, "LongMemEval": args.lme_sample}
    corpora = {
        name: sample_questions(CORPORA[name](), samples[name], args.seed)
        for name in args.corpora.split(",")
    }
    started = time.perf_counter()
    result = run_quality(
        corpora, embedders, budgets, data_dir=args.data_dir, concurrency=args.concurrency
    )
    result |= {
        "benchmark": "quality",
        "command": "python -m bench quality " + " ".join(argv),
        "seed": args.seed,
        "seconds": round(time.perf_counter() - started, 1),
    }
    path = write_result("quality", result)
    svg = chart(result, path.with_suffix(".svg"))
    print(f"\n{result['questions']} questions, embedders {embedders}\n")
    print(tables(result))
    print(f"\nwritten to {path.relative_to(OUT_DIR.parent.parent)} and {svg.name}")
    return 0
