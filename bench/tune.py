"""Offline ranking-profile sweep on LongMemEval_S, against a database ``bench quality`` filled.

Recall runs once per question through the store's own ``recall`` (the SQL the gateway runs); the
pure core then assembles the bundle under each candidate profile, index off, so a weight grid
costs milliseconds per question. Two sweeps: the relevance weights (similarity, lexical, rrf) at
``--budget``, and the brevity weight and half size at 800 / 2000 / 4000. With ``--reembed`` the vector side is recomputed in Python with
the current :class:`~gateway.embedding.HashEmbedder` (exact cosine top-``limit`` over the whole
namespace, as HNSW approximates it), so an embedder change is measured without re-ingesting.
``--embedder sentence-transformers`` tunes against the database ``bench quality`` filled with that
embedder (the ``local`` extra). Use it on half A, then confirm with ``python -m bench quality
--questions B`` over HTTP.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import itertools
import statistics
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import psycopg
from pgvector.psycopg import register_vector_async

from bench.harness import embedded_postgres, markdown_table, new_database
from bench.longmemeval import Question, load_questions, select_half
from gateway.core.assembly import assemble
from gateway.core.model import Candidate, ContextRequest
from gateway.core.ranking import DEFAULT_PROFILE, RankingProfile
from gateway.core.tokens import load_tokenizer
from gateway.embedding import Embedder, HashEmbedder, build_embedder
from gateway.settings import Settings
from gateway.store import retrieval
from gateway.usecases.context import recall_limit
from gateway.usecases.memories import memory_text

__all__ = ["main"]

TOP_K = 50


async def _recall_all(
    url: str,
    tenant: str,
    questions: Sequence[Question],
    limit: int,
    embedder: Embedder,
    reembed: bool,
) -> list[list[Candidate]]:
    out: list[list[Candidate]] = []
    async with await psycopg.AsyncConnection.connect(url) as conn:
        await register_vector_async(conn)
        now = datetime.now(UTC)
        for question in questions:
            scope = retrieval.Scope(tenant, (question.namespace,), None, now)
            query_vector = embedder.embed([question.question])[0]
            async with conn.transaction():
                found = await retrieval.recall(
                    conn,
                    scope,
                    task=question.question,
                    query_vector=query_vector,
                    embedding_model=embedder.model,
                    limit=limit,
                )
                if reembed:
                    everyone = await retrieval.recall(
                        conn,
                        scope,
                        task="",
                        query_vector=query_vector,
                        embedding_model=embedder.model,
                        limit=100_000,
                    )
            if reembed:
                assert isinstance(embedder, HashEmbedder)
                found = _reembed(embedder, query_vector, found, everyone, limit)
            out.append(found)
    return out


def _reembed(
    embedder: HashEmbedder,
    query_vector: Sequence[float],
    found: Sequence[Candidate],
    everyone: Sequence[Candidate],
    limit: int,
) -> list[Candidate]:
    """Lexical signals from SQL, vector signals recomputed with ``embedder`` over every memory."""
    lexical = {c.memory_id: c for c in found if c.lexical_rank is not None}
    texts = [memory_text(c.heading, c.content) for c in everyone]
    vectors = np.asarray(embedder.embed(texts), dtype=np.float64)
    distances = 1.0 - vectors @ np.asarray(query_vector, dtype=np.float64)
    order = sorted(range(len(everyone)), key=lambda i: (distances[i], everyone[i].memory_id))
    ranked = {
        everyone[i].memory_id: (r, float(distances[i])) for r, i in enumerate(order[:limit], 1)
    }
    out = []
    for c in everyone:
        hit = lexical.get(c.memory_id)
        vec = ranked.get(c.memory_id)
        if hit is None and vec is None:
            continue
        out.append(
            dataclasses.replace(
                c,
                vector_rank=vec[0] if vec else None,
                vector_distance=vec[1] if vec else None,
                lexical_rank=hit.lexical_rank if hit else None,
                lexical_score=hit.lexical_score if hit else None,
            )
        )
    return out


def score(
    questions: Sequence[Question],
    recalled: Sequence[Sequence[Candidate]],
    profile: RankingProfile,
    budget: int,
) -> float:
    tokenizer = load_tokenizer()
    now = datetime.now(UTC)
    values = []
    for question, candidates in zip(questions, recalled, strict=True):
        request = ContextRequest(
            task=question.question,
            namespaces=(question.namespace,),
            budget_tokens=budget,
            top_k=TOP_K,
            include_index=False,
        )
        assembly = assemble(
            request,
            candidates,
            [],
            len(question.turns),
            profile=profile,
            tokenizer=tokenizer,
            now=now,
        )
        refs = {c.memory_id: c.source_ref for c in candidates}
        got = {refs[i.memory_id] for i in assembly.included}
        values.append(len(question.evidence & got) / len(question.evidence))
    return statistics.fmean(values)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench tune", description=__doc__)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--questions", default="A", choices=["all", "A", "B"])
    parser.add_argument("--budget", type=int, default=2000)
    parser.add_argument("--limit", type=int, default=recall_limit(TOP_K))
    parser.add_argument("--reembed", action="store_true", help="recompute the vector side")
    parser.add_argument("--embedder", default="hash", choices=["hash", "sentence-transformers"])
    args = parser.parse_args(argv)
    if args.reembed and args.embedder != "hash":
        parser.error("--reembed recomputes hash vectors only")
    questions = select_half(load_questions(), args.questions)
    embedder = build_embedder(Settings(embedder=args.embedder))
    name = "quality_" + ("hash" if args.embedder == "hash" else "st")
    with embedded_postgres(args.data_dir) as pg:
        database = new_database(pg, name, reuse=True)
        recalled = asyncio.run(
            _recall_all(
                database.url, database.tenant_id, questions, args.limit, embedder, args.reembed
            )
        )
    print(f"default profile: {score(questions, recalled, DEFAULT_PROFILE, args.budget):.3f}")
    rows = []
    grid = itertools.product(
        (0.0, 0.1, 0.2, 0.35, 0.5, 0.7), (0.0, 0.1, 0.2, 0.3), (0.0, 0.25, 0.5, 0.75)
    )
    for similarity, lexical, rrf in grid:
        if similarity == lexical == rrf == 0.0:
            continue
        profile = DEFAULT_PROFILE.with_weights(
            "tune", similarity=similarity, lexical=lexical, rrf=rrf
        )
        rows.append([similarity, lexical, rrf, score(questions, recalled, profile, args.budget)])
    rows.sort(key=lambda r: -float(r[3]))
    singles = [r for r in rows if sum(1 for v in r[:3] if v) == 1]
    print(markdown_table(["similarity", "lexical", "rrf", f"recall@{args.budget}"], rows[:15]))
    print(markdown_table(["similarity", "lexical", "rrf", "one signal only"], singles))
    budgets = (800, 2000, 4000)
    brevity = []
    for weight, half in itertools.product((0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.7, 1.0), (64, 128, 256)):
        profile = dataclasses.replace(
            DEFAULT_PROFILE.with_weights("tune", brevity=weight), brevity_half_tokens=half
        )
        brevity.append([weight, half, *(score(questions, recalled, profile, b) for b in budgets)])
    print(markdown_table(["brevity", "half tokens", *(f"recall@{b}" for b in budgets)], brevity))
    return 0
