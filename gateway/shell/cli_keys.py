"""`ctxgw keys`: create, list and revoke API keys in the gateway's database, which is found
(and, embedded, started) and migrated first, as `ctxgw migrate` does."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from gateway.shell.settings import Settings
from gateway.shell.signing import keyring_path
from gateway.store.database import EmbeddedPostgres, connect, database_url
from gateway.store.keys import list_keys, revoke_key
from gateway.store.migrator import apply_migrations
from gateway.usecases.access.keys import issue_key
from gateway.usecases.receiptlog.recorder import rfc3339
from receipts import Keyring, KeyringError, public_keyring
from receipts.keyfiles import write_public_file

__all__ = ["KeyDatabase", "export_public_keyring", "run_keys_command"]


class KeyDatabase:
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


def run_keys_command(args: argparse.Namespace, settings: Settings, told: bool) -> int:
    if _key_store_refused(args, settings, told):
        return 2
    with KeyDatabase(settings) as url, connect(url, autocommit=True) as conn:
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


def export_public_keyring(settings: Settings, output: str | None, *, force: bool) -> int:
    """Write the gateway's receipt keyring as auditors need it (every Ed25519 public key,
    rotated ones kept; no HMAC secret, no private key), to `output` or standard output. The
    full keyring stays with the gateway: its HMAC secret could forge receipts' HMACs."""
    path = keyring_path(settings)
    try:
        data = public_keyring(Keyring.load(path))
    except (OSError, KeyringError) as exc:
        print(f"ctxgw keys export-public: {path}: {exc}", file=sys.stderr)
        return 2
    if output is None:
        sys.stdout.write(data.decode("utf-8"))
        return 0
    try:
        write_public_file(output, data, overwrite=force)
    except FileExistsError:
        print(f"ctxgw keys export-public: {output} exists (--force replaces it)", file=sys.stderr)
        return 2
    print(
        f"wrote {output}: verify exports with python -m receipts verify EXPORT --keyring {output}"
    )
    return 0
