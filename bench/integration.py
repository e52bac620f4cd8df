"""What the integration surfaces cost (issue 17): one /v1/context asked five ways, and /metrics
under load; and what the MCP tools' results cost an agent (issue 32).

1. Overhead: the same context request (one task per round, cycling the LongMemEval_S questions)
   as raw httpx POST /v1/context (the baseline), through `gateway.client.AsyncClient`, as the MCP
   tool `get_context` over stdio (`ctxgw mcp`, a session kept open by the SDK's client) and over
   Streamable HTTP at `/mcp`. Interleaved per round so that machine noise falls on all alike;
   one closed-loop caller, so each latency is one request's. (The tool's whole result fits the
   budget, so it asks the gateway for a bundle a share smaller: 1,768 tokens at 2,000.)
2. Metrics: /v1/context p50 in alternating blocks with and without a scraper reading /metrics
   every 200 ms beside it, and the latency of a scrape itself; then, in process, what recording
   costs one request (the timing middleware and reading the bundle's typed body), which the
   blocks' spread on a shared machine cannot resolve.
3. Tool results against their budget: `get_context` and `search_memories` (50 hits asked, so
   that small budgets overflow) over /mcp at each of `--budgets`, one call per question, the
   whole tool result counted with the gateway's tokenizer over the budget named (the tools
   promise at most 1.0), and the refs the result kept of those the bundle names; beside it the
   same call with `verbose` (the gateway's whole response, as every call returned before).
   `--tool-budgets-only` runs this part alone.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from types import SimpleNamespace
from typing import Any

import httpx
import msgspec
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from bench.corpus import load_corpus, loaded_database
from bench.harness import (
    Server,
    embedded_postgres,
    machine,
    markdown_table,
    percentile,
    serve,
    write_result,
)
from gateway.client import AsyncClient
from gateway.core.tokens import load_tokenizer
from gateway.http.metrics import Metrics
from gateway.http.request_log import with_request_log
from gateway.responses.disclosures import ContextBundle
from gateway.shell.settings import Settings, load_settings
from gateway.store.pool import open_pool

__all__ = ["main"]

NAMESPACE = "i"
BUDGET = 2000
TOOL_BUDGETS = "300,800,2000,4000"
Ask = Callable[[str], Awaitable[object]]


async def _mcp_session(stack: AsyncExitStack, server: Server, http: bool) -> ClientSession:
    key = server.headers["Authorization"].removeprefix("Bearer ")
    if http:
        client = await stack.enter_async_context(
            httpx.AsyncClient(headers=server.headers, timeout=120)
        )
        streams = await stack.enter_async_context(
            streamable_http_client(f"{server.base_url}/mcp/", http_client=client)
        )
        read, write = streams[0], streams[1]
    else:
        env = {**os.environ, "CTXGW_API_KEY": key, "CTXGW_URL": server.base_url}
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "gateway", "mcp"], env=env
        )
        read, write = await stack.enter_async_context(stdio_client(params))
    session = await stack.enter_async_context(ClientSession(read, write))
    await session.initialize()
    return session


def _tool(session: ClientSession) -> Ask:
    async def ask(task: str) -> object:
        result = await session.call_tool("get_context", {"task": task, "budget_tokens": BUDGET})
        if result.isError:
            raise RuntimeError(str(result.content))
        return result

    return ask


async def _overhead(
    server: Server, queries: tuple[str, ...], rounds: int
) -> dict[str, list[float]]:
    async with AsyncExitStack() as stack:
        raw = await stack.enter_async_context(
            httpx.AsyncClient(base_url=server.base_url, headers=server.headers, timeout=120)
        )
        key = server.headers["Authorization"].removeprefix("Bearer ")
        client = await stack.enter_async_context(AsyncClient(key, server.base_url, timeout=120))

        async def over_http(task: str) -> object:
            response = await raw.post("/v1/context", json={"task": task, "budget_tokens": BUDGET})
            response.raise_for_status()
            return response.json()

        async def through_client(task: str) -> object:
            return await client.context(task, budget_tokens=BUDGET)

        asks: dict[str, Ask] = {
            "httpx /v1/context (baseline)": over_http,
            "client.context": through_client,
            "MCP get_context, stdio": _tool(await _mcp_session(stack, server, http=False)),
            "MCP get_context, /mcp": _tool(await _mcp_session(stack, server, http=True)),
        }
        times: dict[str, list[float]] = {name: [] for name in asks}
        for warm in range(5):  # connections, caches, the MCP servers' first calls
            for ask in asks.values():
                await ask(queries[warm % len(queries)])
        for number in range(rounds):
            task = queries[number % len(queries)]
            for name, ask in asks.items():
                started = time.perf_counter()
                await ask(task)
                times[name].append((time.perf_counter() - started) * 1000)
        return times


async def _metrics_cost(
    server: Server, queries: tuple[str, ...], blocks: int, per_block: int, bodies: list[bytes]
) -> dict[str, list[float]]:
    """Alternating blocks without and with a scraper; the context responses go to `bodies`."""
    times: dict[str, list[float]] = {"without a scraper": [], "with a scraper": [], "scrape": []}
    async with httpx.AsyncClient(
        base_url=server.base_url, headers=server.headers, timeout=120
    ) as http:

        async def scraper(stop: asyncio.Event) -> None:
            while not stop.is_set():
                started = time.perf_counter()
                (await http.get("/metrics")).raise_for_status()
                times["scrape"].append((time.perf_counter() - started) * 1000)
                await asyncio.sleep(0.2)

        for block in range(blocks * 2):
            scraping = block % 2 == 1
            stop = asyncio.Event()
            task = asyncio.create_task(scraper(stop)) if scraping else None
            for number in range(per_block):
                started = time.perf_counter()
                body = {"task": queries[number % len(queries)], "budget_tokens": BUDGET}
                response = await http.post("/v1/context", json=body)
                response.raise_for_status()
                name = "with a scraper" if scraping else "without a scraper"
                bodies.append(response.content)
                times[name].append((time.perf_counter() - started) * 1000)
            stop.set()
            if task is not None:
                await task
    return times


async def _recording_cost(bodies: list[bytes], settings: Settings, runs: int) -> dict[str, float]:
    """What recording costs one request, in microseconds, in process: the request log's wrapper
    (its line and the request's metrics) around an app that answers at once (less that app
    alone), and reading a real bundle's typed body
    (tokens, utilization, exclusions, decisions) as the `after_request` hook does."""
    metrics = Metrics()
    pool = open_pool(settings.database_url or "", settings)  # never opened: its stats suffice
    scope: Any = {
        "type": "http",
        "method": "POST",
        "headers": [],
        "path_template": "/v1/context",
        # What `Metrics.served` reads of the runtime: its pool and its receipt writer's totals.
        "app": SimpleNamespace(
            state=SimpleNamespace(
                runtime=SimpleNamespace(
                    pool=pool,
                    discloser=SimpleNamespace(
                        recorder=SimpleNamespace(log=SimpleNamespace(held_seconds=0.0, sealed=0))
                    ),
                )
            )
        ),
    }

    async def answer(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    async def sent(message: Any) -> None:
        return None

    async def nothing() -> Any:
        return {"type": "http.disconnect"}

    timed = with_request_log(answer, metrics)
    elapsed: dict[str, float] = {}
    for name, app in (("bare", answer), ("timed", timed)):
        started = time.perf_counter()
        for _ in range(runs):
            await app(scope, nothing, sent)
        elapsed[name] = (time.perf_counter() - started) / runs * 1e6
    bundles = [msgspec.json.decode(body, type=ContextBundle) for body in bodies]
    started = time.perf_counter()
    for number in range(runs):
        metrics.disclosed(bundles[number % len(bundles)])
    read = (time.perf_counter() - started) / runs * 1e6
    return {"observed_us": elapsed["timed"] - elapsed["bare"], "disclosed_us": read}


async def _tool_budgets(
    server: Server, queries: tuple[str, ...], budgets: list[int]
) -> dict[str, dict[int, list[dict[str, float]]]]:
    """Per tool and budget, one record per question: the result's tokens over the budget, and
    (get_context) the refs kept and those left out."""
    count = load_tokenizer().count
    seen: dict[str, dict[int, list[dict[str, float]]]] = {
        "get_context": {b: [] for b in budgets},
        "search_memories": {b: [] for b in budgets},
    }
    async with AsyncExitStack() as stack:
        session = await _mcp_session(stack, server, http=True)
        for task in queries:
            for budget in budgets:
                asks = {
                    "get_context": {"task": task, "budget_tokens": budget},
                    "search_memories": {"query": task, "limit": 50, "budget_tokens": budget},
                }
                for tool, arguments in asks.items():
                    text = await _called(session, tool, arguments)
                    body = msgspec.json.decode(text)
                    kept = len(body.get("refs", {}))
                    verbose = await _called(session, tool, {**arguments, "verbose": True})
                    seen[tool][budget].append(
                        {
                            "ratio": count(text) / budget,
                            "verbose_ratio": count(verbose) / budget,
                            "refs": kept,
                            "refs_named": kept + body.get("refs_left_out", 0),
                            "hits": len(body.get("results", [])),
                        }
                    )
    return seen


async def _called(session: ClientSession, tool: str, arguments: dict[str, Any]) -> str:
    result = await session.call_tool(tool, arguments)
    [content] = result.content
    text = str(getattr(content, "text", ""))
    if result.isError:
        raise RuntimeError(text)
    return text


def _budget_rows(seen: dict[str, dict[int, list[dict[str, float]]]]) -> list[list[Any]]:
    rows: list[list[Any]] = []
    for tool, by_budget in seen.items():
        for budget, records in by_budget.items():
            ratios = [r["ratio"] for r in records]
            verbose = [r["verbose_ratio"] for r in records]
            shown = (
                f"{sum(r['refs'] for r in records) / len(records):.1f} of "
                f"{sum(r['refs_named'] for r in records) / len(records):.1f} refs"
                if tool == "get_context"
                else f"{sum(r['hits'] for r in records) / len(records):.1f} of 50 hits"
            )
            rows.append(
                [
                    tool,
                    budget,
                    len(records),
                    f"{sum(ratios) / len(ratios):.3f}",
                    f"{max(ratios):.3f}",
                    shown,
                    f"{sum(verbose) / len(verbose):.2f}",
                ]
            )
    return rows


def _rows(times: dict[str, list[float]], baseline: str) -> list[list[Any]]:
    base = percentile(times[baseline], 50)
    return [
        [name, len(v), percentile(v, 50), percentile(v, 95), f"{percentile(v, 50) / base:.2f}×"]
        for name, v in times.items()
    ]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench integration")
    parser.add_argument("--memories", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--blocks", type=int, default=5)
    parser.add_argument("--per-block", type=int, default=40)
    parser.add_argument("--budgets", default=TOOL_BUDGETS, help="the tools' budgets, part 3")
    parser.add_argument("--budget-queries", type=int, default=20, help="questions, part 3")
    parser.add_argument("--tool-budgets-only", action="store_true", help="run part 3 alone")
    args = parser.parse_args(argv)
    corpus = load_corpus()
    queries = corpus.queries[:50]
    budgets = sorted({int(b) for b in args.budgets.split(",")})
    with embedded_postgres() as pg:
        db = loaded_database(pg, "integration", corpus, namespace=NAMESPACE, memories=args.memories)
        with serve(db) as server:
            tool_budgets = asyncio.run(
                _tool_budgets(server, queries[: args.budget_queries], budgets)
            )
            if args.tool_budgets_only:
                return _report_tool_budgets(args, tool_budgets, machine(pg))
            overhead = asyncio.run(_overhead(server, queries, args.rounds))
            bodies: list[bytes] = []
            metrics = asyncio.run(
                _metrics_cost(server, queries, args.blocks, args.per_block, bodies)
            )
        recording = asyncio.run(_recording_cost(bodies, load_settings({}), 20_000))
        info = machine(pg)
    _report_tool_budgets(args, tool_budgets, None)
    headers = ["what", "n", "p50 ms", "p95 ms", "p50 ÷ baseline"]
    print(f"\n{args.memories} memories, budget {BUDGET}, one caller\n")
    print(markdown_table(headers, _rows(overhead, "httpx /v1/context (baseline)")))
    print()
    print(markdown_table(headers, _rows(metrics, "without a scraper")))
    spread = [
        percentile(metrics[name][i : i + args.per_block], 50)
        for name in ("without a scraper", "with a scraper")
        for i in range(0, len(metrics[name]), args.per_block)
    ]
    print(f"\nper-block p50s (without, then with): {[round(s, 1) for s in spread]}")
    cost = recording["observed_us"] + recording["disclosed_us"]
    base = percentile(metrics["without a scraper"], 50) * 1000
    print(
        f"recording per request, in process: log and metrics {recording['observed_us']:.1f} µs"
        f" + reading the bundle {recording['disclosed_us']:.1f} µs = {cost:.1f} µs,"
        f" {cost / base:.2%} of the /v1/context p50"
    )
    path = write_result(
        "integration",
        {
            "machine": info,
            "args": vars(args),
            "overhead": overhead,
            "metrics": metrics,
            "recording": recording,
            "tool_budgets": tool_budgets,
        },
    )
    print(f"raw: {path}")
    return 0


def _report_tool_budgets(
    args: argparse.Namespace,
    seen: dict[str, dict[int, list[dict[str, float]]]],
    info: dict[str, Any] | None,
) -> int:
    """Part 3's table; written as its own result when it ran alone."""
    print(f"MCP tool results over /mcp, {args.memories} memories: tokens ÷ budget named\n")
    headers = ["tool", "budget", "n", "mean ratio", "max ratio", "shown (mean)", "verbose ratio"]
    print(markdown_table(headers, _budget_rows(seen)))
    if info is not None:
        path = write_result(
            "integration-tools", {"machine": info, "args": vars(args), "tool_budgets": seen}
        )
        print(f"raw: {path}")
    return 0
