"""An audit trail that cannot be emptied quietly: every export ends with its end line (checkpoint
and count), even for an empty log; a log that disagrees with itself (a receipt row gone, an index
column changed) is a 409 `ledger_inconsistent` or a failed check, never a 500 or a 200 that
stops short; and the offline verifier refuses what the server did not finish."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import psycopg
from litestar.testing import TestClient

from gateway.shell.settings import Settings
from tests.conftest import Key, KeyFactory
from tests.gateway.test_receipts_api import disclose_everything


def _verify(export: str, settings: Settings, tmp_path: Path, *extra: str) -> tuple[int, str]:
    path = tmp_path / "export.jsonl"
    path.write_text(export)
    keyring = settings.data_dir / "keys" / "keyring.json"
    done = subprocess.run(
        [sys.executable, "-m", "receipts", "verify", str(path), "--keyring", str(keyring), *extra],
        capture_output=True,
        text=True,
        check=False,
    )
    return done.returncode, done.stdout + done.stderr


def _tamper(database_url: str, statement: str, receipt_id: str | None = None) -> None:
    """What only someone with the database's superuser could do: bypass the append-only guard."""
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("ALTER TABLE receipts DISABLE TRIGGER receipts_append_only")
        conn.execute(statement, {"id": receipt_id})
        conn.execute("ALTER TABLE receipts ENABLE ALWAYS TRIGGER receipts_append_only")


def test_an_export_ends_with_its_checkpoint_and_count_and_the_verifier_needs_it(
    client: TestClient[Any], agent: Key, make_key: KeyFactory, settings: Settings, tmp_path: Path
) -> None:
    auditor = make_key(role="auditor")
    empty = client.get("/v1/receipts/export", headers=auditor.headers)
    assert empty.status_code == 200
    end = json.loads(empty.text)
    assert end["receipts"] == 0 and end["checkpoint"].startswith("ctxgw/acme\n0\n")
    assert _verify(empty.text, settings, tmp_path)[0] == 0

    disclose_everything(client, agent)
    export = client.get("/v1/receipts/export", headers=auditor.headers).text
    lines = export.splitlines(keepends=True)
    assert json.loads(lines[-1])["receipts"] == len(lines) - 1 == 4
    assert _verify(export, settings, tmp_path)[0] == 0
    for cut in ("", "".join(lines[:-1]), "".join(lines[:2])):
        status, out = _verify(cut, settings, tmp_path)
        assert status == 1 and "INVALID incomplete" in out, out
    assert _verify("".join(lines[:-1]), settings, tmp_path, "--allow-unanchored")[0] == 0
    filtered = client.get(
        "/v1/receipts/export", params={"kind": "search"}, headers=auditor.headers
    ).text
    assert json.loads(filtered.splitlines()[-1])["receipts"] == 1
    assert _verify(filtered, settings, tmp_path)[0] == 0


def test_a_vanished_receipt_row_is_a_409_not_a_500_or_a_short_200(
    client: TestClient[Any], agent: Key, make_key: KeyFactory, database_url: str
) -> None:
    receipt_id = disclose_everything(client, agent)["context"]["receipt_id"]
    auditor = make_key(role="auditor")
    assert client.get("/v1/log/checkpoint", headers=auditor.headers).status_code == 200
    _tamper(database_url, "DELETE FROM receipts WHERE seq = 2")
    export = client.get("/v1/receipts/export", headers=auditor.headers)
    assert export.status_code == 409 and export.json()["code"] == "ledger_inconsistent"
    verified = client.get(f"/v1/receipts/{receipt_id}/verify", headers=auditor.headers)
    assert verified.status_code == 200 and verified.json()["valid"] is False
    failed = {c["name"]: c["code"] for c in verified.json()["checks"] if not c["ok"]}
    assert failed == {"inclusion": "ledger_inconsistent"}


def test_an_index_column_changed_beside_the_signed_body_is_detected(
    client: TestClient[Any], agent: Key, make_key: KeyFactory, database_url: str
) -> None:
    done = disclose_everything(client, agent)
    search = done["search"]["receipt_id"]
    auditor = make_key(role="auditor")
    body = client.get(f"/v1/receipts/{search}", headers=auditor.headers).json()["body"]
    assert body["disclosed_ids"] == sorted(body["disclosed_ids"]) and body["disclosed_ids"]
    # Moving a receipt to another agent would drop it from that agent's filtered list.
    _tamper(database_url, "UPDATE receipts SET agent_id = 'x' WHERE receipt_id = %(id)s", search)
    listed = client.get("/v1/receipts", headers=auditor.headers)
    assert listed.status_code == 409 and listed.json()["code"] == "ledger_inconsistent"
    verified = client.get(f"/v1/receipts/{search}/verify", headers=auditor.headers).json()
    assert {c["name"]: c["code"] for c in verified["checks"] if not c["ok"]} == {"index": "index_mismatch"}  # fmt: skip
    # And the memory index: a receipt that no longer says it disclosed a memory.
    fetch = done["fetch"]["receipt_id"]
    _tamper(
        database_url, "UPDATE receipts SET disclosed_ids = '{}' WHERE receipt_id = %(id)s", fetch
    )
    verified = client.get(f"/v1/receipts/{fetch}/verify", headers=auditor.headers).json()
    assert {c["name"]: c["code"] for c in verified["checks"] if not c["ok"]} == {"index": "index_mismatch"}  # fmt: skip


def test_the_writer_refuses_to_extend_a_chain_whose_head_it_cannot_verify(
    client: TestClient[Any], agent: Key, database_url: str
) -> None:
    disclose_everything(client, agent)
    _tamper(database_url, "DELETE FROM receipts WHERE seq = 4")  # the head's own receipt
    refused = client.post("/v1/context", json={"task": "roll back"}, headers=agent.headers)
    assert refused.status_code == 503 and refused.json()["code"] == "receipt_unavailable"
    assert "bundle" not in refused.json()
    with psycopg.connect(database_url) as conn:
        assert conn.execute("SELECT max(seq) FROM receipts").fetchone() == (3,)


def test_a_filtered_export_is_checked_against_the_whole_log(
    client: TestClient[Any], agent: Key, make_key: KeyFactory, settings: Settings, tmp_path: Path
) -> None:
    disclose_everything(client, agent)
    disclose_everything(client, agent)  # two receipts of each kind
    auditor = make_key(role="auditor")
    full = client.get("/v1/receipts/export", headers=auditor.headers).text
    (tmp_path / "full.jsonl").write_text(full)
    extract = client.get("/v1/receipts/export", params={"kind": "search"}, headers=auditor.headers).text  # fmt: skip
    lines = extract.splitlines(keepends=True)
    assert len(lines) == 3
    checked = ("--full", str(tmp_path / "full.jsonl"), "--kind", "search")
    status, out = _verify(extract, settings, tmp_path, *checked)
    assert status == 0, out
    # One search receipt left out, the count forged to match: each line still proves itself,
    # only the whole log shows what is missing.
    end = json.loads(lines[-1])
    forged = lines[0] + json.dumps({"checkpoint": end["checkpoint"], "receipts": 1}) + "\n"
    assert _verify(forged, settings, tmp_path)[0] == 0
    status, out = _verify(forged, settings, tmp_path, *checked)
    assert status == 1 and "INVALID incomplete" in out and "leaves out 1" in out
    # And an extract that holds what its filter does not select.
    status, out = _verify(extract, settings, tmp_path, "--full", str(tmp_path / "full.jsonl"), "--kind", "fetch")  # fmt: skip
    assert status == 1
