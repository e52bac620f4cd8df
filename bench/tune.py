"""Offline ranking-profile sweep on LoCoMo and LongMemEval_S, cross-validated on two folds,
against the database ``python -m bench quality --data-dir D`` filled.

Recall runs once per question through the store's own ``recall`` (the SQL the gateway runs, the
``top_k`` 50 pool); the pure core then assembles the bundle under each candidate profile as
``POST /v1/context`` would in the ranking-only configuration (index off, ``top_k`` 50), so a
grid costs minutes, not re-ingests.

Folds (one default profile must serve both corpora, so every fold holds both):

- fold 1: LoCoMo conversations 1-2 and the even positions of the LongMemEval_S questions;
- fold 2: LoCoMo conversation 3 and the odd positions.

Each grid point is scored on each fold by the mean over the two corpora of recall at 2000
tokens; the best point of one fold is then read on the other fold, which it was not chosen on.
The grid ranks with the core's own :func:`~gateway.core.ranking.rank` and packs each memory's
rendered block (its cost counted once, with a two-digit reference) by the fill rule, which is
the gateway's bundle to within a token per seam; the before/after rows are assembled exactly
(:func:`gateway.core.assembly.assemble`); ``bench quality`` confirms over HTTP. A per-signal table (each signal alone) shows what carries the ranking on each corpus.
``--embedder sentence-transformers`` tunes against the database filled with that embedder (the
``local`` extra). ``--reembed`` recomputes the vector side with the current
:class:`~gateway.embedding.HashEmbedder` (exact cosine over the namespace), so an embedder change
is measured without re-ingesting.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import itertools
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import psycopg
from pgvector.psycopg import register_vector_async

from bench import locomo, longmemeval
from bench.harness import embedded_postgres, markdown_table, new_database
from bench.longmemeval import Question
from bench.quality import LME_SAMPLE, SEED, sample_questions
from gateway.core.assembly import assemble
from gateway.core.fill import choose_header
from gateway.core.liveness import split_live
from gateway.core.model import Candidate, ContextRequest, MemoryId
from gateway.core.profile import SIGNALS, RankingProfile, RankingWeights
from gateway.core.ranking import rank
from gateway.core.render import SEPARATOR, TAIL_TITLE, memory_block
from gateway.core.tokens import Tokenizer, load_tokenizer
from gateway.core.versions import ASSEMBLER, DEFAULT_PROFILE
from gateway.embedding import Embedder, HashEmbedder, build_embedder
from gateway.shell.settings import Settings
from gateway.store import retrieval
from gateway.store.pool import HNSW_SETTINGS
from gateway.store.scope import Scope
from gateway.usecases.disclosure.retrieval import recall_limit
from gateway.usecases.memories.writer import memory_text

__all__ = ["Case", "evaluate", "folds", "main"]

TOP_K = 50
BUDGETS = (800, 2000, 4000)
TUNED_AT = 2000


@dataclass(frozen=True)
class Case:
    """One question with what the store recalled for it, and what packing it needs."""

    corpus: str
    fold: int
    question: Question
    candidates: tuple[Candidate, ...]
    live: tuple[Candidate, ...]
    costs: dict[MemoryId, int]  # memory_id -> its rendered block's tokens, with the separator


def _case(corpus: str, fold: int, question: Question, candidates: Sequence[Candidate]) -> Case:
    tokenizer = load_tokenizer()
    live = split_live(list(candidates), datetime.now(UTC)).live
    costs = {
        c.memory_id: tokenizer.count(
            SEPARATOR
            + memory_block("m10", c, c.heading, c.content, labels=ASSEMBLER.heading_labels)
        )
        for c in live
    }
    return Case(corpus, fold, question, tuple(candidates), tuple(live), costs)


def folds(corpus: str, questions: Sequence[Question]) -> list[int]:
    """The fold of each question: LoCoMo by conversation (1-2 | 3), LongMemEval by position."""
    if corpus == "LoCoMo":
        namespaces = list(dict.fromkeys(q.namespace for q in questions))
        return [1 if namespaces.index(q.namespace) < 2 else 2 for q in questions]
    return [1 + position % 2 for position in range(len(questions))]


async def _recall_all(
    url: str,
    tenant: str,
    questions: Sequence[Question],
    limit: int,
    embedder: Embedder,
    reembed: bool,
) -> list[tuple[Candidate, ...]]:
    out: list[tuple[Candidate, ...]] = []
    async with await psycopg.AsyncConnection.connect(url) as conn:
        await register_vector_async(conn)
        await conn.execute(HNSW_SETTINGS)  # the gateway's own recall, not a starved one
        now = datetime.now(UTC)
        for question in questions:
            scope = Scope(tenant, (question.namespace,), None, now)
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
            out.append(tuple(found))
    return out


def _reembed(
    embedder: HashEmbedder,
    query_vector: Sequence[float],
    found: Sequence[Candidate],
    everyone: Sequence[Candidate],
    limit: int,
) -> list[Candidate]:
    """Lexical signals from SQL, vector signals recomputed with ``embedder`` over every memory;
    the neighbours (and the memories recalled only as neighbours) as the stored recall found
    them."""
    recalled = {c.memory_id: c for c in found}
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
        if hit is None and vec is None and c.memory_id not in recalled:
            continue
        out.append(
            dataclasses.replace(
                c,
                vector_rank=vec[0] if vec else None,
                vector_distance=vec[1] if vec else None,
                lexical_rank=hit.lexical_rank if hit else None,
                lexical_score=hit.lexical_score if hit else None,
                neighbours=recalled[c.memory_id].neighbours if c.memory_id in recalled else (),
            )
        )
    return out


def recall_cases(
    data_dir: Path,
    corpora: dict[str, list[Question]],
    embedder_name: str,
    *,
    limit: int = recall_limit(TOP_K),
    reembed: bool = False,
) -> list[Case]:
    """Every question of ``corpora`` with its recall pool, from the quality run's database."""
    embedder = build_embedder(Settings(embedder=embedder_name))  # type: ignore[arg-type]
    name = "quality_" + embedder_name.replace("-", "_")
    cases: list[Case] = []
    with embedded_postgres(data_dir) as pg:
        database = new_database(pg, name, reuse=True)
        for corpus, questions in corpora.items():
            recalled = asyncio.run(
                _recall_all(database.url, database.tenant_id, questions, limit, embedder, reembed)
            )
            cases.extend(
                _case(corpus, fold, q, c)
                for q, fold, c in zip(questions, folds(corpus, questions), recalled, strict=True)
            )
    return cases


