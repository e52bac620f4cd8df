"""Dumping a tenant's rows to JSON lines and loading them into a fresh database, exactly.

A row is written by PostgreSQL itself (`to_jsonb`), so every value keeps its exact text: bytea
as ``"\\x<hex>"``, timestamps as ISO 8601 with microseconds in UTC, numerics with all their
digits, arrays as JSON arrays, vectors in pgvector's text form. Loading hands each line back to
PostgreSQL (`jsonb_populate_record`), so no value passes through a Python float. Generated
columns (the full-text vectors) are left out and recomputed by the load.

Loading is plain INSERTs as the superuser, which the append-only triggers allow. A receipt's
row is dumped with its `envelope`, as the log reads it (the signatures are stored beside the
row in `receipt_signatures` since migration 0030, which moved them there), and loaded into both.
Two tables are not loaded from the dump: `receipt_disclosures` is derived from the receipts'
`disclosed_ids`, as the gateway writes it with their signatures (the load checks that it comes
out as dumped), and `rate_buckets` (the keys' request throttles, stamped with the database's
wall clock) is not dumped at all: nothing a receipt or a replay reads.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from psycopg import Connection, sql

__all__ = ["DERIVED", "TABLES", "dump_tenant", "load_dump"]

# Every tenant table a receipt, its verification or its replay reads, in an order that loads
# (each after the tables its foreign keys name), with the key that orders its rows.
TABLES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("tenants", ("tenant_id",)),
    ("api_keys", ("key_id",)),
    ("policy_bundles", ("digest",)),
    ("policy_activations", ("activation",)),
    ("memories", ("memory_id",)),
    ("erasures", ("memory_id",)),
    ("sessions", ("session_id",)),
    ("session_turns", ("session_id", "seq")),
    ("session_appends", ("session_id", "idempotency_key")),
    ("session_summaries", ("summary_id",)),
    ("compile_jobs", ("job_id",)),
    ("compile_watermarks", ("scope", "extractor")),
    ("supersessions", ("decision_id",)),
    ("conflicts", ("conflict_id",)),
    ("receipt_logs", ("tenant_id",)),
    ("receipts", ("seq",)),
    ("receipt_disclosures", ("seq", "memory_id")),
    ("receipt_tiles", ("tile",)),
    ("checkpoints", ("size",)),
)
# Derived from `receipts` when it is loaded.
DERIVED = frozenset({"receipt_disclosures"})
# A receipt as the log reads it: its row and its signatures.
_RECEIPTS_SIGNED = sql.SQL(
    "(SELECT r.*, s.envelope FROM receipts r LEFT JOIN receipt_signatures s USING (tenant_id, seq))"
)

AnyConnection = Connection[tuple[object, ...]]


def _columns(conn: AnyConnection, table: str) -> tuple[list[str], list[str]]:
    """The table's (stored, generated) column names, in column order."""
    rows = conn.execute(
        "SELECT column_name, is_generated = 'ALWAYS' FROM information_schema.columns"
        " WHERE table_schema = 'public' AND table_name = %s ORDER BY ordinal_position",
        (table,),
    ).fetchall()
    if not rows:
        raise LookupError(f"no table {table!r} in this database")
    stored = [str(name) for name, generated in rows if not generated]
    generated = [str(name) for name, is_generated in rows if is_generated]
    return stored, generated


def dump_tenant(conn: AnyConnection, tenant_id: str) -> list[str]:
    """Every row of the tenant in `TABLES`, as lines ``{"table": …, "row": …}`` (no newline)."""
    return [line for table, order in TABLES for line in _dump_table(conn, table, order, tenant_id)]


def _dump_table(conn: AnyConnection, table: str, order: Sequence[str], tenant_id: str) -> list[str]:
    conn.execute("SET TimeZone = 'UTC'")
    _, generated = _columns(conn, table)
    # Before migration 0030 (a tree `make_golden --at-commit` runs) the envelope is the row's own.
    signed = table == "receipts" and _exists(conn, "receipt_signatures")
    source = _RECEIPTS_SIGNED if signed else sql.Identifier(table)
    query = sql.SQL(
        "SELECT (to_jsonb(t) - %(generated)s::text[])::text FROM {} t"
        " WHERE tenant_id = %(tenant_id)s ORDER BY {}"
    ).format(source, sql.SQL(", ").join(map(sql.Identifier, order)))
    rows = conn.execute(query, {"generated": generated, "tenant_id": tenant_id}).fetchall()
    return [f'{{"table": {json.dumps(table)}, "row": {row}}}' for (row,) in rows]


