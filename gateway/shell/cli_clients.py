"""The commands that are clients of a running gateway, not a gateway: `ctxgw sweep` (one task at
several budgets), `ctxgw session` (sessions over HTTP) and `ctxgw mcp` (the agent tools over MCP).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from pathlib import Path

from gateway.shell.settings import Settings

__all__ = ["run_mcp_command", "run_session_command", "run_sweep_command"]


def run_sweep_command(args: argparse.Namespace, settings: Settings) -> int:
    from gateway.client import Client, ClientError
    from gateway.shell.sweep import render_svg, render_table, run_sweep, sweep_options

    key = _agent_key(args, settings, "sweep")
    if key is None:
        return 2
    try:
        budgets = sorted({int(b) for b in args.budgets.split(",")})
    except ValueError:
        print("ctxgw sweep: --budgets takes comma-separated integers", file=sys.stderr)
        return 2
    options = sweep_options(
        top_k=args.top_k,
        include_index=False if args.no_index else None,
        namespaces=[n.strip() for n in args.namespaces.split(",")] if args.namespaces else None,
    )
    url = args.url or f"http://{settings.host}:{settings.port}"
    with Client(key, url, timeout=60) as ctxgw:
        try:
            rows = run_sweep(ctxgw, args.task, budgets, options)
        except ClientError as exc:
            print(f"ctxgw sweep: {exc}", file=sys.stderr)
            return 1
    print(render_table(rows))
    Path(args.chart).write_text(render_svg(rows, f"ctxgw sweep: {args.task}"))
    print(f"\nchart written to {args.chart}")
    return 0


def _agent_key(args: argparse.Namespace, settings: Settings, command: str) -> str | None:
    """`--key`, or the demo agent key in the data dir; None (after saying so) when neither."""
    if args.key is not None:
        return str(args.key)
    demo = settings.data_dir / "demo-keys.json"
    if not demo.exists():
        print(f"ctxgw {command}: give --key (no demo keys found)", file=sys.stderr)
        return None
    return str(json.loads(demo.read_text())["agent"])


def run_session_command(args: argparse.Namespace, settings: Settings) -> int:
    import httpx

    from gateway.shell.session_cli import run_session

    key = _agent_key(args, settings, "session")
    if key is None:
        return 2
    url = args.url or f"http://{settings.host}:{settings.port}"
    try:
        return run_session(args, url, key)
    except (RuntimeError, httpx.HTTPError, OSError) as exc:
        print(f"ctxgw session: {exc}", file=sys.stderr)
        return 1


def run_mcp_command(args: argparse.Namespace) -> int:
    """A client of a gateway, not a gateway: no GATEWAY_* settings, no database."""
    from gateway.client.mcp_server import client_config, serve_stdio

    if args.mcp_command == "config":
        print(client_config(args.client))
        return 0
    if not os.environ.get("CTXGW_API_KEY"):
        print("ctxgw mcp: set CTXGW_API_KEY (and CTXGW_URL)", file=sys.stderr)
        return 2
    # stderr is the MCP client's log: problems only, not a line per call (the SDK's and httpx's).
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    serve_stdio()
    return 0
