"""The migrated schema keeps to the distribution plan (docs/distribution.md): every table is
distributed by `tenant_id` or a named reference table; every key and foreign key leads with
`tenant_id`; no sequence, `SECURITY DEFINER` function or row-level security policy crosses tenants
outside the plan's named exceptions; no table is unlogged but the named ones. The lists are read from the plan's own
block, so the document and the schema cannot drift apart silently."""

from __future__ import annotations

import re
from pathlib import Path

import psycopg
import pytest

PLAN = Path(__file__).resolve().parents[2] / "docs" / "distribution.md"
_FIX = "change the migration, or the plan in docs/distribution.md (and say why there)"


def _plan() -> dict[str, set[str]]:
    block = re.search(r"```plan\n(.*?)```", PLAN.read_text("utf-8"), re.DOTALL)
    assert block is not None, f"{PLAN} has no ```plan block"
    plan: dict[str, set[str]] = {}
    for line in block.group(1).splitlines():
        name, _, values = line.partition(":")
        plan[name.strip()] = {v.strip() for v in values.split(",") if v.strip()}
    return plan


@pytest.fixture(scope="module")
def plan() -> dict[str, set[str]]:
    return _plan()


def _rows(url: str, query: str) -> list[tuple[object, ...]]:
    with psycopg.connect(url) as conn:
        return conn.execute(query).fetchall()


_TABLES = """
SELECT c.relname, c.relpersistence,
       EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'tenant_id'
                AND NOT a.attisdropped AND a.attnotnull)
  FROM pg_class c
 WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p')
"""


def test_every_table_is_distributed_by_tenant_or_named_reference(
    database_url: str, plan: dict[str, set[str]]
) -> None:
    rows = _rows(database_url, _TABLES)
    with_tenant = {str(name) for name, _, tenant in rows if tenant}
    without = {str(name) for name, _, tenant in rows if not tenant}
    assert without == plan["reference"], f"tables without a NOT NULL tenant_id: {_FIX}"
    assert with_tenant == plan["distributed"], f"distributed tables differ from the plan: {_FIX}"
    unlogged = {str(name) for name, persistence, _ in rows if persistence != "p"}
    assert unlogged == plan["unlogged"], f"unlogged tables are not replicated to a standby: {_FIX}"  # fmt: skip


_KEYS = """
SELECT con.conrelid::regclass::text, con.conname, con.contype,
       (SELECT a.attname FROM pg_attribute a
         WHERE a.attrelid = con.conrelid AND a.attnum = con.conkey[1]),
       (SELECT a.attname FROM pg_attribute a
         WHERE a.attrelid = con.confrelid AND a.attnum = con.confkey[1])
  FROM pg_constraint con
 WHERE con.connamespace = 'public'::regnamespace AND con.contype IN ('p', 'u', 'x', 'f')
UNION ALL
SELECT i.indrelid::regclass::text, i.indexrelid::regclass::text, 'i',
       (SELECT a.attname FROM pg_attribute a
         WHERE a.attrelid = i.indrelid AND a.attnum = i.indkey[0]),
       NULL
  FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
 WHERE c.relnamespace = 'public'::regnamespace AND i.indisunique
   AND NOT EXISTS (SELECT 1 FROM pg_constraint con WHERE con.conindid = i.indexrelid)
"""


def _key_offenders(url: str, plan: dict[str, set[str]]) -> tuple[int, list[tuple[object, object]]]:
    keys = [r for r in _rows(url, _KEYS) if r[0] not in plan["reference"]]
    offenders = [
        (table, name)
        for table, name, kind, first, referenced_first in keys
        if first != "tenant_id" or (kind == "f" and referenced_first != "tenant_id")
    ]
    return len(keys), offenders


def test_every_key_and_foreign_key_leads_with_tenant_id(
    database_url: str, plan: dict[str, set[str]]
) -> None:
    count, offenders = _key_offenders(database_url, plan)
    assert count >= 40  # the query sees the schema (44 keys when the plan was written)
    assert offenders == [], f"keys that do not lead with tenant_id: {_FIX}"


def test_a_key_that_does_not_lead_with_tenant_id_is_caught(
    database_url: str, plan: dict[str, set[str]]
) -> None:
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute(
            "CREATE TABLE stray (tenant_id text NOT NULL, id text NOT NULL,"
            " memory_id text, PRIMARY KEY (id, tenant_id))"
        )
        conn.execute("CREATE UNIQUE INDEX stray_memory ON stray (memory_id, tenant_id)")
        conn.execute(
            "ALTER TABLE stray ADD FOREIGN KEY (memory_id, tenant_id)"
            " REFERENCES memories (memory_id, tenant_id)"
        )
    _, offenders = _key_offenders(database_url, plan)
    assert {name for _, name in offenders} == {
        "stray_pkey", "stray_memory", "stray_memory_id_tenant_id_fkey"
    }  # fmt: skip


def test_no_sequence_crosses_tenants_outside_the_plan(
    database_url: str, plan: dict[str, set[str]]
) -> None:
    sequences = _rows(
        database_url,
        "SELECT relname FROM pg_class WHERE relkind = 'S'"
        " AND relnamespace = 'public'::regnamespace",
    )
    assert {str(r[0]) for r in sequences} <= plan["sequences"], f"a sequence shared by tenants: {_FIX}"  # fmt: skip


_DEFINERS = """
SELECT p.proname, pg_get_userbyid(p.proowner)
  FROM pg_proc p
 WHERE p.pronamespace = 'public'::regnamespace AND p.prosecdef
   AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.objid = p.oid AND d.deptype = 'e')
"""


def test_only_the_named_functions_cross_tenants(
    database_url: str, plan: dict[str, set[str]]
) -> None:
    definers = _rows(database_url, _DEFINERS)
    assert {str(name) for name, _ in definers} == plan["cross_tenant_functions"], _FIX
    # Owned by the ledger role, which is neither superuser nor BYPASSRLS: they see other
    # tenants only through the ledger's read policies.
    assert {str(owner) for _, owner in definers} == {"ctxgw_ledger"}
    roles = _rows(
        database_url,
        "SELECT rolsuper OR rolbypassrls FROM pg_roles WHERE rolname = 'ctxgw_ledger'",
    )
    assert roles == [(False,)]


_POLICIES = "SELECT tablename, policyname, roles::text[], qual FROM pg_policies"
_WALL = "(tenant_id = current_setting('ctxgw.tenant'::text, true))"


def test_row_level_security_crosses_tenants_only_for_the_ledger(
    database_url: str, plan: dict[str, set[str]]
) -> None:
    policies = _rows(database_url, _POLICIES)
    walled = {str(t) for t, name, _, qual in policies if name == "tenant_wall" and qual == _WALL}
    assert walled == plan["distributed"]
    others = [(t, name, roles) for t, name, roles, _ in policies if name != "tenant_wall"]
    assert {name for _, name, _ in others} <= plan["cross_tenant_policies"], _FIX
    assert all(roles == ["ctxgw_ledger"] for _, _, roles in others), others
