"""Knowledge updates: does a bundle hand the agent the current value of a fact that changed?

Data: ``../shared/bench/knowledge_updates_dev.json`` (70 hand-written cases, 10 categories, CC0).
Each case is a few chat sessions: a fact is stated, later changed (explicitly, implicitly or by
the assistant confirming an action), with distractors and traps; ``no_update`` cases never change.
Every case gets its own namespace; each of its sessions becomes a gateway session whose turns are
appended with ``occurred_at`` (the session's date, a second per turn) and remembered as episodic
memories (``remember_turns``). With ``--compile`` every session is compiled (``POST /v1/compile``,
oldest first) before the question is asked. Then ``/v1/context`` with the question at 800 tokens.
``--cases PATH`` reads hand-written cases of the same format from another file instead, such as
``bench/knowledge_updates_written_here.json`` (issue 33's own examples with traps on them, and a
paraphrase per category, written here after the mechanism: a check of the issue's sentences,
not held-out data), or the cases written blind by helpers that read nothing of this project:
``bench/knowledge_updates_blind.json`` (30) and ``blind2.json`` to ``blind9.json`` (44 each).
Which of them a weighing is fitted on and which are held out is ``bench/replacing.py``'s
``FIT`` and ``MEASURE``; when each was written and first measured, bench/RESULTS.md.

With ``--lme-dev``, also ``../shared/bench/knowledge_updates_lme_dev.json.gz`` (23
knowledge-update questions of LongMemEval_S with their whole haystacks, real user text, the stale
and the current value annotated): each session a gateway session in date order, compiled with
``--compile``, then ``/v1/context`` with the question at 2,000 tokens, scored as above.

Folds (``--fold A`` or ``B``): a case is in fold A when the first byte of the SHA-256 of its id is
even, else B; the same split in every process. Choose on one fold, report on the other; the
tables give both folds' clean rate and their gap. With ``--fold-c``, also fold C
(``bench/knowledge_updates_lme_c.json``): the 9 knowledge-update questions of
``../shared/bench/longmemeval_s_dev.jsonl.gz``, their values annotated in this repository after
the extractor was written; held out until its first run, developed on since (bench/RESULTS.md),
reported on its own row. ``--extractor`` names the extractor a compile
uses (``rules``, or a version such as ``rules/2026-12-03.1``); default: the gateway's default.

Also the 9 LongMemEval_S dev questions of type ``knowledge-update`` (unless
``--no-longmemeval``): each haystack as one session (turns with their dates), compiled with
``--compile``, then ``/v1/context`` with the question at 2,000 tokens: is the answer string in
the bundle?

With ``--stable``, each update case of the hand-written format is asked as it would read had its
value never changed (`stable`): every turn saying the current value is left out, with the
assistant's reply to a user turn left out; the stale value is then the current one, and the case
is clean when it is in the bundle. A case whose stale value no user turn says once the update is
gone is skipped. This is the no-update case at the scale of the update cases (some 40 a set
against 4): a rule that leaves out whatever was said first, because in these sets it was
usually replaced, keeps the update cases clean and loses the value people never changed.

Scores (judge-free, case-insensitive substring, as the data set defines its answers):
- *gold present*: the current value is in the bundle;
- *stale as current*: the superseded value is in the bundle (this gateway leaves a superseded
  value out rather than marking it, so any occurrence counts against it);
- *clean*: gold present and stale absent; for ``no_update`` (no stale value), gold present;
- *clean or stale beside*: clean, or the stale value is only in memories that state the
  current value too ("Traded in the Civic and drove home in a Subaru Outback"): people name
  the value they replace, and a substring cannot tell that from the stale value shown as
  current. Reported beside clean, never instead of it.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import gzip
import hashlib
import json
import re
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
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

__all__ = [
    "DATASET",
    "LME_DATASET",
    "Case",
    "fold_of",
    "load_cases",
    "load_fold_c",
    "load_lme_cases",
    "main",
    "score",
    "stable",
]

_SHARED = Path(__file__).resolve().parents[1].parent / "shared/bench"
DATASET = _SHARED / "knowledge_updates_dev.json"
LME_DATASET = _SHARED / "knowledge_updates_lme_dev.json.gz"
LONGMEMEVAL_DEV = _SHARED / "longmemeval_s_dev.jsonl.gz"
# Fold C: the LongMemEval_S dev knowledge-update questions, annotated here (see its description).
FOLD_C = Path(__file__).resolve().parent / "knowledge_updates_lme_c.json"
TASK = "Chat with the user and remember what they tell you."
BUDGET = 800
LME_BUDGET = 2000


def fold_of(case_id: str) -> str:
    """A case's fold, the same in every process: A when the SHA-256 of its id opens with an
    even byte, else B."""
    return "A" if hashlib.sha256(case_id.encode("utf-8")).digest()[0] % 2 == 0 else "B"


@dataclass(frozen=True)
class Case:
    case_id: str
    category: str
    sessions: tuple[dict[str, Any], ...]
    question: str
    gold: str
    stale: str  # empty for no_update
    budget: int = BUDGET
    held_out: bool = False  # fold C: annotated after the extractor (developed on since)

    @property
    def namespace(self) -> str:
        return f"ku-{self.case_id}"

    @property
    def fold(self) -> str:
        return "C" if self.held_out else fold_of(self.case_id)


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


def stable(case: Case) -> Case | None:
    """The case as it would read had its value never changed: each turn saying the current
    value left out, and the assistant's reply to a user turn so left out; the stale value is
    the current one. None for a case without a stale value, or whose stale value no user turn
    says once the update is gone."""
    if not case.stale:
        return None
    current = case.gold.casefold()
    sessions = []
    for session in case.sessions:
        kept, answered = [], False  # `answered`: the turn before was a user's left out
        for turn in session["turns"]:
            updates = current in turn["content"].casefold()
            if not updates and not (answered and turn["role"] == "assistant"):
                kept.append(turn)
            answered = updates and turn["role"] == "user"
        if kept:
            sessions.append({**session, "turns": kept})
    stale = case.stale.casefold()
    if not any(
        turn["role"] == "user" and stale in turn["content"].casefold()
        for session in sessions
        for turn in session["turns"]
    ):
        return None
    return dataclasses.replace(
        case, case_id=f"{case.case_id}_stable", sessions=tuple(sessions), gold=case.stale, stale=""
    )


def _lme_day(stamp: str) -> str:
    """A LongMemEval date (`2023/05/29 (Mon) 15:01`) as the ISO day and hour it names."""
    day, _, clock = stamp.partition(" (")
    hour = clock.partition(") ")[2] or "12:00"
    at = datetime.strptime(f"{day} {hour}", "%Y/%m/%d %H:%M").replace(tzinfo=UTC)
    return at.strftime("%Y-%m-%dT%H")


def _lme_sessions(sessions: Sequence[dict[str, Any]]) -> tuple[dict[str, Any], ...]:
    """LongMemEval sessions in date order, dates as ISO, empty turns left out."""
    days = [
        {
            **s,
            "date": _lme_day(s["date"]),
            "turns": [t for t in s["turns"] if t["content"].strip()],
        }
        for s in sessions
    ]
    return tuple(sorted(days, key=lambda s: (s["date"], s["session_id"])))


def load_lme_cases(path: Path = LME_DATASET) -> list[Case]:
    """The LongMemEval_S knowledge-update dev cases, sessions in date order, dates as ISO."""
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        raw = json.load(handle)
    return [
        Case(
            case_id=c["case_id"],
            category="lme",
            sessions=_lme_sessions(c["sessions"]),
            question=c["question"],
            gold=c["gold_answer"],
            stale=c.get("stale_answer") or "",
            budget=LME_BUDGET,
        )
        for c in raw["cases"]
    ]


def load_fold_c(path: Path = FOLD_C, questions: Path = LONGMEMEVAL_DEV) -> list[Case]:
    """Fold C: the LongMemEval_S dev knowledge-update questions with their whole haystacks,
    scored by the values annotated in `path`."""
    annotated = {c["question_id"]: c for c in json.loads(path.read_text("utf-8"))["cases"]}
    cases: list[Case] = []
    with gzip.open(questions, "rt", encoding="utf-8") as lines:
        for line in lines:
            row = json.loads(line)
            mark = annotated.get(row["question_id"])
            if mark is None:
                continue
            cases.append(
                Case(
                    case_id=f"lmec_{row['question_id']}",
                    category="lme_c",
                    sessions=_lme_sessions(row["sessions"]),
                    question=row["question"],
                    gold=mark["gold_answer"],
                    stale=mark["stale_answer"],
                    budget=LME_BUDGET,
                    held_out=True,
                )
            )
    return cases


# Where one memory (or one index line) of a bundle starts: "[m12 episodic .6 ...]".
_MEMORY = re.compile(r"\n(?=\[m\d+ )")


def score(case: Case, bundle: str) -> dict[str, bool]:
    """Gold present, stale present, clean; and `stale_beside`: the stale value appears only in
    memories that state the current value too ("Traded in the Civic and drove home in a
    Subaru Outback"), where a reader sees it as the value replaced. A substring cannot tell
    that apart from the stale value shown as current, so `clean` counts it against; the
    column beside says how often that is all there is."""
    text = bundle.casefold()
    gold = case.gold.casefold() in text
    stale = bool(case.stale) and case.stale.casefold() in text
    holding = [m for m in _MEMORY.split(text) if stale and case.stale.casefold() in m]
    beside = stale and gold and all(case.gold.casefold() in m for m in holding)
    return {"gold": gold, "stale": stale, "clean": gold and not stale, "stale_beside": beside}


async def _post(client: httpx.AsyncClient, path: str, body: dict[str, Any]) -> dict[str, Any]:
    response = await client.post(path, json=body)
    # Many cases import at once: a write refused by the key's rate limit is retried when it
    # says, as a client of the gateway would (a burst, not an error of the case).
    for _ in range(10):
        if response.status_code != 429:
            break
        await asyncio.sleep(float(response.headers.get("retry-after", "1")))
        response = await client.post(path, json=body)
    if response.status_code >= 300:
        raise RuntimeError(f"{path}: {response.status_code} {response.text[:500]}")
    result: dict[str, Any] = response.json()
    return result


def _occurred(date: str, index: int) -> str:
    # An ISO day, or a day and hour (LongMemEval): the session's turns a second apart.
    if "T" in date:
        return f"{date}:{index // 60:02d}:{index % 60:02d}Z"
    return f"{date}T12:{index // 60:02d}:{index % 60:02d}Z"


async def _import(client: httpx.AsyncClient, case: Case) -> list[str]:
    """Each session of the case as a gateway session with its turns; their ids, oldest first."""
    ids: list[str] = []
    for session in case.sessions:
        created = await _post(client, "/v1/sessions", {"namespace": case.namespace, "task": TASK})
        turns = [
            {
                "role": t["role"] if t["role"] in ("user", "assistant") else "user",
                "content": t["content"][:16000],  # a turn's limit is 64 KiB
                "occurred_at": _occurred(session["date"], index),
            }
            for index, t in enumerate(session["turns"])
        ]
        for batch in _batches(turns):
            await _post(client, f"/v1/sessions/{created['session_id']}/turns", {"turns": batch})
        ids.append(str(created["session_id"]))
    return ids


async def run_case(
    client: httpx.AsyncClient, case: Case, compile_: bool, extractor: str | None = None
) -> dict[str, Any]:
    session_ids = await _import(client, case)
    compile_seconds = 0.0
    if compile_:
        started = time.perf_counter()
        ask: dict[str, Any] = {} if extractor is None else {"extractor": extractor}
        for session_id in session_ids:
            await _post(client, "/v1/compile", {"session_id": session_id, **ask})
        compile_seconds = time.perf_counter() - started
    context = await _post(
        client,
        "/v1/context",
        {"task": case.question, "namespaces": [case.namespace], "budget_tokens": case.budget},
    )
    return {
        "case_id": case.case_id,
        "category": case.category,
        "fold": case.fold,
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
            100.0 * sum(r["clean"] or r["stale_beside"] for r in items) / n,
        ]

    for name in sorted(groups):
        rows.append(row(name, groups[name]))
    if records:  # none with only the LongMemEval_S questions asked (--no-dev)
        rows.append(row("overall", records))
    return rows


def fold_rows(records: Sequence[dict[str, Any]]) -> list[list[object]]:
    """One row per data set (dev, lme) and, for the dev set, its no_update cases: clean % on
    fold A, on fold B, and the gap A - B (n per fold beside)."""
    rows: list[list[object]] = []
    sets = {
        "dev (70 hand-written)": [r for r in records if not r["category"].startswith("lme")],
        "dev no_update": [r for r in records if r["category"] == "no_update"],
        "lme dev (LongMemEval_S)": [r for r in records if r["category"] == "lme"],
    }
    fold_c = [r for r in records if r["category"] == "lme_c"]
    for name, items in sets.items():
        if not items:
            continue
        rate: dict[str, float | None] = {}
        count: dict[str, int] = {}
        for fold in ("A", "B"):
            mine = [r for r in items if r["fold"] == fold]
            count[fold] = len(mine)
            rate[fold] = 100.0 * sum(r["clean"] for r in mine) / len(mine) if mine else None
        a, b = rate["A"], rate["B"]
        gap = a - b if a is not None and b is not None else None
        rows.append([name, count["A"], a, count["B"], b, gap])
    if fold_c:
        rate_c = 100.0 * sum(r["clean"] for r in fold_c) / len(fold_c)
        rows.append(["lme fold C (only C)", len(fold_c), rate_c, 0, None, None])
    return rows


async def run_cases(
    base_url: str,
    headers: dict[str, str],
    cases: Sequence[Case],
    questions: Sequence[Asked],
    compile_: bool,
    extractor: str | None = None,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    async with httpx.AsyncClient(base_url=base_url, headers=headers, timeout=600) as client:
        limit = asyncio.Semaphore(4)

        async def one(case: Case) -> dict[str, Any]:
            async with limit:
                return await run_case(client, case, compile_, extractor)

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
    parser.add_argument("--fold", choices=("A", "B", "C"), default=None, help="only this fold")
    parser.add_argument(
        "--lme-dev", action="store_true", help="also the 23 LongMemEval_S knowledge-update cases"
    )
    parser.add_argument(
        "--fold-c",
        action="store_true",
        help="also fold C: the 9 LongMemEval_S dev knowledge-update questions, annotated here",
    )
    parser.add_argument("--no-dev", action="store_true", help="skip the 70 hand-written cases")
    parser.add_argument("--extractor", default=None, help="the extractor compiles name")
    parser.add_argument(
        "--embedder",
        default="hash",
        help="the gateway's embedder (GATEWAY_EMBEDDER; `sentence-transformers` needs the `local`"
        " extra)",
    )
    parser.add_argument(
        "--assembler",
        default=None,
        help="the assembler version bundles are built by (GATEWAY_ASSEMBLER; default the newest)",
    )
    parser.add_argument(
        "--stable",
        action="store_true",
        help="ask each update case as it reads had its value never changed (`stable`)",
    )
    parser.add_argument("--case", action="append", default=[], help="only this case (repeatable)")
    parser.add_argument(
        "--cases",
        type=Path,
        default=DATASET,
        help="hand-written cases in the dev file's format (default: the 70 dev cases)",
    )
    args = parser.parse_args(argv)
    if args.stable and (args.lme_dev or args.fold_c):
        # A LongMemEval answer ("5", "Tuesday") is said in many turns that do not update it.
        parser.error("--stable derives from the hand-written cases only, not --lme-dev or --fold-c")
    cases = [] if args.no_dev else load_cases(args.cases)
    if args.stable:
        cases = [derived for case in cases if (derived := stable(case)) is not None]
    if args.lme_dev:
        cases += load_lme_cases()
    if args.fold_c:
        cases += load_fold_c()
    cases = [c for c in cases if args.fold in (None, c.fold)][: args.limit]
    if args.case:
        cases = [c for c in cases if c.case_id in args.case]
    questions = [] if args.no_longmemeval else _knowledge_update_questions()
    with embedded_postgres() as server:
        database = new_database(server, "bench_knowledge")
        with serve(database, args.embedder, assembler=args.assembler) as app:
            records, answered = asyncio.run(
                run_cases(app.base_url, app.headers, cases, questions, args.compile, args.extractor)
            )
        info = machine(server)
    rows = summarize(records)
    table = markdown_table(
        ["category", "n", "clean %", "gold %", "stale as current %", "clean or stale beside %"],
        rows,
    )
    print(table)
    folds = fold_rows(records)
    print(markdown_table(["set", "n A", "clean % A", "n B", "clean % B", "gap A-B"], folds))
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
            "extractor": args.extractor,
            "fold": args.fold,
            "folds": folds,
            "records": [{k: v for k, v in r.items() if k != "bundle"} for r in records],
            "table": rows,
            "longmemeval": answered,
        },
    )
    print(f"written {path}")
    return 0
