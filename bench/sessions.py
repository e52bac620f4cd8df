"""Sessions over real conversations (LongMemEval_S, LoCoMo), through the real app over real HTTP.

1. ``tokens``: the turns of one question (~500) appended one by one to a session; after each, what
   append-everything would send (system + task + every turn, rendered as the session renders)
   against the session context at budgets 2,000 and 4,000. Also the speed figures: append and
   context latency around turns 10 / 100 / 500, and what a compacting context call costs.
2. ``survive``: every question replayed as one session (its turns in order, in batches, with
   ``occurred_at``), then one context call with the question as the step query at 2,000 and
   4,000 tokens. Judge-free: the share of evidence turns present verbatim in the context text,
   and whether the answer string appears in it. Baselines in the same run, same turns, same
   budgets: the last turns that fit (sliding window), the extractive summary alone
   (``gateway.core.summary`` over every turn) and ``/v1/context`` over the turns as memories
   (the session's own ``remember_turns`` memories, so exactly the same texts).

   ``--data locomo`` runs ``survive`` on data the session layout was not tuned on: LoCoMo
   conversations 1-3. Each conversation is replayed once per budget as one session, its first
   speaker as ``user`` and the other as ``assistant``, each by ``name``; then each of its
   questions is asked of that session (the context calls after the first fold nothing new) and
   of ``/v1/context``. The adversarial questions (category 5) are left out entirely: their
   premise is false, most have no answer, and the two that do answer "No", which the substring
   check finds in any context. ``tokens`` is LongMemEval_S only.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from bench import locomo, longmemeval
from bench.corpus import bulk_load, load_corpus
from bench.harness import (
    OUT_DIR,
    Server,
    cpu_seconds,
    embedded_postgres,
    machine,
    markdown_table,
    new_database,
    percentile,
    serve,
    write_result,
)
from bench.longmemeval import Question
from gateway.core.session import Message, fixed_messages, render_text
from gateway.core.summary import Folded, summarize
from gateway.core.tokens import load_tokenizer

BUDGETS = (2000, 4000)
MARKS = (10, 50, 100, 500)
TASK = "Answer the user's questions about their past conversations with the assistant."
SYSTEM = "You are a helpful assistant with a long memory."
BATCH_BYTES = 600_000  # under the gateway's 1 MiB body limit with room for JSON escapes
TOKENIZER = load_tokenizer()
HEAD = fixed_messages(SYSTEM, TASK)
ADVERSARIAL = "5"  # LoCoMo's category of questions whose premise is false
# What a turn's name may not hold (gateway.requests.TurnIn).
_NOT_IN_NAME = re.compile(r"[^A-Za-z0-9_-]")


@dataclass(frozen=True)
class Asked:
    question: Question
    answer: str


def _answers(path: Path = longmemeval.DATASET) -> dict[str, str]:
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        return {row["question_id"]: str(row["answer"]) for row in map(json.loads, lines)}


def _longmemeval_asked() -> list[Asked]:
    answers = _answers()
    return [Asked(q, answers[q.question_id]) for q in longmemeval.load_questions()]


def _locomo_asked() -> list[Asked]:
    answers = locomo.answers()
    return [
        Asked(q, answers[q.question_id])
        for q in locomo.load_questions()
        if q.question_type != ADVERSARIAL and q.question_id in answers
    ]


def _occurred(at: datetime, order: int) -> str:
    # Turns of one session share its date; a microsecond per position keeps them in order.
    return at.replace(microsecond=order % 1_000_000).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _content(text: str) -> str:
    return text if text.strip() else "(empty turn)"


def _turns(question: Question) -> list[dict[str, Any]]:
    """A LongMemEval_S question's turns (bench.knowledge appends them too)."""
    return [
        {
            "role": t.role if t.role in ("user", "assistant") else "user",
            "content": _content(t.text),
            "occurred_at": _occurred(
                datetime.strptime(t.stamp, "%Y/%m/%d %H:%M").replace(tzinfo=UTC), t.order
            ),
        }
        for t in question.turns
    ]


