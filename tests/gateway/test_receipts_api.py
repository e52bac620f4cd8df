"""Receipts in the gateway: every disclosure receipted in its transaction, append-only in
PostgreSQL, verifiable by the server and offline with nothing but the export and the keyring."""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
import pytest
from litestar.testing import AsyncTestClient, TestClient

from gateway.http.app import create_app
from gateway.shell.settings import Settings
from gateway.store.receipts import ReceiptRow, stored_envelope
from receipts import (
    Envelope,
    Keyring,
    VerificationError,
    decode_body,
    verify_checkpoint,
    verify_export,
    verify_inclusion,
    verify_receipt,
)
from receipts.dsse import b64encode
from tests.conftest import Key, KeyFactory
from tests.gateway.test_context import seed


def disclose_everything(client: TestClient[Any], agent: Key) -> dict[str, Any]:
    ids = seed(client, agent)
    headers = agent.headers
    return {
        "context": client.post("/v1/context", json={"task": "roll back", "budget_tokens": 500}, headers=headers).json(),
        "search": client.post("/v1/search", json={"query": "refund"}, headers=headers).json(),
        "timeline": client.post("/v1/timeline", json={"ids": ids[:2]}, headers=headers).json(),
        "fetch": client.post("/v1/fetch", json={"ids": ids[:2]}, headers=headers).json(),
    }  # fmt: skip


def test_every_disclosure_is_receipted(
    client: TestClient[Any], agent: Key, make_key: KeyFactory
) -> None:
    responses = disclose_everything(client, agent)
    auditor = make_key(role="auditor")
    for kind, response in responses.items():
        receipt = client.get(f"/v1/receipts/{response['receipt_id']}", headers=auditor.headers)
        assert receipt.status_code == 200, receipt.text
        body = receipt.json()["body"]
        assert body["kind"] == kind
        assert body["subject"]["agent_id"] == "agent-1"
        assert body["policy"]["digest"] == response["policy"]["digest"]
    context = responses["context"]
    body = client.get(f"/v1/receipts/{context['receipt_id']}", headers=auditor.headers).json()[
        "body"
    ]
    assert body["bundle"]["sha256"] == hashlib.sha256(context["bundle"].encode()).hexdigest()
    assert [i["memory_id"] for i in body["included"]] == [
        i["memory_id"] for i in context["included"]
    ]
    assert body["request"]["task"] == "roll back"
    listed = client.get("/v1/receipts", headers=auditor.headers).json()["receipts"]
    assert [r["seq"] for r in listed] == [1, 2, 3, 4]


def test_which_receipts_disclosed_a_memory(
    client: TestClient[Any], agent: Key, make_key: KeyFactory, database_url: str
) -> None:
    responses = disclose_everything(client, agent)
    fetched_id = responses["fetch"]["memories"][0]["memory_id"]
    auditor = make_key(role="auditor")
    found = client.get(f"/v1/receipts?memory_id={fetched_id}", headers=auditor.headers).json()
    kinds = {r["kind"] for r in found["receipts"]}
    assert "fetch" in kinds and "timeline" in kinds
    with psycopg.connect(database_url) as conn:
        signed = conn.execute(
            "SELECT seq FROM receipts WHERE disclosed_ids @> ARRAY[%s] ORDER BY seq", (fetched_id,)
        ).fetchall()
    assert [r["seq"] for r in found["receipts"]] == [seq for (seq,) in signed]
    # A page at a time, in log order (receipt_disclosures, migration 0019).
    paged: list[int] = []
    url: str | None = f"/v1/receipts?memory_id={fetched_id}&limit=1"
    while url is not None:
        page = client.get(url, headers=auditor.headers).json()
        paged += [r["seq"] for r in page["receipts"]]
        after = page["next_cursor"]
        url = f"/v1/receipts?memory_id={fetched_id}&limit=1&cursor={after}" if after else None
    assert paged == [seq for (seq,) in signed]


