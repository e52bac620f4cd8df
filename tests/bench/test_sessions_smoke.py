"""`bench sessions --part survive --data locomo` end to end on a tiny synthetic conversation shaped
as LoCoMo's (two named friends, its session stamps): the real app over HTTP, the embedded
PostgreSQL, every method (not the shared corpus, whose licence keeps it out of the repository)."""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Any

import httpx
import psycopg
import pytest

from bench.harness import Database, embedded_postgres, new_database, serve
from bench.longmemeval import Question, Turn
from bench.sessions import BUDGETS, DATA, Asked, survive, survive_table

pytestmark = pytest.mark.slow

METHODS = ["session_context", "sliding_window", "summary_only", "memory_only_context"]
TOPICS = ["pottery class", "camping trip", "adoption agency", "violin lessons", "marathon"]


def conversation(namespace: str) -> tuple[Turn, ...]:
    # 300 turns of ~18 tokens: more than the larger budget, so the oldest fall out of a window.
    return tuple(
        Turn(
            source_ref=f"D{n // 20 + 1}:{n % 20 + 1}",
            stamp=f"1:30 pm on {n // 20 + 1} May, 2023",  # one a session of 20 turns
            order=n,
            role="Ana" if n % 2 else "Ben",
            text=f"Talking about the {TOPICS[n % len(TOPICS)]} again, turn {n} of {namespace}.",
        )
        for n in range(300)
    )


def questions() -> list[Asked]:
    asked = []
    for namespace, topics in (("smoke-a", TOPICS[:2]), ("smoke-b", TOPICS[2:3])):
        turns = conversation(namespace)
        for topic in topics:
            # The evidence: the topic's turns of the first session only.
            evidence = frozenset(t.source_ref for t in turns[:20] if topic in t.text)
            question = Question(
                f"{namespace}/{topic}", "1", f"What about the {topic}?", turns, evidence, namespace
            )
            asked.append(Asked(question, topic))
    return asked


def test_locomo_turns_are_two_named_speakers_in_time_order() -> None:
    turns = DATA["locomo"].turns(questions()[0].question)
    assert [(t["role"], t["name"]) for t in turns[:2]] == [("user", "Ben"), ("assistant", "Ana")]
    times = [datetime.fromisoformat(t["occurred_at"]) for t in turns]
    assert times == sorted(times) and len(set(times)) == len(times)
    assert times[0].isoformat() == "2023-05-01T13:30:00+00:00"


async def replay(base_url: str, headers: dict[str, str], asked: list[Asked]) -> list[Any]:
    async with httpx.AsyncClient(base_url=base_url, headers=headers, timeout=300) as client:
        return await survive(client, asked, DATA["locomo"], concurrency=2)


def sessions_by_namespace(database: Database) -> dict[str, int]:
    with psycopg.connect(database.url) as conn:
        rows = conn.execute(
            "SELECT namespace, count(*) FROM sessions GROUP BY namespace"
        ).fetchall()
    return {str(namespace): int(count) for namespace, count in rows}


def test_the_locomo_survive_run_measures_every_method_end_to_end() -> None:
    asked = questions()
    with embedded_postgres() as pg:
        database = new_database(pg, "sessions_smoke")
        with serve(database) as app:
            records = asyncio.run(replay(app.base_url, app.headers, asked))
        # One session per conversation and budget, whatever its number of questions.
        assert sessions_by_namespace(database) == {
            f"{namespace}-{budget}": 1 for namespace in ("smoke-a", "smoke-b") for budget in BUDGETS
        }
    assert [r["question_id"] for r in records] == [a.question.question_id for a in asked]
    for record in records:
        assert list(record["methods"]) == METHODS
        for by_budget in record["methods"].values():
            assert set(by_budget) == {str(b) for b in BUDGETS}
            for cell in by_budget.values():
                assert 0.0 <= cell["evidence"] <= 1.0
                assert isinstance(cell["answer"], bool)
        # The first session's turns are long gone from the last turns that fit.
        assert all(c["evidence"] == 0.0 for c in record["methods"]["sliding_window"].values())
    assert "| session_context |" in survive_table(records)
