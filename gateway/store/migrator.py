"""Forward-only migrations: `migrations/NNNN_description.sql`, applied in order, once each.

Each applied file is recorded with its sha256; an applied file whose bytes changed stops start-up
(the database would no longer be what the files say). A session advisory lock serializes
processes that start together, so two gateways never apply the same file twice.
"""

from __future__ import annotations

import hashlib
import logging
import re
from dataclasses import dataclass
from pathlib import Path

import psycopg

from gateway.store.database import check_pgvector
from gateway.store.errors import MigrationError

__all__ = ["Migration", "apply_migrations", "discover_migrations", "migrations_dir"]

_log = logging.getLogger(__name__)
_NAME = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")
# An arbitrary constant, the same in every process: the advisory lock key of the migrator.
_LOCK_KEY = 0x6378_7467_7700_0001

_CREATE_LEDGER = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    version     integer PRIMARY KEY,
    name        text NOT NULL,
    sha256      text NOT NULL,
    applied_at  timestamptz NOT NULL DEFAULT now()
)
"""
_LEDGER_EXISTS = "SELECT to_regclass('schema_migrations')"
_WALL_EXISTS = "SELECT to_regprocedure('wall_tenant_tables()')"
_WALL = "SELECT wall_tenant_tables()"
_APPLIED = "SELECT version, name, sha256 FROM schema_migrations ORDER BY version"
_RECORD = """
INSERT INTO schema_migrations (version, name, sha256) VALUES (%(version)s, %(name)s, %(sha256)s)
"""


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    sql: str
    sha256: str


def migrations_dir() -> Path:
    """The migrations shipped with the package (wheel) or beside it (source checkout)."""
    here = Path(__file__).resolve().parent.parent
    for candidate in (here / "migrations", here.parent / "migrations"):
        if candidate.is_dir():
            return candidate
    raise MigrationError(f"no migrations directory found near {here}")


def discover_migrations(directory: Path) -> list[Migration]:
    found: list[Migration] = []
    for path in sorted(directory.glob("*.sql")):
        match = _NAME.match(path.name)
        if match is None:
            raise MigrationError(f"{path.name}: migration files are named NNNN_description.sql")
        data = path.read_bytes()
        found.append(
            Migration(
                version=int(match.group(1)),
                name=path.name,
                sql=data.decode("utf-8"),
                sha256=hashlib.sha256(data).hexdigest(),
            )
        )
    versions = [m.version for m in found]
    if len(set(versions)) != len(versions):
        raise MigrationError(f"duplicate migration numbers in {directory}")
    return found


def apply_migrations(url: str, directory: Path | None = None) -> list[str]:
    """Apply every pending migration; return the names applied (empty when up to date)."""
    migrations = discover_migrations(directory or migrations_dir())
    applied_now: list[str] = []
    with psycopg.connect(url, autocommit=True) as conn:
        check_pgvector(conn)
        conn.execute("SELECT pg_advisory_lock(%(key)s)", {"key": _LOCK_KEY})
        try:
            # Only when missing: the gateway's own role may check an up-to-date database, but may
            # not create anything (0008_least_privilege), not even IF NOT EXISTS.
            if conn.execute(_LEDGER_EXISTS).fetchone() == (None,):
                conn.execute(_CREATE_LEDGER)
            ledger = {row[0]: (row[1], row[2]) for row in conn.execute(_APPLIED).fetchall()}
            for migration in migrations:
                recorded = ledger.get(migration.version)
                if recorded is not None:
                    if recorded[1] != migration.sha256:
                        raise MigrationError(
                            f"{migration.name} was edited after it was applied "
                            f"(recorded sha256 {recorded[1][:12]}…, file {migration.sha256[:12]}…). "
                            "Migrations are forward-only: restore the file and add a new one."
                        )
                    continue
                try:
                    with conn.transaction():
                        conn.execute(migration.sql.encode())
                        conn.execute(
                            _RECORD,
                            {
                                "version": migration.version,
                                "name": migration.name,
                                "sha256": migration.sha256,
                            },
                        )
                except psycopg.Error as exc:
                    raise MigrationError(f"{migration.name} failed: {exc}") from exc
                applied_now.append(migration.name)
            if applied_now and conn.execute(_WALL_EXISTS).fetchone() != (None,):
                # Tables a later migration created are walled too (0010_tenant_wall).
                walled = [row[0] for row in conn.execute(_WALL).fetchall()]
                if walled and applied_now[-1] != "0010_tenant_wall.sql":
                    _log.info("row-level security on the new tenant tables: %s", walled)
            unknown = sorted(set(ledger) - {m.version for m in migrations})
            if unknown:
                raise MigrationError(
                    f"the database has migrations this code does not know: {unknown}; "
                    "run a newer ctxgw"
                )
        finally:
            conn.execute("SELECT pg_advisory_unlock(%(key)s)", {"key": _LOCK_KEY})
    return applied_now
