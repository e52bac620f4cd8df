"""The golden receipts (`data/`, written by `make_golden` with the code before receipt bodies were
typed) still hold: each body is in canonical form and decodes as its kind's typed members that
encode back to its bytes; the log verifies offline with the golden keyring (signatures, leaves,
the prev chain, the Merkle root of the signed checkpoint); the dump loads into a fresh database
exactly; and every replayable receipt replays exactly through the real app: the same bundle
bytes, or, for the bundle whose memory was erased since, the reason it cannot be.

Opt-in (`CTXGW_GOLDEN_SAME_BYTES=1`): the code at hand, run through the same scenario, writes
the golden bytes again (for a change that promises identical bytes)."""

from __future__ import annotations

import base64
import hashlib
import json
import os
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import msgspec
import psycopg
import pytest
import rfc8785
from litestar import Litestar
from litestar.testing import TestClient

from gateway.http.app import create_app
from gateway.shell.settings import Settings
from gateway.usecases.receiptlog.kinds import KIND_NAMES, KINDS, kind_named
from receipts import (
    Envelope,
    Keyring,
    checkpoint_line,
    decode_body,
    export_line,
    leaf_hash,
    verify_export,
    verify_receipt,
)
from tests.conftest import Key, KeyFactory
from tests.gateway.golden.golden import (
    CHECKPOINT,
    DATA,
    ED25519_PEM,
    INDEX,
    KEYRING,
    PUBLIC_KEYRING,
    TENANT,
    GoldenReceipt,
    derived_keys,
    dump_lines,
    golden_bodies,
    golden_index,
    golden_keyring,
)
from tests.gateway.golden.make_golden import make_golden
from tests.gateway.golden.tables import dump_tenant, load_dump

# How each kind is rebuilt on replay (the others are not replayed).
REPLAYED = {"context": "bundle", "replay": "bundle", "session_context": "session", "refusal": "refusal"}  # fmt: skip
ASSEMBLERS = {
    "assemble/2026-12-01.1",
    "assemble/2026-12-02.1",
    "assemble/2026-12-02.2",
    "assemble/2026-12-02.3",
}
# What the recorder writes around a kind's members (`gateway.usecases.receiptlog.recorder`).
HEADER = (
    "schema",
    "receipt_id",
    "kind",
    "tenant_id",
    "issued_at",
    "subject",
    "bundle",
    "parent_receipt_id",
    "disclosed_ids",
    "log",
)
LAYOUTS = {"session/2026-12-01.1", "session/2026-12-02.1", "session/2026-12-02.2", "session/2026-12-03.1"}  # fmt: skip


def _rows(table: str) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in dump_lines()]
    return [row["row"] for row in rows if row["table"] == table]


def _hex(value: str) -> bytes:
    return bytes.fromhex(value.removeprefix("\\x"))


def _envelope(row: dict[str, Any]) -> Envelope:
    """A stored receipt's envelope: its signatures (the `envelope` column), its body as payload."""
    payload = base64.b64encode(_hex(row["body"])).decode("ascii")
    return Envelope.from_json({**row["envelope"], "payload": payload})


def _export(rows: list[dict[str, Any]], checkpoint: str) -> list[str]:
    """The log as `GET /v1/receipts/export` writes it: a line per receipt, then the end line."""
    lines = [
        export_line(_envelope(row), row["seq"], _hex(row["leaf"]))
        for row in sorted(rows, key=lambda row: row["seq"])
    ]
    return [*lines, checkpoint_line(checkpoint, len(lines))]


def test_every_golden_body_is_in_canonical_form() -> None:
    """RFC 8785 is the form: decoding a body and encoding it again gives its bytes back."""
    bodies = golden_bodies()
    assert bodies
    for receipt_id, kind, body in bodies:
        decoded = json.loads(body)
        assert rfc8785.dumps(decoded) == body, receipt_id
        assert (decoded["receipt_id"], decoded["kind"]) == (receipt_id, kind)


