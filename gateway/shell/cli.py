"""`ctxgw`: serve, migrate, manage keys. Settings are read here, once, and passed down.

The parser and the dispatch are here; the commands are `gateway.shell.cli_serve`'s,
`gateway.shell.cli_keys`' and, for those that are clients of a running gateway,
`gateway.shell.cli_clients`' and `gateway.shell.session_cli`'s.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Sequence

from gateway import __version__
from gateway.domain.errors import GatewayError
from gateway.shell.agent_cli import add_parsers as add_agent_parsers
from gateway.shell.agent_cli import run_agent_command
from gateway.shell.backup import add_parsers as add_backup_parsers
from gateway.shell.backup import run_backup_command
from gateway.shell.cli_clients import run_mcp_command, run_session_command, run_sweep_command
from gateway.shell.cli_db import add_parser as add_db_parser
from gateway.shell.cli_db import run_db_command
from gateway.shell.cli_keys import KeyDatabase, export_public_keyring, run_keys_command
from gateway.shell.cli_serve import serve, serve_workers
from gateway.shell.logs import configure_logging
from gateway.shell.session_cli import add_parser as add_session_parser
from gateway.shell.settings import Settings, SettingsError, load_settings
from gateway.store.errors import StoreError
from gateway.usecases.access.keys import (
    DEFAULT_REQUESTS_PER_SECOND,
    DEFAULT_WRITES_PER_SECOND,
)

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
    # Unset options are not sent: the curve is at the API's defaults (POST /v1/context).
    sweep.add_argument("--top-k", type=int, help="memories in full at most (default: the API's)")
    sweep.add_argument("--no-index", action="store_true", help="leave the compact index out")
    sweep.add_argument("--chart", default="sweep.svg", help="where to write the SVG chart")

    mcp = commands.add_parser(
        "mcp", help="serve the agent tools over MCP (stdio; CTXGW_API_KEY, CTXGW_URL)"
    )
    mcp_commands = mcp.add_subparsers(dest="mcp_command")
    config = mcp_commands.add_parser("config", help="print the snippet that registers ctxgw mcp")
    config.add_argument("--client", required=True, choices=["claude-code", "cursor", "vscode"])

    add_session_parser(commands)
    add_backup_parsers(commands)  # backup, restore
    add_db_parser(commands)  # db bootstrap
    add_agent_parsers(commands)  # context, search: the MCP tools' results, for a shell

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
    public = key_commands.add_parser(
        "export-public",
        help="write the receipt keyring auditors verify with: the Ed25519 public keys, no secret",
    )
    public.add_argument("-o", "--output", help="the file to write (default: standard output)")
    public.add_argument("--force", action="store_true", help="replace an existing file")
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


def _dispatch(args: argparse.Namespace, settings: Settings, told_data_dir: bool) -> int:
    """The commands that need settings (and most, the database)."""
    if args.command == "serve" and args.workers > 1:
        return serve_workers(
            settings,
            args.host or settings.host,
            args.port or settings.port,
            args.demo,
            args.workers,
        )
    if args.command == "serve":
        asyncio.run(
            serve(settings, args.host or settings.host, args.port or settings.port, args.demo)
        )
        return 0
    if args.command == "sweep":
        return run_sweep_command(args, settings)
    if args.command == "session":
        return run_session_command(args, settings)
    if args.command in ("backup", "restore"):
        return run_backup_command(args, settings)
    if args.command == "db":
        return run_db_command(args)
    if args.command == "migrate":
        with KeyDatabase(settings):
            print("migrations are up to date")
        return 0
    if args.key_command == "export-public":
        return export_public_keyring(settings, args.output, force=args.force)
    return run_keys_command(args, settings, told_data_dir)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "policy":
        # Pure and offline: no settings, no database.
        from policies.cli import main_lint, main_test

        run = main_test if args.policy_command == "test" else main_lint
        return run(args.policy_args)
    if args.command == "mcp":
        return run_mcp_command(args)
    if getattr(args, "agent_command", False):  # clients, like mcp: no settings
        return run_agent_command(args)
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