def test_agents_read_only_their_own_receipts(
    client: TestClient[Any], agent: Key, make_key: KeyFactory
) -> None:
    receipt_id = disclose_everything(client, agent)["context"]["receipt_id"]
    own = client.get(f"/v1/receipts/{receipt_id}", headers=agent.headers)
    assert own.status_code == 200
    # Its row only: the body is the whole ledger, which names what the policy withheld.
    assert own.json()["receipt_id"] == receipt_id
    assert own.json()["body"] is None and own.json()["envelope"] is None
    auditor = make_key(role="auditor")
    whole = client.get(f"/v1/receipts/{receipt_id}", headers=auditor.headers).json()
    assert whole["body"]["receipt_id"] == receipt_id and whole["envelope"] is not None
    assert whole["bundle_sha256"] == own.json()["bundle_sha256"]
    other_agent = make_key(agent_id="agent-2")
    assert client.get(f"/v1/receipts/{receipt_id}", headers=other_agent.headers).status_code == 404
    assert client.get("/v1/receipts", headers=agent.headers).status_code == 403
    foreign = make_key(tenant="globex", role="auditor")
    assert client.get(f"/v1/receipts/{receipt_id}", headers=foreign.headers).status_code == 404


def test_server_verification_and_proof(
    client: TestClient[Any], agent: Key, make_key: KeyFactory, settings: Settings
) -> None:
    receipt_id = disclose_everything(client, agent)["search"]["receipt_id"]
    auditor = make_key(role="auditor")
    verified = client.get(f"/v1/receipts/{receipt_id}/verify", headers=auditor.headers).json()
    assert verified["valid"], verified
    assert {c["name"] for c in verified["checks"]} == {
        "canonical",
        "signature",
        "leaf",
        "index",
        "chain",
        "inclusion",
    }
    proof = client.get(f"/v1/receipts/{receipt_id}/proof", headers=auditor.headers).json()
    keyring = Keyring.load(settings.data_dir / "keys" / "keyring.json")
    checkpoint = verify_checkpoint(proof["checkpoint"], keyring.checkpoint_keys())
    verify_inclusion(
        bytes.fromhex(proof["leaf"]), proof["leaf_index"], checkpoint.size,
        [bytes.fromhex(h) for h in proof["hashes"]], checkpoint.root,
    )  # fmt: skip
    note = client.get("/v1/log/checkpoint", headers=auditor.headers)
    assert note.status_code == 200 and note.text.startswith("ctxgw/acme\n")


def test_export_verifies_offline_with_only_the_keyring(
    client: TestClient[Any], agent: Key, make_key: KeyFactory, settings: Settings, tmp_path: Path
) -> None:
    context = disclose_everything(client, agent)["context"]
    auditor = make_key(role="auditor")
    export = client.get("/v1/receipts/export", headers=auditor.headers)
    assert export.status_code == 200
    lines = export.text.splitlines()
    assert len(lines) == 5 and lines[-1].startswith('{"checkpoint"')
    (tmp_path / "export.jsonl").write_text(export.text)
    (tmp_path / "bundle.txt").write_bytes(context["bundle"].encode())
    keyring = str(settings.data_dir / "keys" / "keyring.json")
    command = [sys.executable, "-m", "receipts", "verify", str(tmp_path / "export.jsonl"),
               "--keyring", keyring, "--bundle", str(tmp_path / "bundle.txt"),
               "--receipt", context["receipt_id"]]  # fmt: skip
    ok = subprocess.run(command, capture_output=True, text=True, check=False)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    (tmp_path / "bundle.txt").write_bytes(context["bundle"].encode() + b" ")
    tampered = subprocess.run(command, capture_output=True, text=True, check=False)
    assert tampered.returncode == 1 and "bundle_mismatch" in tampered.stdout + tampered.stderr