def _locomo_turns(question: Question) -> list[dict[str, Any]]:
    """Two friends: the first to speak is the ``user``, the other the ``assistant``."""
    first = question.turns[0].role if question.turns else ""
    return [
        {
            "role": "user" if t.role == first else "assistant",
            "name": _NOT_IN_NAME.sub("_", t.role)[:64],
            "content": _content(t.text),
            "occurred_at": _occurred(locomo.parse_stamp(t.stamp), t.order),
        }
        for t in question.turns
    ]


@dataclass(frozen=True)
class SurviveData:
    """What the survive part replays: the questions with their answers, and a question's
    conversation as the turns appended."""

    questions: Callable[[], list[Asked]]
    turns: Callable[[Question], list[dict[str, Any]]]


DATA = {
    "longmemeval": SurviveData(_longmemeval_asked, _turns),
    "locomo": SurviveData(_locomo_asked, _locomo_turns),
}


def _batches(turns: Sequence[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    batches: list[list[dict[str, Any]]] = [[]]
    size = 0
    for turn in turns:
        cost = len(json.dumps(turn).encode("utf-8"))
        if batches[-1] and (len(batches[-1]) == 100 or size + cost > BATCH_BYTES):
            batches.append([])
            size = 0
        batches[-1].append(turn)
        size += cost
    return batches


async def _post(client: httpx.AsyncClient, path: str, body: dict[str, Any]) -> dict[str, Any]:
    response = await client.post(path, json=body)
    if response.status_code >= 300:
        raise RuntimeError(f"{path}: {response.status_code} {response.text[:500]}")
    result: dict[str, Any] = response.json()
    return result


async def _session(
    client: httpx.AsyncClient, namespace: str, budget: int, memory: int | None = None
) -> str:
    body: dict[str, Any] = {
        "namespace": namespace,
        "task": TASK,
        "system_prompt": SYSTEM,
        "budget_tokens": budget,
    }
    if memory is not None:
        body["memory_budget_tokens"] = memory
    return str((await _post(client, "/v1/sessions", body))["session_id"])


# The sessions of the tokens run: label -> (budget, memory share). `2000-no-memory` isolates the
# session mechanism (history, compaction, layout, receipt) from the memory recall beside it.
SERIES = {"2000": (2000, None), "4000": (4000, None), "2000-no-memory": (2000, 0)}


def _message(turn: dict[str, Any]) -> Message:
    return Message(turn["role"], turn["content"], turn.get("name"))


def _append_everything(turns: Sequence[dict[str, Any]]) -> int:
    """What the naive loop sends: every turn, rendered as the session renders messages."""
    return TOKENIZER.count(render_text([*HEAD, *map(_message, turns)]))


# The CPU seconds used so far by the serving process and by the database's processes.
Meter = Callable[[], tuple[float, float]]


async def run_tokens(
    client: httpx.AsyncClient, asked: Asked, limit: int, meter: Meter
) -> dict[str, Any]:
    turns = _turns(asked.question)[:limit]
    sessions = {
        label: await _session(client, f"tok-{label}", budget, memory)
        for label, (budget, memory) in SERIES.items()
    }
    rows: list[dict[str, Any]] = []
    appends: list[float] = []
    contexts: dict[str, list[tuple[float, bool]]] = {label: [] for label in SERIES}
    cpu: dict[str, list[tuple[float, float]]] = {label: [] for label in SERIES}
    for n, turn in enumerate(turns, start=1):
        row: dict[str, Any] = {"turn": n, "append_everything": _append_everything(turns[:n])}
        for label, session_id in sessions.items():
            budget = SERIES[label][0]
            started = time.perf_counter()
            await _post(client, f"/v1/sessions/{session_id}/turns", {"turns": [turn]})
            if label == "2000":
                appends.append(time.perf_counter() - started)
            used, started = meter(), time.perf_counter()
            step = await _post(client, f"/v1/sessions/{session_id}/context", {})
            contexts[label].append(
                (time.perf_counter() - started, step["compaction"]["folded"] is not None)
            )
            after = meter()
            cpu[label].append((after[0] - used[0], after[1] - used[1]))
            assert step["tokens_used"] <= budget, step["tokens_used"]
            row[f"context_{label}"] = step["tokens_used"]
        rows.append(row)

    speed = _speed(appends, contexts, len(turns)) | {"context_cpu_ms_by_hundred": _cpu(cpu)}
    return {"question_id": asked.question.question_id, "rows": rows, "speed": speed}


def _around(values: Sequence[float], mark: int) -> float:
    window = values[max(0, mark - 10) : mark]
    return round(percentile(window, 50) * 1000, 2) if window else float("nan")


def _speed(
    appends: Sequence[float], contexts: dict[str, list[tuple[float, bool]]], count: int
) -> dict[str, Any]:
    """The speed figures of a tokens run: append and context p50 around the marks, by hundred
    calls, every call, and what compaction costs."""
    speed: dict[str, Any] = {
        "append_p50_ms": {},
        "context_p50_ms": {},
        "context_p50_ms_by_hundred": {},
        "context_ms": {},
        "compaction": {},
    }
    for mark in (10, 100, 500):
        if mark <= count:
            speed["append_p50_ms"][mark] = _around(appends, mark)
            for label in SERIES:
                latencies = [s for s, _ in contexts[label]]
                speed["context_p50_ms"].setdefault(label, {})[mark] = _around(latencies, mark)
    # Ten calls are a narrow window: what a growing store costs comes and goes with autovacuum
    # (statistics, index maintenance), so the p50 of each hundred calls and every call's latency
    # are kept as well.
    for label in SERIES:
        latencies = [s for s, _ in contexts[label]]
        speed["context_p50_ms_by_hundred"].setdefault(label, {})
        for start in range(0, len(latencies), 100):
            hundred = latencies[start : start + 100]
            span = f"{start + 1}-{start + len(hundred)}"
            speed["context_p50_ms_by_hundred"][label][span] = round(
                percentile(hundred, 50) * 1000, 2
            )
        speed["context_ms"][label] = [round(s * 1000, 2) for s in latencies]
    for label in SERIES:
        folding = [s for s, folded in contexts[label] if folded]
        plain = [s for s, folded in contexts[label] if not folded]
        speed["compaction"][label] = {
            "calls_that_folded": len(folding),
            "folding_p50_ms": round(percentile(folding, 50) * 1000, 2) if folding else None,
            "plain_p50_ms": round(percentile(plain, 50) * 1000, 2) if plain else None,
        }
    return speed


def _cpu(cpu: dict[str, list[tuple[float, float]]]) -> dict[str, Any]:
    """Mean CPU per context call of each hundred calls, the gateway's and the database's: the
    growth a store's size causes, as a busy machine inflates it far less than latency."""
    by_hundred: dict[str, Any] = {}
    for label, used in cpu.items():
        for start in range(0, len(used), 100):
            hundred = used[start : start + 100]
            by_hundred.setdefault(label, {})[f"{start + 1}-{start + len(hundred)}"] = {
                "gateway": round(sum(g for g, _ in hundred) / len(hundred) * 1000, 2),
                "database": round(sum(d for _, d in hundred) / len(hundred) * 1000, 2),
            }
    return by_hundred


def _sliding_window(turns: Sequence[dict[str, Any]], budget: int) -> str:
    """The last turns that fit the budget after the system prompt and the task."""
    kept: list[Message] = []
    for turn in reversed(turns):
        candidate = [*HEAD, _message(turn), *kept]
        if TOKENIZER.count(render_text(candidate)) > budget:
            break
        kept.insert(0, _message(turn))
    return render_text([*HEAD, *kept])


def _summary_only(turns: Sequence[dict[str, Any]], budget: int) -> str:
    head = f"system: {SYSTEM}\n\nsystem: Task: {TASK}\n\nsystem: Summary:\n"
    folded = [Folded(i + 1, t["role"], t["content"]) for i, t in enumerate(turns)]
    return head + summarize(None, folded, budget - TOKENIZER.count(head) - 2, TOKENIZER)


def _measure(
    text: str, turns: Sequence[dict[str, Any]], evidence: Sequence[int], answer: str
) -> dict[str, Any]:
    present = sum(turns[i]["content"] in text for i in evidence)
    return {
        "evidence": present / len(evidence),
        "answer": answer.lower() in text.lower(),
        "tokens": TOKENIZER.count(text),
    }


def _evidence(question: Question) -> list[int]:
    return [i for i, t in enumerate(question.turns) if t.source_ref in question.evidence]


async def run_survive(
    client: httpx.AsyncClient, conversation: Sequence[Asked], turns: Sequence[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The questions of one conversation (one namespace, its ``turns``): replayed once per budget
    as one session, then each question asked of it and of ``/v1/context``; a record each."""
    records: list[dict[str, Any]] = [
        {"question_id": a.question.question_id, "methods": {}} for a in conversation
    ]
    for budget in BUDGETS:
        namespace = f"{conversation[0].question.namespace}-{budget}"
        session_id = await _session(client, namespace, budget)
        for batch in _batches(turns):
            await _post(client, f"/v1/sessions/{session_id}/turns", {"turns": batch})
        sliding_window = _sliding_window(turns, budget)
        summary_only = _summary_only(turns, budget)
        for asked, record in zip(conversation, records, strict=True):
            question = asked.question.question
            step = await _post(client, f"/v1/sessions/{session_id}/context", {"query": question})
            memory_only = await _post(
                client,
                "/v1/context",
                {"task": question, "namespaces": [namespace], "budget_tokens": budget},
            )
            texts = {
                "session_context": step["text"],
                "sliding_window": sliding_window,
                "summary_only": summary_only,
                "memory_only_context": memory_only["bundle"],
            }
            evidence = _evidence(asked.question)
            for method, text in texts.items():
                measured = _measure(text, turns, evidence, asked.answer)
                record["methods"].setdefault(method, {})[str(budget)] = measured
    return records


def _conversations(questions: Sequence[Asked]) -> list[list[Asked]]:
    """The questions grouped by namespace (a conversation's turns are its namespace's), in order."""
    grouped: dict[str, list[Asked]] = {}
    for asked in questions:
        grouped.setdefault(asked.question.namespace, []).append(asked)
    return list(grouped.values())


async def survive(
    client: httpx.AsyncClient, questions: Sequence[Asked], data: SurviveData, concurrency: int
) -> list[dict[str, Any]]:
    """Every conversation of ``questions`` through :func:`run_survive`, ``concurrency`` at a
    time; the records in the questions' order."""
    semaphore = asyncio.Semaphore(concurrency)

    async def one(conversation: list[Asked]) -> list[dict[str, Any]]:
        async with semaphore:
            return await run_survive(client, conversation, data.turns(conversation[0].question))

    done = await asyncio.gather(*(one(c) for c in _conversations(questions)))
    return [record for records in done for record in records]


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


def survive_table(records: Sequence[dict[str, Any]]) -> str:
    methods = list(records[0]["methods"]) if records else []
    rows = []
    for method in methods:
        row: list[object] = [method]
        for budget in BUDGETS:
            cells = [r["methods"][method][str(budget)] for r in records]
            row += [
                _mean([c["evidence"] for c in cells]),
                _mean([float(c["answer"]) for c in cells]),
                round(_mean([c["tokens"] for c in cells])),
            ]
        rows.append(row)
    headers = ["method"]
    for budget in BUDGETS:
        headers += [f"evidence@{budget}", f"answer@{budget}", f"tokens@{budget}"]
    return markdown_table(headers, rows)


def tokens_table(tokens: dict[str, Any]) -> str:
    rows = []
    for row in tokens["rows"]:
        if row["turn"] in MARKS or row["turn"] == len(tokens["rows"]):
            naive = row["append_everything"]
            rows.append(
                [
                    row["turn"],
                    naive,
                    *[row[f"context_{b}"] for b in BUDGETS],
                    *[f"{naive / row[f'context_{b}']:.1f}x" for b in BUDGETS],
                ]
            )
    headers = ["turn", "append-everything", *[f"context@{b}" for b in BUDGETS]]
    headers += [f"ratio@{b}" for b in BUDGETS]
    return markdown_table(headers, rows)


def chart(tokens: dict[str, Any], path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = tokens["rows"]
    x = [r["turn"] for r in rows]
    figure, axis = plt.subplots(figsize=(8, 5))
    axis.plot(x, [r["append_everything"] for r in rows], "--", label="append everything")
    for label in SERIES:
        axis.plot(x, [r[f"context_{label}"] for r in rows], label=f"session context @ {label}")
    axis.set_yscale("log")
    axis.set_xlabel("turn")
    axis.set_ylabel("tokens sent this step (cl100k_base, log scale)")
    axis.set_title(f"Tokens per turn, LongMemEval_S {tokens['question_id']}")
    axis.grid(alpha=0.3)
    axis.legend()
    figure.tight_layout()
    figure.savefig(path, format="svg")
    plt.close(figure)
    return path


async def _run(args: argparse.Namespace, app: Server, meter: Meter) -> dict[str, Any]:
    first = args.sample or None  # the first N questions, of the data set each part reads
    result: dict[str, Any] = {"data": args.data}
    async with httpx.AsyncClient(base_url=app.base_url, headers=app.headers, timeout=300) as client:
        if args.part in ("tokens", "all"):
            questions = _longmemeval_asked()[:first]
            longest = max(questions, key=lambda a: len(a.question.turns))
            result["tokens"] = await run_tokens(client, longest, args.turns, meter)
        if args.part in ("survive", "all"):
            data = DATA[args.data]
            asked = data.questions()[:first]
            result["survive"] = await survive(client, asked, data, args.concurrency)
    return result


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench sessions", description=__doc__)
    parser.add_argument("--part", choices=("tokens", "survive", "all"), default="all")
    parser.add_argument(
        "--data",
        choices=tuple(DATA),
        default="longmemeval",
        help="the survive part's questions (tokens reads LongMemEval_S always)",
    )
    parser.add_argument("--turns", type=int, default=500, help="turns of the tokens run")
    parser.add_argument("--sample", type=int, default=0, help="first N questions (0: all)")
    parser.add_argument("--concurrency", type=int, default=2, help="conversations at a time")
    parser.add_argument(
        "--tenant-memories",
        type=int,
        default=0,
        help="first write this many synthetic memories to another namespace of the same tenant"
        " (a session in a large tenant)",
    )
    args = parser.parse_args(argv)
    if args.part == "tokens" and args.data != "longmemeval":
        parser.error("--data selects the survive part's questions: tokens is LongMemEval_S only")
    started = time.perf_counter()
    with embedded_postgres() as server:
        database = new_database(server, "bench_sessions")
        if args.tenant_memories:
            bulk_load(
                database.url,
                load_corpus(),
                tenants=[(database.tenant_id, database.key_id)],
                namespace="elsewhere",
                start=0,
                stop=args.tenant_memories,
            )
        postmaster = int((server.pgdata / "postmaster.pid").read_text().split()[0])
        with serve(database) as app:

            def meter() -> tuple[float, float]:
                return cpu_seconds(app.pid) if app.pid else 0.0, cpu_seconds(postmaster)

            result = asyncio.run(_run(args, app, meter))
        result |= {
            "benchmark": "sessions",
            "command": "python -m bench sessions " + " ".join(argv),
            "machine": machine(server),
            "seconds": round(time.perf_counter() - started, 1),
        }
    path = write_result("sessions", result)
    if "tokens" in result:
        svg = chart(result["tokens"], path.with_suffix(".svg"))
        print(tokens_table(result["tokens"]))
        speed = {k: v for k, v in result["tokens"]["speed"].items() if k != "context_ms"}
        print(json.dumps(speed, indent=2))
        print(f"chart: {svg.name}")
    if "survive" in result:
        print(f"\n{len(result['survive'])} questions ({result['data']})\n")
        print(survive_table(result["survive"]))
    print(f"\nwritten to {path.relative_to(OUT_DIR.parent.parent)}")
    return 0