def test_every_golden_body_decodes_as_its_kind_and_encodes_back() -> None:
    """The typed members of each kind (`Kind.read`), encoded again beside the header the
    recorder writes, give the signed bytes back."""
    for receipt_id, kind, body in golden_bodies():
        decoded = json.loads(body)
        members = {name: value for name, value in decoded.items() if name not in HEADER}
        typed = kind_named(kind).read(members)
        header = {name: decoded[name] for name in HEADER}
        assert rfc8785.dumps({**msgspec.to_builtins(typed), **header}) == body, receipt_id


def test_the_index_names_every_golden_receipt_and_every_version() -> None:
    index = golden_index()
    bodies = golden_bodies()
    assert [(e.receipt_id, e.kind) for e in index] == [(i, k) for i, k, _ in bodies]
    assert [e.seq for e in index] == list(range(1, len(index) + 1))
    # A receipt of every kind the gateway writes; those it rebuilds are replayed below.
    assert {e.kind for e in index} == set(KIND_NAMES)
    assert {kind.name: kind.replay_as for kind in KINDS if kind.replay_as is not None} == REPLAYED
    contexts = [e for e in index if e.kind == "context"]
    assert {e.assembler for e in contexts} == ASSEMBLERS
    assert {e.layout for e in index if e.kind == "session_context"} == LAYOUTS
    for entry in index:
        expected = "identical" if entry.kind in REPLAYED else None
        assert entry.replay in (expected, "memory_erased"), entry


def test_the_golden_keyring_files_are_the_derived_keys() -> None:
    keyring, private = derived_keys()
    assert golden_keyring().to_json() == keyring.to_json()
    assert Keyring.load(PUBLIC_KEYRING).to_json() == keyring.public().to_json()
    assert ED25519_PEM.read_bytes().startswith(b"-----BEGIN PRIVATE KEY-----")
    assert keyring.ed25519[0].public_key == private.public_key()


def test_the_golden_log_verifies_offline() -> None:
    """Each envelope on its own (with the secret keyring and with the public one), then the
    whole log: the prev chain, the leaves and the checkpoint's Merkle root."""
    keyring = golden_keyring()
    public = Keyring.load(PUBLIC_KEYRING)
    rows = sorted(_rows("receipts"), key=lambda row: row["seq"])
    bodies = {receipt_id: body for receipt_id, _, body in golden_bodies()}
    previous = bytes(32)
    for row in rows:
        envelope = _envelope(row)
        body = bodies[row["receipt_id"]]
        assert envelope.payload == body
        verify_receipt(envelope, TENANT, keyring)
        verify_receipt(envelope, TENANT, public)
        decoded = decode_body(body)
        assert _hex(row["leaf"]) == leaf_hash(body)
        assert _hex(row["prev"]) == previous == bytes.fromhex(decoded["log"]["prev"])
        assert (row["seq"], row["kind"]) == (decoded["log"]["seq"], decoded["kind"])
        previous = leaf_hash(body)
    [log] = _rows("receipt_logs")
    assert (log["size"], _hex(log["head"])) == (len(rows), previous)
    report = verify_export(_export(rows, CHECKPOINT.read_text(encoding="utf-8")), keyring)
    assert report.complete and report.receipts == len(rows) == report.proven
    assert report.links == len(rows) - 1 and report.tenant_id == TENANT


@pytest.fixture
def golden_client(
    database_url: str, app_database_url: str, tmp_path: Path
) -> Iterator[TestClient[Litestar]]:
    """The real app on a fresh database holding the golden dump, signing with the golden keys."""
    with psycopg.connect(database_url) as conn:
        load_dump(conn, dump_lines())
    settings = Settings(
        database_url=app_database_url,
        data_dir=tmp_path / "data",
        pool_min_size=1,
        pool_max_size=4,
        receipt_keyring=KEYRING,
        receipt_ed25519_key=ED25519_PEM,
    )
    with TestClient(app=create_app(settings)) as client:
        yield client


