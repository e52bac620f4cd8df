"""`bench quality` end to end on a tiny synthetic corpus: the real app over HTTP, the embedded
PostgreSQL, every method and the table and chart it reports (not the shared corpora)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.longmemeval import Question, Turn
from bench.quality import DEFAULTS, RANKING_ONLY, RANKING_RAW, chart, pack_raw, run_quality, tables

pytestmark = pytest.mark.slow

TOPICS = ["pottery class", "camping trip", "adoption agency", "violin lessons", "marathon"]


def conversation(namespace: str) -> tuple[Turn, ...]:
    return tuple(
        Turn(
            source_ref=f"D{n // 6 + 1}:{n % 6 + 1}",
            stamp=f"1:{n:02d} pm on {n % 28 + 1} May, 2023",
            order=n,
            role="Ana" if n % 2 else "Ben",
            text=f"Talking about the {TOPICS[n % len(TOPICS)]} again, turn {n} of {namespace}.",
        )
        for n in range(30)
    )


def corpus() -> dict[str, list[Question]]:
    questions = []
    for namespace in ("smoke-a", "smoke-b"):
        turns = conversation(namespace)
        for topic in TOPICS[:2]:
            evidence = frozenset(t.source_ref for t in turns if topic in t.text)
            questions.append(
                Question(
                    f"{namespace}/{topic}",
                    "1",
                    f"What about the {topic}?",
                    turns,
                    evidence,
                    namespace,
                )
            )
    return {"Synthetic": questions}


def test_raw_packing_admits_best_first_and_skips_what_does_not_fit() -> None:
    # Each item costs its count plus one token: 10+1, 50+1 (skipped at 40), 20+1.
    assert pack_raw([10, 50, 20], [0, 1, 2], 40) == {0, 2}
    assert pack_raw([10, 50, 20], [1, 0, 2], 51) == {1}


def test_the_quality_bench_runs_every_method_end_to_end(tmp_path: Path) -> None:
    result = run_quality(corpus(), ["hash"], [300, 800])
    summary = result["summary"]["Synthetic"]
    for name in (DEFAULTS, RANKING_ONLY, RANKING_RAW):
        assert f"{name}, hash" in summary
    assert {"newest-first", "BM25", "dense (hash)", "BM25 + dense (hash), RRF"} <= set(summary)
    for values in summary.values():
        assert all(0.0 <= v <= 1.0 for v in values)
    # Six evidence turns per question of ~25 tokens each: BM25 on the topic words finds them
    # all at 800 tokens, newest-first (the last turns) does not.
    assert summary["BM25"][1] == 1.0 > summary["newest-first"][1]
    assert summary[f"{RANKING_ONLY}, hash"][1] >= 0.9
    # Naming only the budget gets the ranking too (the full tier sized by the budget).
    assert summary[f"{DEFAULTS}, hash"][1] >= 0.9
    framing = result["framing"]["Synthetic"]["hash"]["800"]
    assert 0 < framing["per memory in full"] <= 12
    # The memories in full fill the budget: the index points only into what they leave.
    assert 0 <= framing["per index line"] <= 8
    assert "| BM25 |" in tables(result)
    assert chart(result, tmp_path / "quality.svg").read_text().startswith("<?xml")
