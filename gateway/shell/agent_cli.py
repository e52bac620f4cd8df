"""`ctxgw context` and `ctxgw search`: what an agent with a shell rather than MCP asks, printed
as the MCP tools return it (`gateway.client.tool_results`): one line of compact JSON, the whole
of it within `--budget` tokens; `--json` prints the gateway's whole response instead.

Clients of a running gateway, like `ctxgw mcp`: the key from `--key` or `CTXGW_API_KEY`, the
gateway from `--url` or `CTXGW_URL`; no `GATEWAY_*` settings, no database.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from typing import Any

import msgspec

from gateway.client import AsyncClient, ClientError, ProblemError
from gateway.client.mcp_server import CONTEXT_BUDGET, SEARCH_BUDGET
from gateway.client.options import ContextOptions, SearchOptions
from gateway.client.tool_results import (
    DEFAULT_TOKENIZER,
    BudgetTooSmallError,
    bounded_text,
    fit_search,
    text_budget,
)
from gateway.responses.disclosures import ContextBundle

__all__ = ["add_parsers", "run_agent_command"]


def add_parsers(commands: Any) -> None:
    context = commands.add_parser("context", help="a context bundle for a task, as agents get it")
    context.add_argument("task")
    context.add_argument("--budget", type=int, default=CONTEXT_BUDGET, help="tokens (the output)")
    context.add_argument("--top-k", type=int, help="memories in full at most")
    search = commands.add_parser("search", help="pointers to the memories that match a query")
    search.add_argument("query")
    search.add_argument("--budget", type=int, default=SEARCH_BUDGET, help="tokens (the output)")
    search.add_argument("--limit", type=int, default=8)
    for command in (context, search):
        # Clients, like `mcp`: run without the gateway's settings (`cli.main` reads this).
        command.set_defaults(agent_command=True)
        command.add_argument("--namespaces", help="comma-separated namespaces")
        command.add_argument("--purpose")
        command.add_argument("--url", help="gateway URL (default CTXGW_URL or local)")
        command.add_argument("--key", help="API key (default CTXGW_API_KEY)")
        command.add_argument(
            "--json", action="store_true", help="the gateway's whole response (not bounded)"
        )


async def _context(ctxgw: AsyncClient, args: argparse.Namespace) -> object:
    options: ContextOptions = {}
    if args.top_k is not None:
        options["top_k"] = args.top_k
    if args.namespaces:
        options["namespaces"] = [n.strip() for n in args.namespaces.split(",")]
    if args.purpose:
        options["purpose"] = args.purpose

    async def ask(asked: int) -> ContextBundle:
        at: ContextOptions = {**options, "budget_tokens": asked}
        return await ctxgw.context(args.task, **at)

    if args.json:  # the response the compact result is made from (its first ask)
        return await ask(text_budget(args.budget))
    return await bounded_text(ask, args.budget)


async def _search(ctxgw: AsyncClient, args: argparse.Namespace) -> object:
    options: SearchOptions = {"limit": args.limit}
    if args.namespaces:
        options["namespaces"] = [n.strip() for n in args.namespaces.split(",")]
    if args.purpose:
        options["purpose"] = args.purpose
    found = await ctxgw.search(args.query, **options)
    if args.json:
        return found
    tokenizer = os.environ.get("CTXGW_TOKENIZER") or DEFAULT_TOKENIZER
    return fit_search(found, args.budget, tokenizer)


def run_agent_command(args: argparse.Namespace) -> int:
    key = args.key or os.environ.get("CTXGW_API_KEY")
    if not key:
        print(f"ctxgw {args.command}: give --key or set CTXGW_API_KEY", file=sys.stderr)
        return 2
    url = args.url or os.environ.get("CTXGW_URL") or "http://127.0.0.1:8080"
    run = _context if args.command == "context" else _search

    async def answer() -> object:
        async with AsyncClient(key, url, timeout=60) as ctxgw:
            return await run(ctxgw, args)

    try:
        result = asyncio.run(answer())
    except BudgetTooSmallError as exc:
        print(f"ctxgw {args.command}: {exc.code}: {exc}", file=sys.stderr)
        return 2
    except ProblemError as exc:
        fields = "".join(f"; {e.field}: {e.message}" for e in exc.errors)
        print(f"ctxgw {args.command}: {exc.code}: {exc.detail}{fields}", file=sys.stderr)
        return 1
    except ClientError as exc:
        print(f"ctxgw {args.command}: gateway_unreachable: {exc}", file=sys.stderr)
        return 1
    print(msgspec.json.encode(result).decode())
    return 0
