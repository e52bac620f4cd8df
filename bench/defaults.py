"""What an agent gets by naming only a budget, against the ranking-only configuration, on two
folds, and the choice of the ranking profile's full-tier cut (``full_tier_cut``), against the
database ``python -m bench quality --data-dir D`` filled.

Recall runs once per question through the store's own ``recall`` at the depth a request without
``top_k`` recalls at (:data:`gateway.usecases.disclosure.retrieval.DEEPEST_RECALL`, the same
pool as ``top_k`` 50); the pure core then assembles each bundle exactly as ``POST /v1/context``
does (:func:`gateway.core.assembly.assemble`, the current assembler):

- **defaults**: only the budget named (no ``top_k``, the index on). These conversations hold
  hundreds of turns, whose index cannot fit its share, so it points where the full tier stops;
  one row per cut of the grid;
- **ranking-only**: ``top_k`` 50, the index off.

Metric: the share of each question's evidence turns delivered in full (macro), per corpus and
fold (folds as ``bench tune``: LoCoMo conversations 1-2 | 3, LongMemEval by even | odd position),
and the defaults' utilization (tokens used over the budget). The cut is chosen on one fold: the
largest cut of the grid whose recall at every budget stays within half a point of the
cut-free recall there; it is then read on the other fold, which it was not chosen on.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from bench import locomo, longmemeval
from bench.harness import markdown_table
from bench.quality import LME_SAMPLE, SEED, sample_questions
from bench.tune import Case, recall_cases
from gateway.core.assembly import assemble
from gateway.core.model import ContextRequest
from gateway.core.outcome import Assembly
from gateway.core.profile import RankingProfile
from gateway.core.tokens import Tokenizer, load_tokenizer
from gateway.core.versions import DEFAULT_PROFILE
from gateway.usecases.disclosure.retrieval import DEEPEST_RECALL

__all__ = ["main"]

BUDGETS = (800, 2000, 4000)
CUTS: tuple[float | None, ...] = (None, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4)
TOLERANCE = 0.005  # half a point of recall
RANKING_TOP_K = 50

Key = tuple[str, int, int]  # (corpus, fold, budget)


@dataclasses.dataclass(frozen=True)
class Scores:
    recall: dict[Key, float]
    utilization: dict[Key, float]


def _assembly(
    case: Case,
    profile: RankingProfile,
    budget: int,
    tokenizer: Tokenizer,
    now: datetime,
    *,
    ranking_only: bool,
) -> Assembly:
    request = ContextRequest(
        task=case.question.question,
        namespaces=(case.question.namespace,),
        budget_tokens=budget,
        top_k=RANKING_TOP_K if ranking_only else None,
        include_index=not ranking_only,
    )
    return assemble(
        request,
        case.candidates,
        [],
        len(case.question.turns),
        profile=profile,
        tokenizer=tokenizer,
        now=now,
    )


def score(cases: Sequence[Case], profile: RankingProfile, *, ranking_only: bool) -> Scores:
    tokenizer, now = load_tokenizer(), datetime.now(UTC)
    recall: dict[Key, list[float]] = {}
    used: dict[Key, list[float]] = {}
    for case in cases:
        refs = {c.memory_id: c.source_ref for c in case.candidates}
        evidence = case.question.evidence
        for budget in BUDGETS:
            out = _assembly(case, profile, budget, tokenizer, now, ranking_only=ranking_only)
            got = {refs[i.memory_id] for i in out.included}
            key = (case.corpus, case.fold, budget)
            recall.setdefault(key, []).append(len(evidence & got) / len(evidence))
            used.setdefault(key, []).append(out.utilization)
    return Scores(
        {k: statistics.fmean(v) for k, v in recall.items()},
        {k: statistics.fmean(v) for k, v in used.items()},
    )


def _with_cut(cut: float | None) -> RankingProfile:
    return dataclasses.replace(DEFAULT_PROFILE, version="rank/bench-cut", full_tier_cut=cut)


def chosen_cut(
    by_cut: dict[float | None, Scores], corpora: Sequence[str], fold: int
) -> float | None:
    """The largest cut whose recall on `fold`, at every budget and corpus, is within
    :data:`TOLERANCE` of the cut-free recall there."""
    free = by_cut[None].recall
    keys = [(c, fold, b) for c in corpora for b in BUDGETS]
    kept = [
        cut
        for cut, s in by_cut.items()
        if cut is not None and all(s.recall[k] >= free[k] - TOLERANCE for k in keys)
    ]
    return max(kept, default=None)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench defaults", description=__doc__)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--corpora", default="LoCoMo,LongMemEval")
    parser.add_argument("--lme-sample", type=int, default=LME_SAMPLE, help="0: all 58")
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args(argv)
    loaders = {"LoCoMo": locomo.load_questions, "LongMemEval": longmemeval.load_questions}
    samples = {"LoCoMo": 0, "LongMemEval": args.lme_sample}
    corpora = {
        name: sample_questions(loaders[name](), samples[name], args.seed)
        for name in args.corpora.split(",")
    }
    cases = recall_cases(args.data_dir, corpora, "hash", limit=DEEPEST_RECALL)
    names = list(corpora)
    ranking = score(cases, DEFAULT_PROFILE, ranking_only=True)
    by_cut = {cut: score(cases, _with_cut(cut), ranking_only=False) for cut in CUTS}
    columns = [(c, f, b) for c in names for f in (1, 2) for b in BUDGETS]
    header = [f"{c} f{f} @{b}" for c, f, b in columns]
    print(f"{len(cases)} questions, embedder hash; evidence turns in full (macro)")
    rows = [["ranking-only (top_k 50, no index)", *(round(ranking.recall[k], 3) for k in columns)]]
    rows += [
        [f"defaults, cut {cut}", *(round(s.recall[k], 3) for k in columns)]
        for cut, s in by_cut.items()
    ]
    print(markdown_table(["configuration", *header], rows))
    print("\nutilization of the defaults (tokens used / budget):")
    print(
        markdown_table(
            ["cut", *header],
            [
                [str(cut), *(round(s.utilization[k], 3) for k in columns)]
                for cut, s in by_cut.items()
            ],
        )
    )
    for tuned_on in (1, 2):
        held_out = 3 - tuned_on
        cut = chosen_cut(by_cut, names, tuned_on)
        chosen = by_cut[cut]
        print(f"\ncut chosen on fold {tuned_on}: {cut}; read on fold {held_out} (held out):")
        table = []
        for corpus in names:
            for budget in BUDGETS:
                tuned = chosen.recall[(corpus, tuned_on, budget)]
                held = chosen.recall[(corpus, held_out, budget)]
                rank_held = ranking.recall[(corpus, held_out, budget)]
                table.append(
                    [
                        corpus,
                        budget,
                        round(tuned, 3),
                        round(held, 3),
                        round(held - rank_held, 3),
                        round(chosen.utilization[(corpus, held_out, budget)], 3),
                    ]
                )
        print(
            markdown_table(
                [
                    "corpus",
                    "budget",
                    f"fold {tuned_on} (tuned)",
                    f"fold {held_out} (held out)",
                    "held out - ranking-only",
                    "utilization (held out)",
                ],
                table,
            )
        )
    print(f"\nthe default profile {DEFAULT_PROFILE.version}: cut {DEFAULT_PROFILE.full_tier_cut}")
    return 0
