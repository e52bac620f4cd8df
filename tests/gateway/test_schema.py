"""The migrations build the schema the code expects, and PostgreSQL itself guards immutability."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import psycopg
import pytest
from litestar.testing import TestClient
from psycopg import sql
from psycopg.types.json import Jsonb

from gateway.store.database import EmbeddedPostgres
from gateway.store.errors import MigrationError
from gateway.store.migrator import apply_migrations, discover_migrations, migrations_dir
from tests.conftest import Key
from tests.gateway.test_memories_write import write

EXPECTED_MEMORY_COLUMNS = {
    "tenant_id", "memory_id", "namespace", "memory_type", "heading", "content", "confidence",
    "labels", "source_type", "source_ref", "claim_key", "supersedes", "superseded_by", "agent_id",
    "written_by_key", "idempotency_key", "request_sha256", "created_at", "expires_at", "deleted_at",
    "deleted_reason", "erased_at", "content_sha256", "heading_tokens", "tokens", "embedding",
    "embedding_model", "embedding_dim", "tsv", "sources", "extractor", "valid_from",
    "claim_value", "claim_previous", "superseded_decision", "scope_key",
}  # fmt: skip


def test_migrated_schema_matches_the_code(database_url: str) -> None:
    with psycopg.connect(database_url) as conn:
        columns = {
            row[0]
            for row in conn.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = 'memories'"
            )
        }
        indexes = {row[0] for row in conn.execute("SELECT indexname FROM pg_indexes")}
        applied = [row[0] for row in conn.execute("SELECT name FROM schema_migrations")]
    assert columns == EXPECTED_MEMORY_COLUMNS
    assert {"memories_index_order", "memories_tsv", "memories_embedding_384"} <= indexes
    assert applied == [m.name for m in discover_migrations(migrations_dir())]


def test_every_primary_key_starts_with_tenant_id(database_url: str) -> None:
    query = """
        SELECT c.conrelid::regclass::text, a.attname
          FROM pg_constraint c
          JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
         WHERE c.contype IN ('p', 'u') AND c.connamespace = 'public'::regnamespace
    """
    with psycopg.connect(database_url) as conn:
        rows = conn.execute(query).fetchall()
    offenders = [(table, column) for table, column in rows
                 if table not in {"tenants", "schema_migrations"} and column != "tenant_id"]  # fmt: skip
    assert offenders == []


@pytest.mark.parametrize(
    "assignment",
    [
        "content = 'rewritten'",
        "heading = 'new heading'",
        "namespace = 'elsewhere'",
        "memory_type = 'working'",
        "confidence = 0.1",
        "embedding = NULL",
    ],
)
def test_trigger_stops_direct_sql_changes(
    client: TestClient[Any], agent: Key, database_url: str, assignment: str
) -> None:
    write(client, agent)
    with psycopg.connect(database_url) as conn, pytest.raises(psycopg.errors.CheckViolation):
        conn.execute(sql.SQL("UPDATE memories SET {}").format(sql.SQL(assignment)))


def test_one_way_fields_are_set_once(
    client: TestClient[Any], agent: Key, database_url: str
) -> None:
    write(client, agent)
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("UPDATE memories SET deleted_at = now(), deleted_reason = 'first'")
        with pytest.raises(psycopg.errors.CheckViolation):
            conn.execute("UPDATE memories SET deleted_reason = 'second'")
        with pytest.raises(psycopg.errors.CheckViolation):
            conn.execute("DELETE FROM memories")
        with pytest.raises(psycopg.errors.CheckViolation):
            conn.execute("TRUNCATE memories")


def test_erasure_blanks_content_but_keeps_the_hash(
    client: TestClient[Any], agent: Key, database_url: str
) -> None:
    memory_id = write(client, agent).json()["memory_id"]
    with psycopg.connect(database_url, autocommit=True) as conn:
        before = conn.execute("SELECT content_sha256 FROM memories").fetchone()
        conn.execute(
            "SELECT erase_memory(%s, %s, 'gdpr request', now())", (agent.tenant_id, memory_id)
        )
        row = conn.execute(
            "SELECT heading, content, embedding, content_sha256 FROM memories"
        ).fetchone()
    assert row == ("", "", None, before[0] if before else None)


def _fresh_database(embedded_pg: EmbeddedPostgres, name: str) -> str:
    with psycopg.connect(embedded_pg.url("postgres"), autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    return embedded_pg.url(name)


def test_edited_migration_stops_startup(embedded_pg: EmbeddedPostgres, tmp_path: Path) -> None:
    url = _fresh_database(embedded_pg, "edited_migration")
    directory = tmp_path / "migrations"
    directory.mkdir()
    source = migrations_dir() / "0001_foundation.sql"
    (directory / source.name).write_bytes(source.read_bytes())
    assert apply_migrations(url, directory) == ["0001_foundation.sql"]
    (directory / source.name).write_bytes(source.read_bytes() + b"\n-- an innocent comment\n")
    with pytest.raises(MigrationError, match="edited after it was applied"):
        apply_migrations(url, directory)


def test_concurrent_migrators_apply_each_file_once(embedded_pg: EmbeddedPostgres) -> None:
    url = _fresh_database(embedded_pg, "concurrent_migration")
    results: list[list[str]] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            results.append(apply_migrations(url))
        except BaseException as exc:  # noqa: BLE001  the thread hands every failure to the test
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert sorted(len(r) for r in results) == [0, 0, 0, len(discover_migrations(migrations_dir()))]


def test_badly_named_migration_is_refused(tmp_path: Path) -> None:
    (tmp_path / "1_init.sql").write_text("SELECT 1")
    with pytest.raises(MigrationError, match="NNNN_description"):
        discover_migrations(tmp_path)


def test_signatures_move_beside_their_receipts_with_nothing_lost(
    embedded_pg: EmbeddedPostgres, tmp_path: Path
) -> None:
    """Migration 0030 on a log written before it: every tenant's envelopes move to
    `receipt_signatures`, the column goes, and the tenant wall is forced on `receipts` again."""
    url = _fresh_database(embedded_pg, "signatures_move")
    directory = tmp_path / "migrations"
    directory.mkdir()
    before = [m for m in sorted(migrations_dir().glob("*.sql")) if m.name < "0030"]
    for source in before:
        (directory / source.name).write_bytes(source.read_bytes())
    apply_migrations(url, directory)
    envelopes = {}
    with psycopg.connect(url, autocommit=True) as conn:
        for tenant in ("north", "south"):
            conn.execute("INSERT INTO tenants (tenant_id) VALUES (%s)", (tenant,))
            envelope = {"payloadType": "t", "signatures": [{"keyid": tenant, "sig": "c2ln"}]}
            conn.execute(
                "INSERT INTO receipts (tenant_id, seq, receipt_id, kind, key_id, issued_at, body,"
                " envelope, prev, leaf, disclosed_ids)"
                " VALUES (%s, 1, %s, 'context', 'k', now(), 'body', %s, %s, %s, '{m-1}')",
                (tenant, f"r-{tenant}", Jsonb(envelope), bytes(32), bytes(32)),
            )
            envelopes[tenant] = envelope
    assert apply_migrations(url) == ["0030_receipts_signed_after_release.sql"] + [
        m.name for m in sorted(migrations_dir().glob("*.sql")) if m.name > "0030_receipts_z"
    ]
    with psycopg.connect(url, autocommit=True) as conn:
        moved: dict[str, object] = dict(
            conn.execute("SELECT tenant_id, envelope FROM receipt_signatures ORDER BY 1").fetchall()
        )
        columns = {
            str(name)
            for (name,) in conn.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = 'receipts'"
            ).fetchall()
        }
        forced = conn.execute(
            "SELECT relforcerowsecurity FROM pg_class WHERE relname = 'receipts'"
        ).fetchone()
    assert moved == envelopes
    assert "envelope" not in columns
    assert forced == (True,)
