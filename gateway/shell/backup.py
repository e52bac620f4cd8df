"""`ctxgw backup DIR` and `ctxgw restore DIR`: a logical backup of the gateway's database that
verifies when it comes back.

A backup directory holds `ctxgw.dump` (`pg_dump --format=custom`, one snapshot), `manifest.json`
(the dump's sha256, the applied migrations, and every tenant's log size, head and latest
checkpoint size, read in the dump's own snapshot) and `keyring.public.json` (the receipt keyring's
public half, so the backup verifies offline; the full keyring, whose HMAC secret and Ed25519 key
sign receipts, is backed up separately, like any secret).

A restore loads the dump into an empty database in one transaction (all or nothing), with the
roles it grants to made first, then checks every tenant's log (`gateway.shell.restored_log`):
every receipt verifies, the chain is gapless and the log head is its last leaf (so the next
receipt chains to it), every checkpoint commits to the stored receipts, the log is the one the
manifest recorded, and against the checkpoints given with `--checkpoint` (kept by auditors from
`GET /v1/log/checkpoint`) none was lost. A failed check exits 1 and says what: a restore from an
older backup than an auditor's checkpoint is reported TRUNCATED, never continued silently.

Without `--url` both work on the embedded server of `GATEWAY_DATA_DIR` (the restore into a new,
empty data dir). With an external server, `--url` is an administrator's login to the database
(a superuser or a BYPASSRLS role: the tenant wall must not hide rows from the dump).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from gateway.shell.restored_log import LogCheck, check_restored_logs, read_lag, trusted_by_tenant
from gateway.shell.settings import Settings
from gateway.shell.signing import keyring_path
from gateway.store.bootstrap import (
    create_database,
    database_name,
    database_url_for,
    ensure_roles,
    mark_leakproof,
)
from gateway.store.database import EmbeddedPostgres, connect, database_url
from gateway.store.dumps import dump_database, is_empty, restore_database
from receipts import Keyring, KeyringError, public_keyring
from receipts.keyfiles import write_public_file

__all__ = ["MANIFEST_FORMAT", "add_parsers", "backup", "restore", "run_backup_command"]

MANIFEST_FORMAT = "ctxgw-backup/1"
_DUMP, _MANIFEST, _KEYRING = "ctxgw.dump", "manifest.json", "keyring.public.json"


def add_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    made = commands.add_parser("backup", help="dump the database, with a manifest to verify it by")
    made.add_argument("directory", type=Path, help="a new directory for the backup")
    made.add_argument("--url", help="an administrator's login (default: the embedded server)")
    made.add_argument("--pg-bin", type=Path, help="the PostgreSQL programs to use (pg_dump)")
    back = commands.add_parser("restore", help="restore a backup into an empty database, verified")
    back.add_argument("directory", type=Path, help="a directory ctxgw backup wrote")
    back.add_argument("--url", help="an administrator's login to the target database "
                                    "(default: the embedded server of GATEWAY_DATA_DIR)")  # fmt: skip
    back.add_argument("--checkpoint", type=Path, action="append", default=[], metavar="FILE",
                      help="a checkpoint an auditor kept (GET /v1/log/checkpoint); repeatable")  # fmt: skip
    back.add_argument("--keyring", type=Path, help="receipt keyring (default: the backup's public one)")  # fmt: skip
    back.add_argument("--verify-only", action="store_true", help="check the database at --url, restore nothing")  # fmt: skip
    back.add_argument("--pg-bin", type=Path, help="the PostgreSQL programs to use (pg_restore)")


def run_backup_command(args: argparse.Namespace, settings: Settings) -> int:
    with ExitStack() as stack:
        url = args.url
        if url is None:
            if not settings.embedded:
                print(f"ctxgw {args.command}: give --url, an administrator's login (the gateway's "
                      "own cannot read past the tenant wall)", file=sys.stderr)  # fmt: skip
                return 2
            url = database_url(settings, stack.enter_context(EmbeddedPostgres(settings.data_dir)))
        if args.command == "backup":
            return backup(url, args.directory, settings, bin_dir=args.pg_bin)
        return restore(
            url, args.directory, settings, checkpoints=args.checkpoint, keyring=args.keyring,
            verify_only=args.verify_only, bin_dir=args.pg_bin,
        )  # fmt: skip


def backup(url: str, directory: Path, settings: Settings, *, bin_dir: Path | None = None) -> int:
    directory.mkdir(parents=True, exist_ok=False)
    dump = directory / _DUMP
    heads, migrations = dump_database(url, dump, bin_dir=bin_dir)
    manifest: dict[str, Any] = {
        "format": MANIFEST_FORMAT,
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "dump": _DUMP,
        "dump_sha256": _sha256(dump),
        "migrations": migrations,
        "logs": {
            h.tenant_id: {
                "size": h.size,
                "head": h.head.hex(),
                "checkpoint_size": h.checkpoint_size,
            }
            for h in heads
        },
    }
    (directory / _MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    keys = keyring_path(settings)
    try:
        write_public_file(directory / _KEYRING, public_keyring(Keyring.load(keys)))
        kept = f"; public keyring from {keys}"
    except (OSError, KeyringError) as exc:
        kept = f"; no public keyring ({keys}: {exc}): pass --keyring to restore"
    receipts = sum(h.size for h in heads)
    print(f"backup {directory}: {len(heads)} receipt logs, {receipts} receipts, "
          f"{len(migrations)} migrations{kept}")  # fmt: skip
    return 0


def restore(
    url: str,
    directory: Path,
    settings: Settings,
    *,
    checkpoints: list[Path],
    keyring: Path | None = None,
    verify_only: bool = False,
    bin_dir: Path | None = None,
) -> int:
    try:
        manifest = _manifest(directory)
        keys = Keyring.load(keyring or _default_keyring(directory, settings))
        trusted = trusted_by_tenant([path.read_text("utf-8") for path in checkpoints])
    except (OSError, ValueError, KeyringError) as exc:
        print(f"ctxgw restore: {exc}", file=sys.stderr)
        return 2
    if not verify_only:
        refused = _load(url, directory, manifest, bin_dir)
        if refused is not None:
            print(f"ctxgw restore: {refused}", file=sys.stderr)
            return 1
    expected = {t: (int(log["size"]), str(log["head"])) for t, log in manifest["logs"].items()}
    checks = check_restored_logs(url, keys, trusted=trusted, expected=expected)
    lag = read_lag(url)
    if lag is not None:
        print(f"read from a standby: its newest replayed commit is {lag.seconds:.1f} s old, "
              f"{lag.unreplayed_bytes} bytes of WAL received and not yet replayed")  # fmt: skip
    for check in checks:
        print(describe(check))
    failed = [check for check in checks if not check.ok]
    receipts = sum(check.receipts for check in checks)
    verdict = "verified" if not failed else f"{len(failed)} logs FAILED"
    truncated = sum(check.truncated for check in failed)
    print(f"restore: {len(checks)} receipt logs, {receipts} receipts, {verdict}"
          + (f", {truncated} TRUNCATED" if truncated else ""))  # fmt: skip
    return 0 if not failed else 1


def describe(check: LogCheck) -> str:
    state = "ok" if check.ok else f"FAILED {check.problem}"
    return (f"  {check.tenant_id}: {check.receipts} receipts, {check.checkpoints} checkpoints, "
            f"head {check.head[:16]}… {state}")  # fmt: skip


def _manifest(directory: Path) -> dict[str, Any]:
    manifest: dict[str, Any] = json.loads((directory / _MANIFEST).read_text())
    if manifest.get("format") != MANIFEST_FORMAT:
        raise ValueError(f"{directory / _MANIFEST} is not a {MANIFEST_FORMAT} manifest")
    return manifest


def _default_keyring(directory: Path, settings: Settings) -> Path:
    public = directory / _KEYRING
    return public if public.is_file() else keyring_path(settings)


def _load(url: str, directory: Path, manifest: dict[str, Any], bin_dir: Path | None) -> str | None:
    """Restore the dump into the database at `url`; why not, if it was refused."""
    dump = directory / str(manifest["dump"])
    if _sha256(dump) != manifest["dump_sha256"]:
        return f"{dump} does not have the sha256 its manifest recorded; not restoring it"
    _ensure_database(url)
    if not is_empty(url):
        return "the target database already holds a ctxgw schema; restore into an empty one"
    with connect(url, autocommit=True) as conn:
        ensure_roles(conn)
    restore_database(url, dump, bin_dir=bin_dir)
    with connect(url, autocommit=True) as conn:
        mark_leakproof(conn)
    return None


def _ensure_database(url: str) -> None:
    with connect(database_url_for(url, "postgres"), autocommit=True) as conn:
        create_database(conn, database_name(url))


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
