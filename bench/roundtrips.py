"""Database round trips per request, counted on the wire.

The gateway runs in-process on a pool of exactly one connection, so every request of the app uses
that connection, and the receipt log's group commit on its own one; libpq's protocol trace
(``PGconn.trace``) is attached to both, and their trips added (a request waits for its receipt's,
so both lie on its path). A round trip is a
turn of the conversation: the client sends one or more messages, then reads the server's answer;
in the trace, a run of client (F) messages followed by server (B) messages. Statements sent
together in a pipeline and read together count once. Requests go through the real ASGI app
(Litestar's in-process client, same event loop), after warm-up requests that make the state
steady (the shipped default policy stored, plans cached). Messages the client sends are counted
too (Query, Parse, Bind, Execute, Sync) to show what the trips carry.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import tempfile
import threading
import time
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

from litestar import Litestar
from litestar.testing import AsyncTestClient
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg.pq import Trace

from bench.corpus import load_corpus, loaded_database
from bench.harness import embedded_postgres, markdown_table, write_result
from gateway.http.app import create_app
from gateway.shell.runtime import Runtime, start_runtime
from gateway.shell.settings import Settings

__all__ = ["count_round_trips", "main"]

NAMESPACE = "trips"
_SENT = ("Query", "Parse", "Bind", "Execute", "Sync", "Flush")


def _tally(trace: str) -> Counter[str]:
    found: Counter[str] = Counter()
    previous = ""
    for line in trace.splitlines():
        parts = line.split("\t")
        if len(parts) >= 3 and parts[0] in ("F", "B"):
            direction, message = parts[0], parts[2].split(" ")[0]
            if direction == "F" and message in _SENT:
                found[message] += 1
            found["round_trips"] += previous == "F" and direction == "B"
            previous = direction
    return found


@contextlib.asynccontextmanager
async def _gateway(url: str) -> AsyncIterator[tuple[Runtime, AsyncTestClient[Litestar]]]:
    """The app in-process on a pool of exactly one connection, and a client of it."""
    with tempfile.TemporaryDirectory(prefix="ctxgw-bench-trips-") as data_dir:
        settings = Settings(
            database_url=url,
            data_dir=Path(data_dir),
            migrate_on_start=False,
            pool_min_size=1,
            pool_max_size=1,
            log_level="WARNING",
        )
        async with start_runtime(settings) as runtime:
            app = create_app(settings, runtime=runtime)
            async with AsyncTestClient(app=app) as client:
                yield runtime, client


async def count_round_trips(
    url: str, key: str, requests: list[tuple[str, dict[str, Any]]], *, warmup: int = 3
) -> list[Counter[str]]:
    """The wire tally of each request (path, JSON body), after `warmup` rounds of them all."""
    headers = {"Authorization": f"Bearer {key}"}
    async with _gateway(url) as (runtime, client):
        for _ in range(warmup):
            for path, body in requests:
                (await client.post(path, json=body, headers=headers)).raise_for_status()
        tallies = []
        trace_path = Path(runtime.settings.data_dir) / "trace.txt"
        for path, body in requests:
            pools = (runtime.pool, runtime.receipt_pool)
            traces = [trace_path.with_suffix(f".{n}.txt") for n in range(len(pools))]
            with contextlib.ExitStack() as files:
                for pool, path_of in zip(pools, traces, strict=True):
                    out = files.enter_context(path_of.open("w"))
                    conn = await pool.getconn()
                    conn.pgconn.trace(out.fileno())
                    conn.pgconn.set_trace_flags(Trace.SUPPRESS_TIMESTAMPS)
                    await pool.putconn(conn)
                response = await client.post(path, json=body, headers=headers)
                for pool in pools:
                    conn = await pool.getconn()
                    conn.pgconn.untrace()
                    await pool.putconn(conn)
            response.raise_for_status()
            tally: Counter[str] = Counter()
            for path_of in traces:
                tally += _tally(path_of.read_text())
                if os.environ.get("CTXGW_TRACE_DUMP"):
                    print(path, path_of.read_text(), sep="\n")
            tallies.append(tally)
        return tallies


class _SlowLink:
    """A unix-socket proxy in front of PostgreSQL that holds every chunk the server sends for
    `delay` seconds (in order), as a network with that round-trip time would."""

    def __init__(self, target: str, directory: Path, port: int) -> None:
        self.target, self.directory, self.port = target, directory, port
        self.delay = 0.0

    async def _pipe(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, delayed: bool
    ) -> None:
        loop = asyncio.get_running_loop()
        pending: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

        async def deliver() -> None:
            while True:
                due, chunk = await pending.get()
                if not chunk:
                    writer.close()
                    return
                await asyncio.sleep(max(0.0, due - loop.time()))
                writer.write(chunk)
                await writer.drain()

        sender = asyncio.create_task(deliver())
        while chunk := await reader.read(65536):
            pending.put_nowait((loop.time() + (self.delay if delayed else 0.0), chunk))
        pending.put_nowait((loop.time(), b""))
        await sender

    async def _serve(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        server_r, server_w = await asyncio.open_unix_connection(self.target)
        await asyncio.gather(
            self._pipe(client_r, server_w, delayed=False),
            self._pipe(server_r, client_w, delayed=True),
            return_exceptions=True,
        )

    def run(self) -> contextlib.AbstractContextManager[None]:
        """Serve in a thread of its own: the in-process client runs the app in another thread,
        whose event loop blocks the caller's while it answers."""
        return self._running()

    @contextlib.contextmanager
    def _running(self) -> Iterator[None]:
        loop = asyncio.new_event_loop()
        ready = threading.Event()

        def serve() -> None:
            asyncio.set_event_loop(loop)
            path = str(self.directory / f".s.PGSQL.{self.port}")
            server = loop.run_until_complete(asyncio.start_unix_server(self._serve, path=path))
            ready.set()
            loop.run_forever()
            server.close()
            loop.close()

        thread = threading.Thread(target=serve, name="slow-link", daemon=True)
        thread.start()
        ready.wait(timeout=10)
        try:
            yield
        finally:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout=10)