def test_the_dump_loads_exactly(database_url: str) -> None:
    """Loaded into a fresh database, the rows dump again to the same values, digit for digit
    (columns a later migration adds aside)."""
    lines = dump_lines()
    with psycopg.connect(database_url) as conn:
        loaded = load_dump(conn, lines)
        conn.commit()
        again = dump_tenant(conn, TENANT)
    assert loaded["receipts"] == len(golden_bodies())
    assert len(again) == len(lines)
    for line, redumped in zip(lines, again, strict=True):
        dumped, now = (json.loads(text, parse_float=Decimal) for text in (line, redumped))
        assert dumped["table"] == now["table"]
        assert dumped["row"] == {name: now["row"][name] for name in dumped["row"]}, line[:120]


def _replayed(
    client: TestClient[Litestar], auditor: Key, entry: GoldenReceipt, body: bytes
) -> str | None:
    """Why the receipt's exact replay is not what its index says; None when it is."""
    response = client.post(
        f"/v1/receipts/{entry.receipt_id}/replay", json={"mode": "exact"}, headers=auditor.headers
    )
    if response.status_code != 200:
        return f"{response.status_code} {response.text}"
    result = response.json()
    recorded = json.loads(body)
    codes = {problem["code"] for problem in result["problems"]}
    if entry.replay == "memory_erased":
        return None if not result["identical"] and "memory_erased" in codes else str(result)
    if not result["identical"] or result["problems"]:
        return f"not identical: {result['problems']}"
    if REPLAYED[entry.kind] == "bundle":
        rebuilt = result["replayed"]["bundle_sha256"]
    elif REPLAYED[entry.kind] == "session":
        rebuilt = hashlib.sha256(result["text"].encode("utf-8")).hexdigest()
    else:
        rebuilt = recorded["bundle"]["sha256"]
        if result["replayed"]["refused"] != recorded["refused"]:
            return f"refused by {result['replayed']['refused']}, not {recorded['refused']}"
    if rebuilt != recorded["bundle"]["sha256"]:
        return f"rebuilt {rebuilt}, recorded {recorded['bundle']['sha256']}"
    return None


def test_every_replayable_golden_receipt_replays_exactly(
    golden_client: TestClient[Litestar], make_key: KeyFactory
) -> None:
    auditor = make_key(tenant=TENANT, role="auditor", agent_id="golden-auditor")
    bodies = {receipt_id: body for receipt_id, _, body in golden_bodies()}
    replayable = [entry for entry in golden_index() if entry.replay is not None]
    assert len(replayable) >= 20
    failures = {
        f"{entry.seq} {entry.kind} {entry.receipt_id} ({entry.what})": why
        for entry in replayable
        if (why := _replayed(golden_client, auditor, entry, bodies[entry.receipt_id])) is not None
    }
    assert not failures, "\n".join(f"{what}: {why}" for what, why in failures.items())
    # The replays' own receipts continue the golden log, signed with the golden keys.
    export = golden_client.get("/v1/receipts/export", headers=auditor.headers)
    report = verify_export(export.text.splitlines(), golden_keyring(), tenant_id=TENANT)
    assert report.complete and report.receipts == len(golden_index()) + len(replayable)


@pytest.mark.skipif(
    os.environ.get("CTXGW_GOLDEN_SAME_BYTES") != "1",
    reason="opt-in (CTXGW_GOLDEN_SAME_BYTES=1): holds while a change promises the same bytes",
)
def test_the_code_at_hand_writes_the_golden_bytes(tmp_path: Path) -> None:
    """The scenario run again by the code at hand writes the golden data byte for byte: every
    new receipt is what the code before it wrote. For a change that promises identical bytes
    (a refactor); a new assembler version or layout is meant to differ."""
    make_golden(tmp_path, "the code at hand")
    for name in (path.name for path in DATA.iterdir() if path.name != INDEX.name):
        assert (tmp_path / name).read_bytes() == (DATA / name).read_bytes(), name
    made, golden = (json.loads((d / INDEX.name).read_text()) for d in (tmp_path, DATA))
    assert {**made, "made_from": None} == {**golden, "made_from": None}
