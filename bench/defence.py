"""The assembly defence on the questions it was not built for: evidence recall of LongMemEval_S
dev (58 questions) and LoCoMo (conversations 1-3, 494 questions without the adversarial ones),
their conversations imported as sessions whose turns are remembered.

Why a benchmark of its own: `bench quality` writes each turn as a plain memory, which the
defence (`gateway.core.current_values`) never reads, so its figures cannot move with it. Here
each session of a haystack is a gateway session (`remember_turns`), appended with its turns'
dates, as an agent's conversations are; then `/v1/context` with each question at 800 and 2,000
tokens, API defaults. Scored as `bench quality` scores: the evidence turns among the memories
delivered in full, over all its evidence turns (macro). Also: the bundles with a memory left out
as `superseded_in_bundle`, and the evidence turns so left out.

Run it in two trees (before and after a change to the defence) and compare; the questions and
their order are the same in every run.
"""

from __future__ import annotations

import argparse
import asyncio
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

import httpx

from bench.harness import embedded_postgres, markdown_table, new_database, serve, write_result
from bench.longmemeval import Question
from bench.sessions import DATA, _batches, _post

__all__ = ["main"]

BUDGETS = (800, 2000)
TASK = "Chat with the user and remember what they tell you."


def _session_of(source_ref: str) -> str:
    """The haystack session a turn belongs to: LongMemEval `session/index`, LoCoMo `D3:7`."""
    return source_ref.rpartition("/")[0] or source_ref.partition(":")[0]


async def _import(
    client: httpx.AsyncClient, question: Question, turns: list[dict[str, Any]]
) -> dict[str, str]:
    """Each session of the question's conversation as a gateway session; memory id -> source
    ref of every remembered turn."""
    ref_of: dict[str, str] = {}
    sessions: dict[str, list[tuple[str, dict[str, Any]]]] = defaultdict(list)
    for turn, body in zip(question.turns, turns, strict=True):
        sessions[_session_of(turn.source_ref)].append((turn.source_ref, body))
    for members in sessions.values():
        created = await _post(
            client, "/v1/sessions", {"namespace": question.namespace, "task": TASK}
        )
        refs = [ref for ref, _ in members]
        written: list[str] = []
        for batch in _batches([body for _, body in members]):
            appended = await _post(
                client, f"/v1/sessions/{created['session_id']}/turns", {"turns": batch}
            )
            written.extend(appended["memory_ids"])
        ref_of.update(zip(written, refs, strict=True))
    return ref_of


async def _ask(
    client: httpx.AsyncClient, question: Question, ref_of: dict[str, str], budget: int
) -> dict[str, Any]:
    answer = await _post(
        client,
        "/v1/context",
        {"task": question.question, "namespaces": [question.namespace], "budget_tokens": budget},
    )
    shown = {ref_of.get(i["memory_id"]) for i in answer["included"]}
    left_out = {
        ref_of.get(e["memory_id"])
        for e in answer["excluded"]
        if e["reason"] == "superseded_in_bundle"
    }
    return {
        "question_id": question.question_id,
        "question_type": question.question_type,
        "question": question.question,
        "budget": budget,
        "recall": len(question.evidence & shown) / len(question.evidence),
        "decided": bool(left_out),
        "evidence_left_out": len(question.evidence & left_out),
        "left_out": sorted(ref for ref in left_out if ref is not None),
    }


async def _run(
    base_url: str,
    headers: dict[str, str],
    corpora: dict[str, tuple[list[Question], Callable[[Question], list[dict[str, Any]]]]],
) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    async with httpx.AsyncClient(base_url=base_url, headers=headers, timeout=600) as client:
        limit = asyncio.Semaphore(4)
        for corpus, (questions, turns_of) in corpora.items():
            by_namespace: dict[str, list[Question]] = defaultdict(list)
            for question in questions:
                by_namespace[question.namespace].append(question)

            async def conversation(
                asked: Sequence[Question],
                turns_of: Callable[[Question], list[dict[str, Any]]] = turns_of,
            ) -> list[dict[str, Any]]:
                async with limit:
                    ref_of = await _import(client, asked[0], turns_of(asked[0]))
                    return [await _ask(client, q, ref_of, b) for q in asked for b in BUDGETS]

            done = await asyncio.gather(*(conversation(qs) for qs in by_namespace.values()))
            records.extend({"corpus": corpus, **r} for rows in done for r in rows)
    return records


def summarize(records: Sequence[dict[str, Any]]) -> list[list[object]]:
    """Per corpus and budget: questions, recall (macro), bundles decided, evidence left out."""
    groups: dict[tuple[str, int], list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        groups[(record["corpus"], record["budget"])].append(record)
    return [
        [
            corpus,
            budget,
            len(rows),
            round(sum(r["recall"] for r in rows) / len(rows), 4),
            sum(r["decided"] for r in rows),
            sum(r["evidence_left_out"] for r in rows),
        ]
        for (corpus, budget), rows in sorted(groups.items())
    ]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench defence", description=__doc__)
    parser.add_argument("--corpora", default="longmemeval,locomo", help="longmemeval,locomo")
    args = parser.parse_args(argv)
    corpora = {}
    for name in args.corpora.split(","):
        data = DATA[name]
        corpora[name] = ([a.question for a in data.questions()], data.turns)
    with embedded_postgres() as server:
        database = new_database(server, "bench_defence")
        with serve(database) as app:
            records = asyncio.run(_run(app.base_url, app.headers, corpora))
    rows = summarize(records)
    print(
        markdown_table(
            ["corpus", "budget", "questions", "recall", "bundles decided", "evidence left out"],
            rows,
        )
    )
    decided = sorted(
        {
            (r["corpus"], r["question_id"], r["question_type"], r["question"], *r["left_out"])
            for r in records
            if r["decided"]
        }
    )
    for corpus, question_id, question_type, question, *left_out in decided:
        print(f"decided: {corpus} {question_id} ({question_type}) {question!r}: {left_out}")
    path = write_result("defence", {"benchmark": "defence", "records": records, "rows": rows})
    print(f"written {path}")
    return 0