def question_recall(
    case: Case, profile: RankingProfile, budget: int, tokenizer: Tokenizer, now: datetime
) -> float:
    """The share of the question's evidence turns delivered in full, ranking-only."""
    request = ContextRequest(
        task=case.question.question,
        namespaces=(case.question.namespace,),
        budget_tokens=budget,
        top_k=TOP_K,
        include_index=False,
    )
    assembly = assemble(
        request,
        case.candidates,
        [],
        len(case.question.turns),
        profile=profile,
        tokenizer=tokenizer,
        now=now,
    )
    refs = {c.memory_id: c.source_ref for c in case.candidates}
    got = {refs[i.memory_id] for i in assembly.included}
    return len(case.question.evidence & got) / len(case.question.evidence)


Scores = dict[tuple[str, int], float]  # (corpus, fold) -> macro recall


def packed_recall(case: Case, profile: RankingProfile, room: int, now: datetime) -> float:
    """The grid's fast form of :func:`question_recall`: the core's ranking, packed by cost."""
    used, got = 0, set()
    for r in rank(case.live, profile, now)[:TOP_K]:
        cost = case.costs[r.candidate.memory_id]
        if used + cost <= room:
            used += cost
            got.add(r.candidate.source_ref)
    return len(case.question.evidence & got) / len(case.question.evidence)


def evaluate(
    cases: Sequence[Case], profile: RankingProfile, budget: int, *, exact: bool = True
) -> Scores:
    """Macro recall per (corpus, fold) at ``budget``: assembled exactly, or (``exact`` False)
    packed by :func:`packed_recall`."""
    tokenizer = load_tokenizer()
    now = datetime.now(UTC)
    header = choose_header(tokenizer, budget) or ""
    room = budget - tokenizer.count(header) - tokenizer.count(SEPARATOR + TAIL_TITLE)
    values: dict[tuple[str, int], list[float]] = {}
    for case in cases:
        if exact:
            recall = question_recall(case, profile, budget, tokenizer, now)
        else:
            recall = packed_recall(case, profile, room, now)
        values.setdefault((case.corpus, case.fold), []).append(recall)
    return {key: statistics.fmean(v) for key, v in values.items()}


def fold_score(scores: Scores, fold: int | None) -> float:
    """The mean over corpora of the corpus recall on ``fold`` (None: all questions, weighted by
    fold size as the corpus' own mean would be is not needed here: the folds' mean)."""
    corpora = sorted({c for c, _ in scores})
    per_corpus = [
        statistics.fmean(v for (c, f), v in scores.items() if c == corpus and fold in (None, f))
        for corpus in corpora
    ]
    return statistics.fmean(per_corpus)


def _signal_alone(name: str) -> RankingProfile:
    zero = dict.fromkeys(SIGNALS, 0.0)
    return dataclasses.replace(
        DEFAULT_PROFILE,
        version=f"tune/{name}-only",
        weights=RankingWeights(**{**zero, name: 1.0}),
    )