def _exists(conn: AnyConnection, table: str) -> bool:
    row = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (f"public.{table}",)).fetchone()
    return bool(row and row[0])


def load_dump(conn: AnyConnection, lines: Iterable[str]) -> dict[str, int]:
    """Insert the dumped rows (the caller commits); the count of rows loaded per table.

    Raises `ValueError` when a row names a column the table no longer has (the schema moved
    under the dump), or when the trigger-derived rows differ from the dumped ones."""
    conn.execute("SET TimeZone = 'UTC'")
    by_table: dict[str, list[tuple[str, frozenset[str]]]] = {}
    for line in lines:
        item = json.loads(line)
        by_table.setdefault(item["table"], []).append((line, frozenset(item["row"])))
    unknown = set(by_table) - {table for table, _ in TABLES}
    if unknown:
        raise ValueError(f"the dump holds rows of tables this loader does not know: {unknown}")
    loaded: dict[str, int] = {}
    for table, _ in TABLES:
        rows = by_table.get(table, [])
        if table in DERIVED or not rows:
            continue
        stored, _ = _columns(conn, table)
        beside = {"envelope"} if table == "receipts" else set()
        for line, keys in rows:
            extra = keys - set(stored) - beside
            if extra:
                raise ValueError(f"{table}: the dump has columns the table lacks: {sorted(extra)}")
            _insert(conn, table, [c for c in stored if c in keys], line)
            if keys & beside:
                _insert(conn, "receipt_signatures", ["tenant_id", "seq", "envelope"], line)
        loaded[table] = len(rows)
    conn.execute(
        "INSERT INTO receipt_disclosures (tenant_id, memory_id, seq)"
        " SELECT tenant_id, m, seq FROM receipts, unnest(disclosed_ids) AS m"
    )
    _restart_identities(conn)
    _check_derived(conn, by_table)
    return loaded


def _insert(conn: AnyConnection, table: str, columns: Sequence[str], line: str) -> None:
    names = sql.SQL(", ").join(map(sql.Identifier, columns))
    # An identity column GENERATED ALWAYS keeps its dumped value only when told to.
    conn.execute(
        sql.SQL(
            "INSERT INTO {table} ({names}) OVERRIDING SYSTEM VALUE"
            " SELECT {names} FROM jsonb_populate_record(NULL::{table}, %s::jsonb -> 'row')"
        ).format(table=sql.Identifier(table), names=names),
        (line,),
    )


def _restart_identities(conn: AnyConnection) -> None:
    """Move identity sequences past the loaded values, so the next insert does not collide."""
    identities = conn.execute(
        "SELECT table_name, column_name FROM information_schema.columns"
        " WHERE table_schema = 'public' AND is_identity = 'YES'"
    ).fetchall()
    for table, column in identities:
        conn.execute(
            sql.SQL(
                "SELECT setval(pg_get_serial_sequence(%(table)s, %(column)s), max({column}))"
                " FROM {table} HAVING max({column}) IS NOT NULL"
            ).format(table=sql.Identifier(str(table)), column=sql.Identifier(str(column))),
            {"table": str(table), "column": str(column)},
        )


def _check_derived(
    conn: AnyConnection, by_table: dict[str, list[tuple[str, frozenset[str]]]]
) -> None:
    tenants = sorted({json.loads(line)["row"]["tenant_id"] for line, _ in by_table["tenants"]})
    for table, order in TABLES:
        if table not in DERIVED:
            continue
        made = [line for t in tenants for line in _dump_table(conn, table, order, t)]
        dumped = [line for line, _ in by_table.get(table, [])]
        if sorted(made) != sorted(dumped):
            raise ValueError(f"{table}: the rows the load derived differ from the dumped ones")
