"""Compile throughput with the `rules` extractor, through the real app over real HTTP.

Real conversation text: the LongMemEval_S turns (``../shared/bench``), oldest question first,
appended to one session in one namespace (batches of 100, a second apart, remembered as episodic
memories). Then:

1. *full*: one ``POST /v1/compile`` of the session: turns per second (wall clock from the
   request to the job's end, which extracts, embeds, writes every fact and applies
   supersession). A session over the gateway's synchronous limit (5,000 episodes) is queued
   (202) and polled every 0.2 s: the progress seen on the way is reported, and must never go
   backwards;
2. *incremental*: 10 new turns appended, compiled again (the watermark makes it read only them):
   the request's latency, median of ``--repeat`` rounds.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import psycopg

from bench.harness import (
    embedded_postgres,
    machine,
    markdown_table,
    new_database,
    serve,
    write_result,
)
from bench.longmemeval import load_questions

__all__ = ["main"]

NAMESPACE = "compile-speed"


def _turns(count: int) -> list[dict[str, Any]]:
    turns: list[dict[str, Any]] = []
    for question in load_questions():
        for turn in question.turns:
            turns.append(
                {
                    "role": turn.role if turn.role in ("user", "assistant") else "user",
                    "content": turn.text[:4000] if turn.text.strip() else "(empty turn)",
                }
            )
    # Each turn its own instant, a second apart in the data set's order (a session's turns
    # share the data set's session date, so the dates themselves cannot order them). More turns
    # than the data set holds: it is read again from its start, each a turn of its own.
    start = datetime(2023, 1, 1, tzinfo=UTC)
    rows = [dict(turns[n % len(turns)]) for n in range(count)]
    for index, row in enumerate(rows):
        row["occurred_at"] = (start + timedelta(seconds=index)).strftime("%Y-%m-%dT%H:%M:%SZ")
    return rows


def _append(http: httpx.Client, session_id: str, turns: list[dict[str, Any]]) -> None:
    for start in range(0, len(turns), 100):
        body = {"turns": turns[start : start + 100]}
        response = http.post(f"/v1/sessions/{session_id}/turns", json=body)
        if response.status_code != 200:
            raise RuntimeError(f"append: {response.status_code} {response.text[:300]}")


@dataclass(frozen=True)
class Compiled:
    seconds: float
    created: int
    superseded: int
    conflicts: int
    queued: bool
    progress: list[tuple[float, int, int | None]]  # (seconds, episodes read, total) as polled


def _compile(http: httpx.Client, session_id: str, extractor: str | None) -> Compiled:
    started = time.perf_counter()
    ask = {"session_id": session_id} | ({} if extractor is None else {"extractor": extractor})
    response = http.post("/v1/compile", json=ask)
    if response.status_code == 200 and response.json()["status"] == "completed":
        done = response.json()
        seconds = time.perf_counter() - started
        return Compiled(seconds, done["created"], done["superseded"], done["conflicts"], False, [])
    if response.status_code != 202:
        raise RuntimeError(f"compile: {response.status_code} {response.text[:300]}")
    progress = []
    while True:
        time.sleep(0.2)
        job = http.get(response.headers["location"]).json()
        seen = job["progress"]
        progress.append(
            (time.perf_counter() - started, seen["episodes_read"], seen["episodes_total"])
        )
        if job["status"] == "completed":
            counts = job["counts"]
            return Compiled(
                time.perf_counter() - started,
                counts["created"],
                counts["superseded"],
                counts["conflicts"],
                True,
                progress,
            )
        if job["status"] == "failed":
            raise RuntimeError(f"compile failed: {job['error']}")


def _decisions_by_rule(url: str) -> dict[str, int]:
    """How many supersession decisions each rule made: `value` ones retire remembered turns
    (and digests) stating a superseded value, the count to watch for over-retirement."""
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT rule, count(*) FROM supersessions GROUP BY rule ORDER BY rule")
        return {str(rule): int(count) for rule, count in rows.fetchall()}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench compile", description=__doc__)
    parser.add_argument("--turns", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--extractor", default=None, help="e.g. rules/2026-12-03.1 (default: the gateway's)"
    )
    args = parser.parse_args(argv)
    turns = _turns(args.turns + 10 * args.repeat)
    with embedded_postgres() as server:
        database = new_database(server, "bench_compile")
        with (
            serve(database) as app,
            httpx.Client(base_url=app.base_url, headers=app.headers, timeout=3600) as http,
        ):
            created = http.post("/v1/sessions", json={"namespace": NAMESPACE, "task": "chat"})
            session_id = created.json()["session_id"]
            started = time.perf_counter()
            _append(http, session_id, turns[: args.turns])
            append_seconds = time.perf_counter() - started
            full = _compile(http, session_id, args.extractor)
            full_seconds = full.seconds
            by_rule = _decisions_by_rule(database.url)
            rounds: list[float] = []
            for round_ in range(args.repeat):
                start = args.turns + 10 * round_
                _append(http, session_id, turns[start : start + 10])
                rounds.append(_compile(http, session_id, args.extractor).seconds)
        info = machine(server)
    rows = [
        ["full", args.turns, f"{full_seconds:.2f} s", f"{args.turns / full_seconds:.0f}"],
        [
            "incremental (+10)",
            10,
            f"{1000 * statistics.median(rounds):.0f} ms (median of {args.repeat})",
            f"{10 / statistics.median(rounds):.0f}",
        ],
    ]
    print(markdown_table(["compile", "turns", "time", "turns/s"], rows))
    print(
        f"facts created {full.created}, superseded {full.superseded}, "
        f"conflicts {full.conflicts}; appending {args.turns} turns took {append_seconds:.1f} s"
    )
    read = [r for _, r, _ in full.progress]
    if full.queued:
        print(
            f"queued (202) and polled {len(full.progress)} times: episodes read "
            f"{', '.join(str(r) for r in read[:: max(1, len(read) // 8)])} ... {read[-1]} of "
            f"{full.progress[-1][2]}; never backwards: {read == sorted(read)}"
        )
    print("supersessions of the full compile by rule:", by_rule)
    path = write_result(
        "compile",
        {
            "machine": info,
            "turns": args.turns,
            "extractor": args.extractor,
            "full_seconds": full_seconds,
            "full": dataclasses.asdict(full),
            "incremental_seconds": rounds,
            "append_seconds": append_seconds,
            "supersessions_by_rule": by_rule,
        },
    )
    print(f"written {path}")
    return 0
