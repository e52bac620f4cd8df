"""Row-level security, the second wall between tenants (ARCHITECTURE §14), tried in SQL as the
gateway's own login: no tenant entered sees nothing, tenant A neither reads nor writes B's rows,
and the setting lives one transaction only (pooled connections carry nothing over)."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest
from litestar.testing import TestClient
from psycopg import errors, sql

from tests.conftest import Key, KeyFactory
from tests.gateway.sessions_helpers import append, open_session
from tests.gateway.test_memories_write import write

_TENANT_TABLES = """
SELECT c.relname, c.relrowsecurity, c.relforcerowsecurity,
       EXISTS (SELECT 1 FROM pg_policy p WHERE p.polrelid = c.oid AND p.polname = 'tenant_wall')
  FROM pg_class c
  JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'tenant_id' AND NOT a.attisdropped
 WHERE c.relkind IN ('r', 'p') AND c.relnamespace = current_schema()::regnamespace
 ORDER BY c.relname
"""


def _tables(url: str) -> list[str]:
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(_TENANT_TABLES).fetchall()
    # Any table with a tenant_id (one a later migration adds included) must be walled and forced.
    assert rows and all(r[1] and r[2] and r[3] for r in rows), rows
    return [str(r[0]) for r in rows]


def _counts(conn: psycopg.Connection[Any], tables: list[str]) -> dict[str, tuple[int, int]]:
    """Rows visible per table: (acme's, globex's)."""
    found = {}
    for table in tables:
        query = sql.SQL(
            "SELECT count(*) FILTER (WHERE tenant_id = 'acme'),"
            " count(*) FILTER (WHERE tenant_id = 'globex') FROM {}"
        ).format(sql.Identifier(table))
        row = conn.execute(query).fetchone()
        assert row is not None
        found[table] = (int(row[0]), int(row[1]))
    return found


@pytest.fixture
def two_tenants(client: TestClient[Any], make_key: KeyFactory) -> tuple[Key, Key]:
    """Both tenants with memories, receipts, a checkpoint and a session with a turn."""
    keys = make_key("acme"), make_key("globex")
    for key in keys:
        assert write(client, key, heading=f"Secret of {key.tenant_id}").status_code == 201
        assert client.post("/v1/context", json={"task": "secret"}, headers=key.headers).status_code == 200  # fmt: skip
        session = open_session(client, key)
        assert append(client, key, session["session_id"], ("user", "hello")).status_code == 200
    return keys


def test_every_tenant_table_is_walled_and_a_transaction_without_a_tenant_sees_nothing(
    two_tenants: tuple[Key, Key], app_database_url: str, database_url: str
) -> None:
    tables = _tables(database_url)
    assert {"memories", "receipts", "api_keys", "session_turns", "tenants"} <= set(tables)
    with psycopg.connect(database_url) as conn:  # the operator sees both tenants' rows
        everything = _counts(conn, tables)
    for table in ("memories", "receipts", "api_keys", "sessions", "session_turns", "tenants"):
        assert everything[table][0] > 0 and everything[table][1] > 0, table
    with psycopg.connect(app_database_url) as conn:
        assert set(_counts(conn, tables).values()) == {(0, 0)}


def test_tenant_a_reads_only_its_own_rows_and_cannot_write_b_s(
    two_tenants: tuple[Key, Key], app_database_url: str, database_url: str
) -> None:
    tables = _tables(database_url)
    with psycopg.connect(app_database_url) as conn:
        conn.execute("SELECT enter_tenant('acme')")
        seen = _counts(conn, tables)
        assert all(globex == 0 for _, globex in seen.values()), seen
        assert seen["memories"][0] > 0 and seen["receipts"][0] > 0
        # Not even a query that names globex, nor one that changes globex's rows.
        assert conn.execute("SELECT count(*) FROM memories WHERE tenant_id = 'globex'").fetchone() == (0,)  # fmt: skip
        hidden = conn.execute("UPDATE sessions SET turn_count = turn_count WHERE tenant_id = 'globex'")  # fmt: skip
        assert hidden.rowcount == 0
        with pytest.raises(errors.InsufficientPrivilege, match="row-level security"):
            conn.execute(
                "INSERT INTO erasures (tenant_id, memory_id, erased_at, reason)"
                " VALUES ('globex', '01J00000000000000000000000', now(), 'x')"
            )


def test_the_tenant_setting_ends_with_its_transaction(
    two_tenants: tuple[Key, Key], app_database_url: str
) -> None:
    with psycopg.connect(app_database_url) as conn:
        with conn.transaction():
            conn.execute("SELECT enter_tenant('acme')")
            assert conn.execute("SELECT count(*) > 0 FROM memories").fetchone() == (True,)
        assert conn.execute("SELECT count(*) FROM memories").fetchone() == (0,)


def test_background_work_crosses_tenants_only_through_the_ledger_functions(
    two_tenants: tuple[Key, Key], app_database_url: str
) -> None:
    with psycopg.connect(app_database_url, autocommit=True) as conn:
        assert conn.execute("SELECT count(*) FROM receipt_logs").fetchone() == (0,)
        grown = conn.execute("SELECT tenant_id FROM ledger_growth()").fetchall()
        lag = conn.execute("SELECT behind FROM ledger_lag()").fetchone()
        # The app role cannot take the ledger role's own reads for itself.
        with pytest.raises(errors.InsufficientPrivilege):
            conn.execute("SET ROLE ctxgw_ledger")
    # Each tenant wrote two receipts (a context and a session append may be uncheckpointed).
    assert {r[0] for r in grown} <= {"acme", "globex"}
    assert lag is not None and int(lag[0]) >= 0


def test_full_text_recall_may_use_its_index_behind_the_wall(app_database_url: str) -> None:
    # A policy's qual runs before any of the query's own that is not LEAKPROOF, and only a
    # leakproof operator may serve as an index condition: without it (migration 0010) recall's
    # full-text branch would filter every memory of the tenant.
    with psycopg.connect(app_database_url) as conn:
        leakproof = conn.execute(
            "SELECT proleakproof FROM pg_proc"
            " WHERE oid = 'pg_catalog.ts_match_vq(tsvector, tsquery)'::regprocedure"
        ).fetchone()
    assert leakproof == (True,)


def test_each_receipt_indexes_the_memories_it_disclosed(
    two_tenants: tuple[Key, Key], database_url: str
) -> None:
    with psycopg.connect(database_url) as conn:
        disclosed = conn.execute(
            "SELECT tenant_id, m, seq FROM receipts, unnest(disclosed_ids) AS m ORDER BY 1, 2, 3"
        ).fetchall()
        indexed = conn.execute(
            "SELECT tenant_id, memory_id, seq FROM receipt_disclosures ORDER BY 1, 2, 3"
        ).fetchall()
        assert disclosed and indexed == disclosed  # both tenants' context receipts
        with pytest.raises(errors.InsufficientPrivilege):
            conn.execute("DELETE FROM receipt_disclosures")
