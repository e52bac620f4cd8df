"""What a production PostgreSQL needs before the gateway serves from it, made idempotently from an
administrator's login (`ctxgw db bootstrap --url …`):

- the roles the migrations grant to: `ctxgw_app`, the gateway's login (LOGIN, and never
  SUPERUSER, BYPASSRLS, CREATEDB or CREATEROLE: the tenant wall must hold it), and
  `ctxgw_ledger` (NOLOGIN, not BYPASSRLS), owner of the few functions that read across tenants;
  an administrator that is not a superuser (a hosted server's) is made a member of the ledger
  role (INHERIT and SET: handing it those functions, and granting their EXECUTE afterwards, take
  both), and the ledger role may create in the schema while the migrations run, which handing
  it a function also takes;
- the database, pgvector in it, CONNECT for the gateway's login;
- the migrations, applied as the administrator (the owner of every table);
- per database, what only a superuser may do (full-text matching marked LEAKPROOF, so the GIN
  index serves under the tenant wall); skipped, and said so, without one.

Nothing is dropped or weakened on a second run: a role that exists keeps its password unless a
new one is given, and its attributes are set again to the ones above.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import quote, unquote, urlsplit, urlunsplit

import psycopg
from psycopg import sql

from gateway.store.database import APP_ROLE, SyncConnection, check_pgvector, connect
from gateway.store.migrator import apply_migrations

__all__ = [
    "LEDGER_ROLE",
    "Bootstrap",
    "bootstrap",
    "create_database",
    "database_name",
    "database_url_for",
    "ensure_roles",
    "mark_leakproof",
]

LEDGER_ROLE = "ctxgw_ledger"
_APP_ATTRIBUTES = "LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE NOREPLICATION"
_LEDGER_ATTRIBUTES = "NOLOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE NOREPLICATION"
# In the order of the attribute lists above.
_ROLE_ATTRIBUTES = (
    "SELECT rolcanlogin, rolsuper, rolbypassrls, rolcreatedb, rolcreaterole, rolreplication"
    " FROM pg_roles WHERE rolname = %(role)s"
)
_IS_SUPERUSER = "SELECT rolsuper FROM pg_roles WHERE rolname = current_user"
_IS_MEMBER = "SELECT pg_has_role(current_user, %(role)s, 'USAGE')"
_DATABASE_EXISTS = "SELECT 1 FROM pg_database WHERE datname = %(name)s"
_SETTINGS = (
    "SELECT name, setting FROM pg_settings WHERE name IN"
    " ('server_version', 'wal_level', 'synchronous_commit', 'synchronous_standby_names',"
    " 'autovacuum_naptime', 'max_connections')"
)


@dataclass(frozen=True)
class Bootstrap:
    """What a run found and did, for the operator."""

    database: str
    created: list[str] = field(default_factory=list)  # roles, database, extension made now
    migrations: list[str] = field(default_factory=list)  # applied now
    skipped: list[str] = field(default_factory=list)  # superuser-only steps not taken
    settings: dict[str, str] = field(default_factory=dict)
    app_url: str = ""


def _superuser(conn: SyncConnection) -> bool:
    row = conn.execute(_IS_SUPERUSER).fetchone()
    return bool(row and row[0])


def ensure_roles(conn: SyncConnection, app_password: str | None = None) -> list[str]:
    """Create `ctxgw_app` and `ctxgw_ledger`, or correct their attributes where they differ
    (see the module docstring); the roles created now."""
    created = []
    for role, attributes in ((APP_ROLE, _APP_ATTRIBUTES), (LEDGER_ROLE, _LEDGER_ATTRIBUTES)):
        found = conn.execute(_ROLE_ATTRIBUTES, {"role": role}).fetchone()
        wanted = tuple(not a.startswith("NO") for a in attributes.split())
        if found is None:
            statement = sql.SQL("CREATE ROLE {} " + attributes).format(sql.Identifier(role))
            created.append(f"role {role}")
        elif tuple(found) != wanted:
            # Only what differs is named: a hosted administrator may not even restate SUPERUSER.
            differing = [a for a, have, want in zip(attributes.split(), found, wanted, strict=True) if have != want]  # fmt: skip
            statement = sql.SQL("ALTER ROLE {} " + " ".join(differing)).format(sql.Identifier(role))  # fmt: skip
        elif role == APP_ROLE and app_password is not None:
            statement = sql.SQL("ALTER ROLE {}").format(sql.Identifier(role))
        else:
            continue
        if role == APP_ROLE and app_password is not None:
            statement = sql.SQL("{} PASSWORD {}").format(statement, sql.Literal(app_password))
        conn.execute(statement)
    if not _superuser(conn):
        member = conn.execute(_IS_MEMBER, {"role": LEDGER_ROLE}).fetchone()
        if not (member and member[0]):
            conn.execute(
                sql.SQL("GRANT {} TO CURRENT_USER WITH INHERIT TRUE, SET TRUE").format(
                    sql.Identifier(LEDGER_ROLE)
                )
            )
    return created


def mark_leakproof(conn: SyncConnection) -> bool:
    """Full-text matching LEAKPROOF in this database (migration 0010 says why); False without
    a superuser. pg_proc is per database, and a dump does not carry it: a restore repeats it."""
    if not _superuser(conn):
        return False
    conn.execute("ALTER FUNCTION pg_catalog.ts_match_vq(tsvector, tsquery) LEAKPROOF")
    return True


def database_url_for(url: str, database: str, user: str | None = None) -> str:
    """`url` pointing at `database` (as `user`, no password, when given); the query string
    (sslmode, target_session_attrs, a unix socket host) kept."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if user is not None:
        netloc = f"{quote(user, safe='')}@{netloc.rpartition('@')[2]}"
    return urlunsplit((parts.scheme, netloc, "/" + quote(database, safe=""), parts.query, ""))