def test_receipts_are_append_only(
    client: TestClient[Any], agent: Key, make_key: KeyFactory, database_url: str
) -> None:
    disclose_everything(client, agent)
    auditor = make_key(role="auditor")
    assert client.get("/v1/log/checkpoint", headers=auditor.headers).status_code == 200
    with psycopg.connect(database_url, autocommit=True) as conn:
        for statement in ("UPDATE receipts SET kind = 'x'", "DELETE FROM receipts", "TRUNCATE receipts",
                          "UPDATE receipt_signatures SET envelope = '{}'",
                          "DELETE FROM receipt_signatures", "TRUNCATE receipt_signatures",
                          "UPDATE checkpoints SET note = 'x'", "DELETE FROM checkpoints"):  # fmt: skip
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(statement)
        conn.execute("SET ROLE ctxgw_app")
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="must be owner"):
            conn.execute("ALTER TABLE receipts DISABLE TRIGGER receipts_append_only")


def test_superuser_edit_with_triggers_off_is_caught(
    client: TestClient[Any], agent: Key, make_key: KeyFactory, database_url: str
) -> None:
    receipt_id = disclose_everything(client, agent)["fetch"]["receipt_id"]
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("ALTER TABLE receipts DISABLE TRIGGER receipts_append_only")
        conn.execute(
            "UPDATE receipts SET body = overlay(body placing 'X'::bytea from 20 for 1)"
            " WHERE receipt_id = %s",
            (receipt_id,),
        )
        conn.execute("ALTER TABLE receipts ENABLE ALWAYS TRIGGER receipts_append_only")
    auditor = make_key(role="auditor")
    verified = client.get(f"/v1/receipts/{receipt_id}/verify", headers=auditor.headers).json()
    assert not verified["valid"]
    failed = {c["name"]: c["code"] for c in verified["checks"] if not c["ok"]}
    assert failed["signature"] == "signature_mismatch"
    assert failed["leaf"] == "proof_invalid"


def test_fail_closed_when_the_receipt_cannot_be_written(
    client: TestClient[Any], agent: Key, database_url: str
) -> None:
    seed(client, agent)
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("REVOKE INSERT ON receipts FROM ctxgw_app")
    response = client.post("/v1/context", json={"task": "roll back"}, headers=agent.headers)
    assert response.status_code == 503
    assert "bundle" not in response.json()
    assert response.json()["code"] == "receipt_unavailable"
    # What failed, in our words; the driver's ("permission denied for table …") stay in the log.
    assert response.json()["detail"] == (
        "the receipt could not be written; nothing was disclosed (fail closed)"
    )
    assert int(response.headers["retry-after"]) > 0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_concurrent_disclosures_make_a_gapless_chain(
    settings: Settings, make_key: KeyFactory
) -> None:
    agent = make_key()
    other = make_key(tenant="globex")
    async with AsyncTestClient(app=create_app(settings)) as client:

        async def ask(key: Key, n: int) -> int:
            response = await client.post(
                "/v1/search", json={"query": f"question {n}"}, headers=key.headers
            )
            return response.status_code

        statuses = await asyncio.gather(*(ask(agent if n % 2 else other, n) for n in range(24)))
    assert set(statuses) == {200}
    with psycopg.connect(settings.database_url or "") as conn:
        rows = conn.execute(
            "SELECT tenant_id, seq, body, prev, leaf FROM receipts ORDER BY tenant_id, seq"
        ).fetchall()
    by_tenant: dict[str, list[tuple[int, bytes, bytes, bytes]]] = {}
    for tenant, seq, body, prev, leaf in rows:
        by_tenant.setdefault(tenant, []).append((seq, bytes(body), bytes(prev), bytes(leaf)))
    for chain in by_tenant.values():
        assert [seq for seq, *_ in chain] == list(range(1, 13))
        previous = bytes(32)
        for seq, body, prev, leaf in chain:
            assert prev == previous and decode_body(body)["log"]["seq"] == seq
            previous = leaf


