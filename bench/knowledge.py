"""Knowledge updates: does a bundle hand the agent the current value of a fact that changed?

Data: ``../shared/bench/knowledge_updates_dev.json`` (70 hand-written cases, 10 categories, CC0).
Each case is a few chat sessions: a fact is stated, later changed (explicitly, implicitly or by
the assistant confirming an action), with distractors and traps; ``no_update`` cases never change.
Every case gets its own namespace; each of its sessions becomes a gateway session whose turns are
appended with ``occurred_at`` (the session's date, a second per turn) and remembered as episodic
memories (``remember_turns``). With ``--compile`` every session is compiled (``POST /v1/compile``,
oldest first) before the question is asked. Then ``/v1/context`` with the question at 800 tokens.

Also the 9 LongMemEval_S dev questions of type ``knowledge-update``: each haystack as one
session (turns with their dates), compiled with ``--compile``, then ``/v1/context`` with the
question at 2,000 tokens: is the answer string in the bundle?

Scores (judge-free, case-insensitive substring, as the data set defines its answers):
- *gold present*: the current value is in the bundle;
- *stale as current*: the superseded value is in the bundle (this gateway leaves a superseded
  value out rather than marking it, so any occurrence counts against it);
- *clean*: gold present and stale absent; for ``no_update`` (no stale value), gold present.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from bench.harness import (
    embedded_postgres,
    machine,
    markdown_table,
    new_database,
    serve,
    write_result,
)
from bench.longmemeval import load_questions
from bench.sessions import Asked, _batches
from bench.sessions import _answers as lme_answers
from bench.sessions import _turns as lme_turns

__all__ = ["DATASET", "Case", "load_cases", "main", "score"]

DATASET = Path(__file__).resolve().parents[1].parent / "shared/bench/knowledge_updates_dev.json"
TASK = "Chat with the user and remember what they tell you."
BUDGET = 800


@dataclass(frozen=True)
class Case:
    case_id: str
    category: str
    sessions: tuple[dict[str, Any], ...]
    question: str
    gold: str
    stale: str  # empty for no_update

    @property
    def namespace(self) -> str:
        return f"ku-{self.case_id}"


def load_cases(path: Path = DATASET) -> list[Case]:
    raw = json.loads(path.read_text(encoding="utf-8"))
    return [
        Case(
            case_id=c["case_id"],
            category=c["category"],
            sessions=tuple(sorted(c["sessions"], key=lambda s: (s["date"], s["session_id"]))),
            question=c["question"],
            gold=c["gold_answer"],
            stale=c.get("stale_answer") or "",
        )
        for c in raw["cases"]
    ]


def score(case: Case, bundle: str) -> dict[str, bool]:
    text = bundle.casefold()
    gold = case.gold.casefold() in text
    stale = bool(case.stale) and case.stale.casefold() in text
    return {"gold": gold, "stale": stale, "clean": gold and not stale}


async def _post(client: httpx.AsyncClient, path: str, body: dict[str, Any]) -> dict[str, Any]:
    response = await client.post(path, json=body)
    if response.status_code >= 300:
        raise RuntimeError(f"{path}: {response.status_code} {response.text[:500]}")
    result: dict[str, Any] = response.json()
    return result


async def _import(client: httpx.AsyncClient, case: Case) -> list[str]:
    """Each session of the case as a gateway session with its turns; their ids, oldest first."""
    ids: list[str] = []
    for session in case.sessions:
        created = await _post(client, "/v1/sessions", {"namespace": case.namespace, "task": TASK})
        turns = [
            {
                "role": t["role"],
                "content": t["content"],
                "occurred_at": f"{session['date']}T12:{index // 60:02d}:{index % 60:02d}Z",
            }
            for index, t in enumerate(session["turns"])
        ]
        await _post(client, f"/v1/sessions/{created['session_id']}/turns", {"turns": turns})
        ids.append(str(created["session_id"]))
    return ids


async def run_case(client: httpx.AsyncClient, case: Case, compile_: bool) -> dict[str, Any]:
    session_ids = await _import(client, case)
    compile_seconds = 0.0
    if compile_:
        started = time.perf_counter()
        for session_id in session_ids:
            await _post(client, "/v1/compile", {"session_id": session_id})
        compile_seconds = time.perf_counter() - started
    context = await _post(
        client,
        "/v1/context",
        {"task": case.question, "namespaces": [case.namespace], "budget_tokens": BUDGET},
    )
    return {
        "case_id": case.case_id,
        "category": case.category,
        "compile_seconds": compile_seconds,
        **score(case, context["bundle"]),
        "bundle": context["bundle"],
    }


async def run_longmemeval(
    client: httpx.AsyncClient, asked: Asked, compile_: bool
) -> dict[str, Any]:
    """One LongMemEval_S knowledge-update question: its haystack as one session, optionally
    compiled, then /v1/context with the question at 2,000 tokens; is the answer string in it?"""
    question = asked.question
    created = await _post(client, "/v1/sessions", {"namespace": question.namespace, "task": TASK})
    session_id = str(created["session_id"])
    for batch in _batches(lme_turns(question)):
        await _post(client, f"/v1/sessions/{session_id}/turns", {"turns": batch})
    if compile_:
        await _post(client, "/v1/compile", {"session_id": session_id})
    context = await _post(
        client,
        "/v1/context",
        {"task": question.question, "namespaces": [question.namespace], "budget_tokens": 2000},
    )
    return {
        "question_id": question.question_id,
        "answer": asked.answer,
        "answer_in_bundle": asked.answer.casefold() in context["bundle"].casefold(),
    }


def summarize(records: Sequence[dict[str, Any]]) -> list[list[object]]:
    """One row per category, then the overall row: n, clean %, gold %, stale %."""
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        groups[record["category"]].append(record)
    rows: list[list[object]] = []

    def row(name: str, items: Sequence[dict[str, Any]]) -> list[object]:
        n = len(items)
        return [
            name,
            n,
            100.0 * sum(r["clean"] for r in items) / n,
            100.0 * sum(r["gold"] for r in items) / n,
            100.0 * sum(r["stale"] for r in items) / n,
        ]

    for name in sorted(groups):
        rows.append(row(name, groups[name]))
    rows.append(row("overall", records))
    return rows


async def _run(
    base_url: str,
    headers: dict[str, str],
    cases: Sequence[Case],
    questions: Sequence[Asked],
    compile_: bool,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    async with httpx.AsyncClient(base_url=base_url, headers=headers, timeout=600) as client:
        limit = asyncio.Semaphore(4)

        async def one(case: Case) -> dict[str, Any]:
            async with limit:
                return await run_case(client, case, compile_)

        async def lme(asked: Asked) -> dict[str, Any]:
            async with limit:
                return await run_longmemeval(client, asked, compile_)

        records = list(await asyncio.gather(*(one(c) for c in cases)))
        answered = list(await asyncio.gather(*(lme(q) for q in questions)))
        return records, answered


def _knowledge_update_questions() -> list[Asked]:
    answers = lme_answers()
    return [
        Asked(q, answers[q.question_id])
        for q in load_questions()
        if q.question_type == "knowledge-update"
    ]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench knowledge", description=__doc__)
    parser.add_argument("--compile", action="store_true", help="compile every session first")
    parser.add_argument("--limit", type=int, default=None, help="only the first N cases")
    parser.add_argument(
        "--no-longmemeval", action="store_true", help="skip the 9 LongMemEval_S questions"
    )
    parser.add_argument(
        "--show", action="store_true", help="print the bundle of every case that is not clean"
    )
    args = parser.parse_args(argv)
    cases = load_cases()[: args.limit]
    questions = [] if args.no_longmemeval else _knowledge_update_questions()
    with embedded_postgres() as server:
        database = new_database(server, "bench_knowledge")
        with serve(database) as app:
            records, answered = asyncio.run(
                _run(app.base_url, app.headers, cases, questions, args.compile)
            )
        info = machine(server)
    rows = summarize(records)
    table = markdown_table(["category", "n", "clean %", "gold %", "stale as current %"], rows)
    print(table)
    misses = [r["case_id"] for r in records if not r["clean"]]
    if args.show:
        for record in records:
            if not record["clean"]:
                print(f"--- {record['case_id']} (gold {record['gold']}, stale {record['stale']})")
                print(record["bundle"])
    print("not clean:", " ".join(misses))
    if answered:
        found = sum(a["answer_in_bundle"] for a in answered)
        print(
            f"LongMemEval_S knowledge-update: answer in the 2,000-token bundle {found}/"
            f"{len(answered)}"
        )
    path = write_result(
        "knowledge-compiled" if args.compile else "knowledge-raw",
        {
            "machine": info,
            "compile": args.compile,
            "records": [{k: v for k, v in r.items() if k != "bundle"} for r in records],
            "table": rows,
            "longmemeval": answered,
        },
    )
    print(f"written {path}")
    return 0