def database_name(url: str) -> str:
    return unquote(urlsplit(url).path.lstrip("/"))


def create_database(conn: SyncConnection, name: str) -> bool:
    """Create the database unless it exists; whether it was created now."""
    if conn.execute(_DATABASE_EXISTS, {"name": name}).fetchone() is not None:
        return False
    try:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    except psycopg.errors.DuplicateDatabase:
        return False  # another process made it between our look and our create
    return True


def _migrate(url: str) -> list[str]:
    """Apply the migrations as the administrator. Handing a function to `ctxgw_ledger` takes,
    for one who is not a superuser, that the role may create in the schema: granted for the
    migrations only (the role cannot log in; none of its functions needs it afterwards)."""
    with connect(url, autocommit=True) as conn:
        if _superuser(conn):
            return apply_migrations(url)
        conn.execute(_SCHEMA_CREATE.format(verb=sql.SQL("GRANT"), to=sql.SQL("TO"), role=sql.Identifier(LEDGER_ROLE)))  # fmt: skip
        try:
            return apply_migrations(url)
        finally:
            conn.execute(_SCHEMA_CREATE.format(verb=sql.SQL("REVOKE"), to=sql.SQL("FROM"), role=sql.Identifier(LEDGER_ROLE)))  # fmt: skip


_SCHEMA_CREATE = sql.SQL("{verb} CREATE ON SCHEMA public {to} {role}")


def bootstrap(admin_url: str, database: str, *, app_password: str | None = None) -> Bootstrap:
    """Roles, database, extension, grants and migrations (see the module docstring)."""
    report = Bootstrap(database=database)
    with connect(admin_url, autocommit=True) as conn:
        report.created.extend(ensure_roles(conn, app_password))
        if create_database(conn, database):
            report.created.append(f"database {database}")
        report.settings.update((str(n), str(v)) for n, v in conn.execute(_SETTINGS).fetchall())
    url = database_url_for(admin_url, database)
    with connect(url, autocommit=True) as conn:
        check_pgvector(conn)  # available on the server at all, in a version that will do
        installed = conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone()
        if installed is None:
            conn.execute("CREATE EXTENSION vector")
            report.created.append("extension vector")
        conn.execute(
            sql.SQL("GRANT CONNECT ON DATABASE {} TO {}").format(
                sql.Identifier(database), sql.Identifier(APP_ROLE)
            )
        )
    report.migrations.extend(_migrate(url))
    with connect(url, autocommit=True) as conn:
        try:
            if not mark_leakproof(conn):
                report.skipped.append("LEAKPROOF full-text matching (needs a superuser)")
        except psycopg.errors.InsufficientPrivilege:
            report.skipped.append("LEAKPROOF full-text matching (needs a superuser)")
    return Bootstrap(
        database=report.database,
        created=report.created,
        migrations=report.migrations,
        skipped=report.skipped,
        settings=report.settings,
        app_url=database_url_for(admin_url, database, APP_ROLE),
    )
