"""What OpenTelemetry tracing costs a /v1/context (issue 36): the same database served twice,
once untraced and once traced as an operator would run it (`OTEL_EXPORTER_OTLP_ENDPOINT` set:
every request's span and its stages' spans, batched and exported over OTLP/HTTP to a collector,
here a local sink that reads and acknowledges each export).

One closed-loop caller, the two servers asked the same task in turn, round after round, so that
machine noise falls on both alike; latency p50/p95 per server, and the serving CPU per request
(user + system time of each server process over the run, divided by its requests), which a
shared machine inflates far less than latency.

    python -m bench.tracing_cost [--memories 1000] [--rounds 400]
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any, ClassVar

import httpx

from bench.corpus import load_corpus, loaded_database
from bench.harness import (
    Server,
    cpu_seconds,
    embedded_postgres,
    machine,
    markdown_table,
    percentile,
    serve,
    write_result,
)

__all__ = ["main"]

NAMESPACE = "t"
BUDGET = 2000


class _Sink(BaseHTTPRequestHandler):
    """An OTLP/HTTP collector that reads each export and answers 200."""

    exports: ClassVar[int] = 0

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        type(self).exports += 1
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def _collector() -> Iterator[str]:
    sink = HTTPServer(("127.0.0.1", 0), _Sink)
    thread = threading.Thread(target=sink.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{sink.server_port}"
    finally:
        sink.shutdown()
        sink.server_close()


@contextmanager
def _environment(**said: str | None) -> Iterator[None]:
    before = {name: os.environ.get(name) for name in said}
    try:
        for name, value in said.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _run(
    servers: dict[str, Server], queries: tuple[str, ...], rounds: int
) -> dict[str, dict[str, float]]:
    clients = {
        name: httpx.Client(base_url=s.base_url, headers=s.headers, timeout=120)
        for name, s in servers.items()
    }
    times: dict[str, list[float]] = {name: [] for name in servers}
    try:
        for warm in range(10):
            for client in clients.values():
                client.post("/v1/context", json={"task": queries[warm % len(queries)]})
        cpu = {name: cpu_seconds(s.pid or 0) for name, s in servers.items()}
        for number in range(rounds):
            task = {"task": queries[number % len(queries)], "budget_tokens": BUDGET}
            order = list(clients.items())
            if number % 2:  # neither server always goes first
                order.reverse()
            for name, client in order:
                started = time.perf_counter()
                client.post("/v1/context", json=task).raise_for_status()
                times[name].append((time.perf_counter() - started) * 1000)
        spent = {name: cpu_seconds(s.pid or 0) - cpu[name] for name, s in servers.items()}
    finally:
        for client in clients.values():
            client.close()
    return {
        name: {
            "n": len(times[name]),
            "p50_ms": percentile(times[name], 50),
            "p95_ms": percentile(times[name], 95),
            "cpu_ms_per_request": spent[name] * 1000 / len(times[name]),
        }
        for name in servers
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.tracing_cost")
    parser.add_argument("--memories", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=400)
    args = parser.parse_args(argv)
    corpus = load_corpus()
    queries = corpus.queries[:50]
    with embedded_postgres() as pg, _collector() as endpoint:
        db = loaded_database(pg, "tracing", corpus, namespace=NAMESPACE, memories=args.memories)
        untraced = {"OTEL_EXPORTER_OTLP_ENDPOINT": None, "OTEL_TRACES_EXPORTER": None}
        traced = {"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_TRACES_EXPORTER": None}
        servers = {}
        with (
            _environment(**untraced),
            serve(db) as servers["untraced"],
            _environment(**traced),
            serve(db) as servers["traced (OTLP/HTTP)"],
        ):
            found = _run(servers, queries, args.rounds)
        info = machine(pg)
    base = found["untraced"]
    rows = [
        [
            name,
            r["n"],
            f"{r['p50_ms']:.2f}",
            f"{r['p95_ms']:.2f}",
            f"{r['p50_ms'] - base['p50_ms']:+.2f}",
            f"{r['cpu_ms_per_request']:.2f}",
        ]
        for name, r in found.items()
    ]
    print(f"\n/v1/context, {args.memories} memories, budget {BUDGET}, one caller, {info}\n")
    print(markdown_table(["server", "n", "p50 ms", "p95 ms", "p50 Δ ms", "CPU ms/request"], rows))
    print(f"\nOTLP exports received by the sink: {_Sink.exports}")
    path = write_result(
        "tracing_cost",
        {"args": vars(args), "machine": info, "results": found, "exports": _Sink.exports},
    )
    print(f"written to {path}")
    return 0 if _Sink.exports > 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
