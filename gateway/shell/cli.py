"""`ctxgw`: serve, migrate, manage keys. Settings are read here, once, and passed down."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gateway import __version__
from gateway.domain.errors import GatewayError
from gateway.shell.logs import configure_logging
from gateway.shell.session_cli import add_parser as add_session_parser
from gateway.shell.settings import Settings, SettingsError, load_settings
from gateway.store.database import EmbeddedPostgres, connect, database_url
from gateway.store.errors import StoreError
from gateway.store.keys import list_keys, revoke_key
from gateway.store.migrator import apply_migrations
from gateway.usecases.access.keys import (
    DEFAULT_REQUESTS_PER_SECOND,
    DEFAULT_WRITES_PER_SECOND,
    issue_key,
)
from gateway.usecases.receiptlog.recorder import rfc3339

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ctxgw", description="the auditable context gateway")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    serve = commands.add_parser("serve", help="run the HTTP gateway")
    serve.add_argument("--host", help="bind address (default GATEWAY_HOST or 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port (default GATEWAY_PORT or 8080)")
    serve.add_argument("--demo", action="store_true", help="create a demo tenant, keys, memories")
    serve.add_argument(
        "--workers", type=int, default=1, help="worker processes (default 1; stateless, scale out)"
    )

    commands.add_parser("migrate", help="apply pending database migrations")

    policy = commands.add_parser("policy", help="lint policy bundles and run their test suites")
    policy.add_argument("policy_command", choices=["lint", "test"])
    policy.add_argument("policy_args", nargs=argparse.REMAINDER, help="PATH [--format junit]")

    sweep = commands.add_parser("sweep", help="one task at several budgets: the returns curve")
    sweep.add_argument("task")
    sweep.add_argument("--budgets", default="200,400,800,1600,3200,6400")
    sweep.add_argument("--url", help="gateway URL (default http://GATEWAY_HOST:GATEWAY_PORT)")
    sweep.add_argument("--key", help="agent key (default: the demo agent key in the data dir)")
    sweep.add_argument("--namespaces", help="comma-separated namespaces")
    sweep.add_argument("--top-k", type=int, default=20)
    sweep.add_argument("--no-index", action="store_true", help="leave the compact index out")
    sweep.add_argument("--chart", default="sweep.svg", help="where to write the SVG chart")

    mcp = commands.add_parser(
        "mcp", help="serve the agent tools over MCP (stdio; CTXGW_API_KEY, CTXGW_URL)"
    )
    mcp_commands = mcp.add_subparsers(dest="mcp_command")
    config = mcp_commands.add_parser("config", help="print the snippet that registers ctxgw mcp")
    config.add_argument("--client", required=True, choices=["claude-code", "cursor", "vscode"])

    add_session_parser(commands)

    keys = commands.add_parser("keys", help="manage API keys")
    keys.add_argument(
        "--new-data-dir",
        action="store_true",
        help="allow starting a new embedded database (default: only an existing one, unless "
        "GATEWAY_DATA_DIR names the data dir)",
    )
    key_commands = keys.add_subparsers(dest="key_command", required=True)
    create = key_commands.add_parser("create", help="create a key (and its tenant if new)")
    create.add_argument("--tenant", required=True)
    create.add_argument("--role", required=True, choices=["agent", "auditor", "admin"])
    create.add_argument("--namespaces", default="*", help="comma-separated, or * (default)")
    create.add_argument("--agent-id")
    create.add_argument("--purposes", help="comma-separated purposes the key may declare")
    for limit, default in (("requests", DEFAULT_REQUESTS_PER_SECOND), ("writes", DEFAULT_WRITES_PER_SECOND)):  # fmt: skip
        create.add_argument(
            f"--{limit}-per-second",
            type=_rate,
            default=default,
            help=f"the key's {limit} per second, or 'unlimited' (default {default:g}; bursts "
            "of two seconds' worth)",
        )
    create.add_argument("--json", action="store_true", help="print {key, key_id, tenant_id}")
    listing = key_commands.add_parser("list", help="list keys (never their secrets)")
    listing.add_argument("--tenant")
    listing.add_argument("--json", action="store_true")
    revoke = key_commands.add_parser("revoke", help="revoke a key by key id")
    revoke.add_argument("key_id")
    return parser


def _rate(raw: str) -> float | None:
    if raw == "unlimited":
        return None
    try:
        value = float(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number or 'unlimited', got {raw!r}") from None
    if not 0 < value <= 1_000_000:
        raise argparse.ArgumentTypeError("expected 0 < n <= 1000000, or 'unlimited'")
    return value


class _Database:
    """A synchronous connection URL for admin commands, starting the embedded server if needed.

    Works beside a running gateway on the same data dir: the embedded server is shared, and only
    the last process using it stops it.
    """

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._embedded = EmbeddedPostgres(settings.data_dir) if settings.embedded else None

    def __enter__(self) -> str:
        if self._embedded is not None:
            self._embedded.__enter__()
        url = database_url(self._settings, self._embedded)
        apply_migrations(url)
        return url

    def __exit__(self, *exc: object) -> None:
        if self._embedded is not None:
            self._embedded.__exit__(None, None, None)


def _key_store_refused(args: argparse.Namespace, settings: Settings, told: bool) -> bool:
    """Keys live in one database: say which data dir holds it, and refuse to start a new one
    where none is unless told (GATEWAY_DATA_DIR set, or --new-data-dir), so that a key is
    never issued quietly into a second database that no gateway serves."""
    if not settings.embedded:
        return False
    where = settings.data_dir.resolve()
    exists = (where / "pg").is_dir()
    print(
        f"ctxgw keys: data dir {where} ({'embedded PostgreSQL' if exists else 'no database yet'})",
        file=sys.stderr,
    )
    if exists or told or args.new_data_dir:
        return False
    print(
        f"ctxgw keys: {where} holds no database; set GATEWAY_DATA_DIR to the gateway's data dir, "
        "or pass --new-data-dir to start a new one there",
        file=sys.stderr,
    )
    return True


def _keys(args: argparse.Namespace, settings: Settings, told: bool) -> int:
    if _key_store_refused(args, settings, told):
        return 2
    with _Database(settings) as url, connect(url, autocommit=True) as conn:
        if args.key_command == "create":
            issued = issue_key(
                conn,
                tenant_id=args.tenant,
                role=args.role,
                namespaces=[n.strip() for n in args.namespaces.split(",") if n.strip()],
                agent_id=args.agent_id,
                purposes=[p.strip() for p in args.purposes.split(",")] if args.purposes else None,
                requests_per_second=args.requests_per_second,
                writes_per_second=args.writes_per_second,
            )
            if args.json:
                print(
                    json.dumps(
                        {"key": issued.key, "key_id": issued.key_id, "tenant_id": issued.tenant_id}
                    )
                )
            else:
                print(f"tenant: {issued.tenant_id}\nkey id: {issued.key_id}\nkey:    {issued.key}")
                print("The key is shown once; store it now.", file=sys.stderr)
            return 0
        if args.key_command == "list":
            rows = list_keys(conn, args.tenant)
            records: list[dict[str, Any]] = [
                {
                    "tenant_id": r.tenant_id,
                    "key_id": r.key_id,
                    "role": r.role,
                    "agent_id": r.agent_id,
                    "namespaces": r.namespaces,
                    "purposes": r.purposes,
                    "created_at": rfc3339(r.created_at),
                    "revoked_at": rfc3339(r.revoked_at) if r.revoked_at else None,
                }
                for r in rows
            ]
            if args.json:
                print(json.dumps(records))
            else:
                for r in records:
                    state = "revoked" if r["revoked_at"] else "active"
                    print(
                        f"{r['tenant_id']}\t{r['key_id']}\t{r['role']}\t{state}\t"
                        f"{','.join(r['namespaces'])}"
                    )
            return 0
        if revoke_key(conn, args.key_id):
            print(f"revoked {args.key_id}")
            return 0
        print(f"no active key {args.key_id}", file=sys.stderr)
        return 1


def _sweep(args: argparse.Namespace, settings: Settings) -> int:
    from gateway.client import Client, ClientError
    from gateway.client.options import ContextOptions
    from gateway.shell.sweep import render_svg, render_table, run_sweep

    key = _agent_key(args, settings, "sweep")
    if key is None:
        return 2
    try:
        budgets = sorted({int(b) for b in args.budgets.split(",")})
    except ValueError:
        print("ctxgw sweep: --budgets takes comma-separated integers", file=sys.stderr)
        return 2
    options: ContextOptions = {"top_k": args.top_k, "include_index": not args.no_index}
    if args.namespaces:
        options["namespaces"] = [n.strip() for n in args.namespaces.split(",")]
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


def _session(args: argparse.Namespace, settings: Settings) -> int:
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


DEMO_TASK = "How do I roll back an Atlas deploy?"


def _serve_workers(settings: Settings, host: str, port: int, demo: bool, workers: int) -> int:
    """N worker processes, each with its own runtime (`gateway.http.asgi`). The embedded server,
    when used, is held open here so that it outlives any one worker."""
    from gateway.http.workers import run_workers
    from gateway.store.database import EmbeddedPostgres

    if demo:
        asyncio.run(_seed_only(settings))
    with contextlib.ExitStack() as stack:
        if settings.embedded:
            stack.enter_context(EmbeddedPostgres(settings.data_dir))
        run_workers(
            host=host,
            port=port,
            workers=workers,
            log_level=settings.log_level.lower(),
            header_timeout=settings.header_timeout_seconds,
        )
    return 0


async def _seed_only(settings: Settings) -> None:
    from gateway.shell.demo import seed_demo
    from gateway.shell.runtime import start_runtime

    async with start_runtime(settings) as runtime:
        keys = await seed_demo(runtime)
    print(
        f"demo tenant ready; keys in {settings.data_dir / 'demo-keys.json'}\n"
        f"  agent key: {keys.agent}\n  admin key: {keys.admin}",
        flush=True,
    )


def _server_class() -> type[Any]:
    import uvicorn

    class Server(uvicorn.Server):
        """uvicorn, once shut down by SIGTERM or SIGINT, raises the signal again with its default
        action, which ends the process before the runtime's own shutdown (the pool, the embedded
        PostgreSQL) has run: here the signal ends serving, and the process exits normally after
        the runtime has closed. (`_captured_signals` is uvicorn's own list, pinned by
        tests/gateway/test_cli.py: a SIGTERM leaves no PostgreSQL running.)"""

        @contextlib.contextmanager
        def capture_signals(self) -> Any:
            with super().capture_signals():
                try:
                    yield
                finally:
                    self._captured_signals.clear()

    return Server


async def _serve(settings: Settings, host: str, port: int, demo: bool) -> None:
    import uvicorn

    from gateway.http.app import create_app
    from gateway.http.slow_clients import http_protocol
    from gateway.shell.collector import settle_collector
    from gateway.shell.runtime import start_runtime

    _Server = _server_class()  # noqa: N806  a class, made where uvicorn is imported
    async with start_runtime(settings) as runtime:
        keys = None
        if demo:
            from gateway.shell.demo import seed_demo

            keys = await seed_demo(runtime)
        settle_collector()  # what is loaded lives as long as the process (gateway.shell.collector)
        config = uvicorn.Config(
            create_app(settings, runtime=runtime),
            host=host,
            port=port,
            log_level=settings.log_level.lower(),
            http=http_protocol(settings.header_timeout_seconds),
            log_config=None,  # configure_logging did it, in GATEWAY_LOG_FORMAT
            access_log=False,  # the request log (gateway.http.request_log) is the access log
            lifespan="on",
        )
        server = _Server(config)
        serving = asyncio.create_task(server.serve())
        if keys is not None:
            # uvicorn.Server sets a flag, not an event, once it listens: poll it.
            while not server.started and not serving.done():  # noqa: ASYNC110
                await asyncio.sleep(0.05)
            if server.started:
                await _show_demo(f"http://{host}:{port}", keys.agent, keys.admin, settings)
                await _show_plans(f"http://{host}:{port}", keys.coder)
        await serving


async def _show_demo(base: str, agent_key: str, admin_key: str, settings: Settings) -> None:
    """Ask the running gateway for a bundle, as an agent would (through the Python client), have
    an auditor verify its receipt, and show what came back."""
    from gateway.client import AsyncClient, ClientError

    try:
        async with AsyncClient(agent_key, base) as agent, AsyncClient(admin_key, base) as auditor:
            bundle = await agent.context(DEMO_TASK, budget_tokens=600)
            verification = await auditor.verify_receipt(bundle.receipt_id)
    except ClientError as exc:
        print(f"the demo request failed: {exc}", file=sys.stderr, flush=True)
        return
    request = {"task": DEMO_TASK, "budget_tokens": 600}
    rule = "─" * 72
    checks = ", ".join(c.name for c in verification.checks)
    print(
        f"\nctxgw is serving the demo tenant on {base} (keys in "
        f"{settings.data_dir / 'demo-keys.json'})\n  agent key: {agent_key}\n"
        f"  admin key: {admin_key}\n\nctxgw.context({DEMO_TASK!r}, budget_tokens=600)\n{rule}\n"
        f"{bundle.bundle}\n{rule}\n"
        f"tokens {bundle.tokens_used}/{bundle.budget_tokens}, {len(bundle.included)} memories in "
        f"full, {len(bundle.excluded)} accounted for as excluded, policy "
        f"{bundle.policy.digest[:19]}…, receipt {bundle.receipt_id} "
        f"({'valid' if verification.valid else 'INVALID'}: {checks})\n\nTry it yourself:\n"
        f"  from gateway.client import Client\n"
        f"  with Client({agent_key!r}, {base!r}) as ctxgw:\n"
        f"      print(ctxgw.context({DEMO_TASK!r}, budget_tokens=600).bundle)\n"
        f"or over HTTP:\n"
        f"  curl -s {base}/v1/context -H 'Authorization: Bearer {agent_key}' "
        f"-H 'content-type: application/json' -d '{json.dumps(request)}'\n"
        f"  curl -s {base}/v1/receipts/{bundle.receipt_id}/verify "
        f"-H 'Authorization: Bearer {admin_key}'\n  OpenAPI: {base}/schema\n",
        flush=True,
    )


async def _show_plans(base: str, coder_key: str) -> None:
    """The two-agent demo: the planner deprecated a module (its newer plan, same claim key,
    superseded the older one); the coder asks before acting and is handed only the current plan."""
    from gateway.client import AsyncClient, ClientError
    from gateway.shell.demo import CODER_TASK, PLANS_NAMESPACE

    try:
        async with AsyncClient(coder_key, base) as coder:
            bundle = await coder.context(
                CODER_TASK, namespaces=[PLANS_NAMESPACE], budget_tokens=600
            )
    except ClientError as exc:
        print(f"the planner/coder demo failed: {exc}", file=sys.stderr, flush=True)
        return
    superseded = [e for e in bundle.excluded if e.reason == "superseded"]
    print(
        f"The coder asks before acting: {CODER_TASK!r}\n{bundle.bundle}\n"
        f"(the planner's deprecated plan: {len(superseded)} superseded, left out: "
        f"{'; '.join(e.detail for e in superseded)})\n",
        flush=True,
    )


def _mcp(args: argparse.Namespace) -> int:
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


def _dispatch(args: argparse.Namespace, settings: Settings, told_data_dir: bool) -> int:
    """The commands that need settings (and most, the database)."""
    if args.command == "serve" and args.workers > 1:
        return _serve_workers(
            settings,
            args.host or settings.host,
            args.port or settings.port,
            args.demo,
            args.workers,
        )
    if args.command == "serve":
        asyncio.run(
            _serve(settings, args.host or settings.host, args.port or settings.port, args.demo)
        )
        return 0
    if args.command == "sweep":
        return _sweep(args, settings)
    if args.command == "session":
        return _session(args, settings)
    if args.command == "migrate":
        with _Database(settings):
            print("migrations are up to date")
        return 0
    return _keys(args, settings, told_data_dir)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "policy":
        # Pure and offline: no settings, no database.
        from policies.cli import main_lint, main_test

        run = main_test if args.policy_command == "test" else main_lint
        return run(args.policy_args)
    if args.command == "mcp":
        return _mcp(args)
    try:
        settings = load_settings(os.environ)
    except SettingsError as exc:
        print(f"ctxgw: {exc}", file=sys.stderr)
        return 2
    configure_logging(settings.log_level, settings.log_format)
    try:
        return _dispatch(args, settings, "GATEWAY_DATA_DIR" in os.environ)
    except (StoreError, GatewayError) as exc:
        print(f"ctxgw: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
