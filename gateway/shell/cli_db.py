"""`ctxgw db bootstrap --url ADMIN_URL`: make a production PostgreSQL ready for the gateway, from an
administrator's login, idempotently (`gateway.store.bootstrap` says what it makes), and print
the `GATEWAY_DATABASE_URL` the gateway then logs in with (as `ctxgw_app`, never the
administrator). The password of `ctxgw_app` is set only when given (`--app-password-env NAME`
reads it from that variable, so it never appears in a process listing or a shell history).
"""

from __future__ import annotations

import argparse
import os
import sys

from gateway.store.bootstrap import Bootstrap, bootstrap
from gateway.store.database import APP_DATABASE

__all__ = ["add_parser", "run_db_command"]

# What the README's hosted-PostgreSQL section recommends, by setting: (wanted, why).
_RECOMMENDED = {
    "synchronous_commit": ("on", "an acknowledged receipt must be on the standby before the 200"),
    "wal_level": ("replica", "a streaming standby and point-in-time recovery need it"),
}


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    db = commands.add_parser("db", help="prepare an external PostgreSQL for the gateway")
    db_commands = db.add_subparsers(dest="db_command", required=True)
    boot = db_commands.add_parser(
        "bootstrap", help="roles, database, pgvector, grants and migrations, idempotently"
    )
    boot.add_argument("--url", required=True, help="an administrator's login (any database)")
    boot.add_argument("--database", default=APP_DATABASE, help=f"default {APP_DATABASE}")
    boot.add_argument(
        "--app-password-env",
        metavar="NAME",
        help="set ctxgw_app's password from this environment variable",
    )


def run_db_command(args: argparse.Namespace) -> int:
    password = None
    if args.app_password_env is not None:
        password = os.environ.get(args.app_password_env)
        if not password:
            print(f"ctxgw db bootstrap: {args.app_password_env} is not set", file=sys.stderr)
            return 2
    report = bootstrap(args.url, args.database, app_password=password)
    for line in describe(report):
        print(line)
    return 0


def describe(report: Bootstrap) -> list[str]:
    lines = [
        f"database {report.database}: "
        + (f"created {', '.join(report.created)}" if report.created else "nothing to create"),
        f"migrations: {len(report.migrations)} applied now"
        + (f" ({report.migrations[0]} … {report.migrations[-1]})" if report.migrations else ""),
    ]
    lines += [f"skipped: {step}" for step in report.skipped]
    for name, (wanted, why) in _RECOMMENDED.items():
        found = report.settings.get(name)
        if found is not None and found != wanted and not (name == "wal_level" and found == "logical"):  # fmt: skip
            lines.append(f"setting: {name} is {found}, recommended {wanted} ({why})")
    lines.append(
        f"serve with: GATEWAY_DATABASE_URL={report.app_url} (add the password of ctxgw_app)"
    )
    return lines