def test_checkpoints_are_made_in_the_background(
    settings: Settings, make_key: KeyFactory, database_url: str
) -> None:
    fast = dataclasses.replace(settings, checkpoint_interval_seconds=0.2)
    agent = make_key()
    with TestClient(app=create_app(fast)) as client:
        assert (
            client.post("/v1/search", json={"query": "x"}, headers=agent.headers).status_code == 200
        )
        deadline = time.monotonic() + 10
        size = None
        while time.monotonic() < deadline and size is None:
            with psycopg.connect(database_url) as conn:
                row = conn.execute("SELECT max(size) FROM checkpoints").fetchone()
            size = row[0] if row else None
            time.sleep(0.1)
    assert size == 1


def test_a_filtered_export_proves_each_line_offline(
    client: TestClient[Any], agent: Key, make_key: KeyFactory, settings: Settings
) -> None:
    """`?kind=` (any filter) exports only matching receipts, each with its inclusion proof to
    the checkpoint at the end; an offline verifier proves every one (and says the export is not
    the whole log). Proofs come from one hashed tree (receipts.MerkleTree)."""
    for _ in range(3):
        disclose_everything(client, agent)
    auditor = make_key(role="auditor")
    export = client.get("/v1/receipts/export?kind=fetch", headers=auditor.headers)
    assert export.status_code == 200, export.text
    lines = export.text.splitlines()
    assert len(lines) == 4 and lines[-1].startswith('{"checkpoint"')
    keyring = Keyring.load(settings.data_dir / "keys" / "keyring.json")
    report = verify_export(lines, keyring)
    assert report.receipts == 3 and report.proven == 3 and not report.complete
    assert report.checkpoint is not None and report.checkpoint.size == 12
    # A proof that does not lead to the checkpoint's root is caught.
    tampered = [*lines]
    item = json.loads(tampered[1])
    item["inclusion_proof"]["hashes"].reverse()
    tampered[1] = json.dumps(item)
    with pytest.raises(VerificationError):
        verify_export(tampered, keyring)


def test_a_body_is_stored_once_and_read_back_in_its_envelope(
    client: TestClient[Any], agent: Key, make_key: KeyFactory, settings: Settings, database_url: str
) -> None:
    """The DSSE payload is the body: the row keeps it once (`body`), its envelope the
    signatures, and the API gives the whole envelope again, which verifies offline."""
    receipt_id = disclose_everything(client, agent)["context"]["receipt_id"]
    with psycopg.connect(database_url) as conn:
        stored = conn.execute(
            "SELECT bool_or(envelope ? 'payload'), count(*) FROM receipt_signatures WHERE tenant_id = %s",
            (agent.tenant_id,),
        ).fetchone()
    assert stored is not None and stored[0] is False and stored[1] >= 4
    auditor = make_key(role="auditor")
    receipt = client.get(f"/v1/receipts/{receipt_id}", headers=auditor.headers).json()
    envelope = Envelope.from_json(receipt["envelope"])
    assert decode_body(envelope.payload) == receipt["body"]
    keyring = Keyring.load(settings.data_dir / "keys" / "keyring.json")
    verify_receipt(envelope, agent.tenant_id, keyring.public())


def test_rows_stored_with_their_payload_read_the_same() -> None:
    body = b'{"a":1}'
    whole = {
        "payload": b64encode(body),
        "payloadType": "t",
        "signatures": [{"keyid": "k", "sig": "c2ln"}],
    }
    assert stored_envelope(whole, body) == {"payloadType": "t", "signatures": whole["signatures"]}
    # A payload that is not the body is kept, for verification to report.
    assert stored_envelope(whole, b"other") == whole

    def row(envelope: dict[str, Any]) -> ReceiptRow:
        return ReceiptRow(
            tenant_id="t", seq=1, receipt_id="r", kind="context", agent_id=None, key_id="k",
            issued_at=datetime(2026, 11, 30, tzinfo=UTC), body=body, envelope=envelope, leaf=b"",
            bundle_sha256=None, policy_digest=None, parent_receipt_id=None, disclosed_ids=[],
        )  # fmt: skip

    assert row(whole).envelope == whole
    assert row(stored_envelope(whole, body)).envelope == whole