def _columns(cases: Sequence[Case]) -> list[tuple[str, int]]:
    return sorted({(c.corpus, c.fold) for c in cases})


def _row(
    label: Iterable[object], scores: Scores, columns: Sequence[tuple[str, int]]
) -> list[object]:
    return [*label, *(round(scores[c], 3) for c in columns)]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench tune", description=__doc__)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--corpora", default="LoCoMo,LongMemEval")
    parser.add_argument("--lme-sample", type=int, default=LME_SAMPLE, help="0: all 58")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--limit", type=int, default=recall_limit(TOP_K))
    parser.add_argument("--reembed", action="store_true", help="recompute the vector side")
    parser.add_argument("--embedder", default="hash", choices=["hash", "sentence-transformers"])
    args = parser.parse_args(argv)
    if args.reembed and args.embedder != "hash":
        parser.error("--reembed recomputes hash vectors only")
    loaders = {"LoCoMo": locomo.load_questions, "LongMemEval": longmemeval.load_questions}
    samples = {"LoCoMo": 0, "LongMemEval": args.lme_sample}
    corpora = {
        name: sample_questions(loaders[name](), samples[name], args.seed)
        for name in args.corpora.split(",")
    }
    cases = recall_cases(
        args.data_dir, corpora, args.embedder, limit=args.limit, reembed=args.reembed
    )
    columns = _columns(cases)
    header = [f"{c} f{f}" for c, f in columns]
    print(f"{len(cases)} questions, embedder {args.embedder}; ranking-only recall@{TUNED_AT}")
    rows = [
        _row([p.version, "exact"], evaluate(cases, p, TUNED_AT), columns)
        for p in (PREVIOUS_PROFILE, DEFAULT_PROFILE)
    ]
    print(markdown_table(["profile", "packing", *header], rows))
    alone = [
        _row([s], evaluate(cases, _signal_alone(s), TUNED_AT, exact=False), columns)
        for s in SIGNALS
    ]
    print("\neach signal alone (a constant signal leaves memory_id order):")
    print(markdown_table(["signal", *header], alone))
    results = [
        (label, evaluate(cases, profile, TUNED_AT, exact=False)) for label, profile in _grid()
    ]
    for tuned_on in (1, 2):
        held_out = 3 - tuned_on
        ordered = sorted(results, key=lambda r: -fold_score(r[1], tuned_on))
        print(f"\ntuned on fold {tuned_on} (best 8 by its corpus mean), read on fold {held_out}:")
        print(
            markdown_table(
                ["profile", f"fold {tuned_on} (tuned)", f"fold {held_out} (held out)", *header],
                [
                    [label, round(fold_score(s, tuned_on), 3), round(fold_score(s, held_out), 3)]
                    + [round(s[c], 3) for c in columns]
                    for label, s in ordered[:8]
                ],
            )
        )
    chosen = next(s for label, s in results if label == _label(DEFAULT_PROFILE))
    print(f"\nthe default's point of the grid: {_label(DEFAULT_PROFILE)}")
    print(markdown_table(header, [[round(chosen[c], 3) for c in columns]]))
    return 0


# The profile before this sweep, for the before/after row (its canonical form as receipts hold it).
PREVIOUS_PROFILE = dataclasses.replace(
    DEFAULT_PROFILE,
    version="rank/2026-12-01.1",
    weights=RankingWeights(lexical=0.30, rrf=0.25, brevity=0.30, context=0.0),
    brevity_half_tokens=256,
    brevity_half_medians=None,
)


def _label(profile: RankingProfile) -> str:
    w = profile.weights
    half = (
        f"{profile.brevity_half_tokens} tokens"
        if profile.brevity_half_medians is None
        else f"{profile.brevity_half_medians:g} medians"
    )
    return (
        f"sim {w.similarity:g} lex {w.lexical:g} rrf {w.rrf:g} brev {w.brevity:g} @ {half}"
        f" ctx {w.context:g}"
    )


def _grid() -> Iterable[tuple[str, RankingProfile]]:
    # The cosine and a half size relative to the median did not pay in earlier sweeps
    # (bench/RESULTS.md, issue 15): this grid is the one rank/2026-12-02.2 was chosen on.
    for lexical, brevity, context in itertools.product(
        (0.3, 0.4), (0.3, 0.4, 0.5), (0.0, 0.1, 0.15, 0.2, 0.25, 0.3)
    ):
        profile = DEFAULT_PROFILE.with_weights(
            "tune", lexical=lexical, rrf=0.25, brevity=brevity, context=context
        )
        yield _label(profile), profile