async def network_round_trips(
    url: str, key: str, requests: list[tuple[str, dict[str, Any]]], *, delay: float
) -> list[float]:
    """Round trips as a network sees them: each request's time behind a link that delays the
    server's answers by `delay`, minus its time with no delay, over `delay` (the best of three
    each, after a warm-up)."""
    params = conninfo_to_dict(url)
    host, port = str(params["host"]), int(params.get("port") or 5432)
    with tempfile.TemporaryDirectory(prefix="ctxgw-bench-link-") as link_dir:
        link = _SlowLink(f"{host}/.s.PGSQL.{port}", Path(link_dir), port)
        with link.run():
            return await _timed(make_conninfo(url, host=link_dir), key, requests, link, delay)


async def _timed(
    url: str,
    key: str,
    requests: list[tuple[str, dict[str, Any]]],
    link: _SlowLink,
    delay: float,
) -> list[float]:
    headers = {"Authorization": f"Bearer {key}"}
    async with _gateway(url) as (_, client):

        async def best(path: str, body: dict[str, Any]) -> float:
            times = []
            for _ in range(3):
                started = time.perf_counter()
                (await client.post(path, json=body, headers=headers)).raise_for_status()
                times.append(time.perf_counter() - started)
            return min(times)

        for path, body in requests:
            await best(path, body)
        trips = []
        for path, body in requests:
            link.delay = 0.0
            fast = await best(path, body)
            link.delay = delay
            slow = await best(path, body)
            trips.append((slow - fast) / delay)
        return trips


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench roundtrips", description=__doc__)
    parser.add_argument("--memories", type=int, default=1000)
    parser.add_argument("--requests", type=int, default=5, help="requests per endpoint")
    parser.add_argument(
        "--delay-ms", type=float, default=50.0, help="the slow link's delay (0: wire count only)"
    )
    args = parser.parse_args(argv)
    corpus = load_corpus()
    queries = corpus.queries[: args.requests]
    requests: list[tuple[str, dict[str, Any]]] = [
        ("/v1/context", {"task": q, "namespaces": [NAMESPACE]}) for q in queries
    ] + [("/v1/search", {"query": q, "namespaces": [NAMESPACE]}) for q in queries]
    with embedded_postgres() as pg:
        db = loaded_database(
            pg, "bench_roundtrips", corpus, namespace=NAMESPACE, memories=args.memories
        )
        tallies = asyncio.run(count_round_trips(db.app_url, db.key, requests))
        felt = (
            asyncio.run(
                network_round_trips(db.app_url, db.key, requests, delay=args.delay_ms / 1000)
            )
            if args.delay_ms > 0
            else [float("nan")] * len(requests)
        )
    rows = []
    for path in ("/v1/context", "/v1/search"):
        mine = [t for (p, _), t in zip(requests, tallies, strict=True) if p == path]
        trips = sorted(t["round_trips"] for t in mine)
        sent = {m: max(t[m] for t in mine) for m in _SENT}
        seen = sorted(f for (p, _), f in zip(requests, felt, strict=True) if p == path)
        rows.append(
            [path, trips[0], trips[-1], f"{seen[len(seen) // 2]:.1f}", *(sent[m] for m in _SENT)]
        )
    table = markdown_table(
        [
            "endpoint",
            "round trips (min)",
            "round trips (max)",
            f"behind a {args.delay_ms:g} ms link (median)",
            *(f"{m} msgs" for m in _SENT),
        ],
        rows,
    )
    write_result(
        "roundtrips",
        {
            "benchmark": "roundtrips",
            "command": "python -m bench roundtrips " + " ".join(argv),
            "pid": os.getpid(),
            "rows": rows,
        },
    )
    print(table)
    return 0
