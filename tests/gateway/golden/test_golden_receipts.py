"""The golden receipts still hold, in every set checked in (`golden.SETS`, each test run on
each): each body is in canonical form and decodes as its kind's typed members that encode back
to its bytes; the log verifies offline with the golden keyring (signatures, leaves, the prev
chain, the Merkle root of the signed checkpoint); the dump loads into a fresh database exactly;
and every replayable receipt replays exactly through the real app: the same bundle bytes, or,
for the bundle whose memory was erased since, the reason it cannot be.

Golden data comes from the code before the change it checks, so each set was made from one
commit by `make_golden` (see its docstring): `data/` at 58a830a, before receipt bodies were
typed, with bundles of the four assemblers and session contexts of the four layouts it had;
`data_d3b27ee/` at d3b27ee, with a bundle of every assembler and a session context of every
layout in the registries (`gateway.core.versions`). The newest set must cover every version
the registries list: a version added without golden data fails here.

Opt-in (`CTXGW_GOLDEN_SAME_BYTES=1`): the code at hand, run through the same scenario, writes
the newest set's bytes again (for a change that promises identical bytes)."""

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

from gateway.core.versions import ASSEMBLERS, SESSION_LAYOUTS
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
    FIRST,
    NEWEST,
    SETS,
    TENANT,
    GoldenReceipt,
    GoldenSet,
    derived_keys,
    dump_lines,
    golden_bodies,
    golden_index,
    golden_keyring,
    made_from,
)
from tests.gateway.golden.make_golden import make_golden
from tests.gateway.golden.tables import dump_tenant, load_dump

# How each kind is rebuilt on replay (the others are not replayed).
REPLAYED = {"context": "bundle", "replay": "bundle", "session_context": "session", "refusal": "refusal"}  # fmt: skip
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
# The assemblers and the layouts each set holds a bundle and a session context of: the older
# sets what their commits had, the newest every version the gateway replays (read from the
# registries, so that a version added without golden data fails: make a set at its commit).
VERSIONS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    FIRST.name: (
        frozenset({"assemble/2026-12-01.1", "assemble/2026-12-02.1", "assemble/2026-12-02.2", "assemble/2026-12-02.3"}),
        frozenset({"session/2026-12-01.1", "session/2026-12-02.1", "session/2026-12-02.2", "session/2026-12-03.1"}),
    ),
    NEWEST.name: (frozenset(ASSEMBLERS.by_version), frozenset(SESSION_LAYOUTS.by_version)),
}  # fmt: skip


@pytest.fixture(params=SETS, ids=[golden.name for golden in SETS])
def golden(request: pytest.FixtureRequest) -> GoldenSet:
    """Each golden set checked in: every test below runs on each."""
    chosen: GoldenSet = request.param
    return chosen


def _rows(golden: GoldenSet, table: str) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in dump_lines(golden)]
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


def test_every_golden_body_is_in_canonical_form(golden: GoldenSet) -> None:
    """RFC 8785 is the form: decoding a body and encoding it again gives its bytes back."""
    bodies = golden_bodies(golden)
    assert bodies
    for receipt_id, kind, body in bodies:
        decoded = json.loads(body)
        assert rfc8785.dumps(decoded) == body, receipt_id
        assert (decoded["receipt_id"], decoded["kind"]) == (receipt_id, kind)


def test_every_golden_body_decodes_as_its_kind_and_encodes_back(golden: GoldenSet) -> None:
    """The typed members of each kind (`Kind.read`), encoded again beside the header the
    recorder writes, give the signed bytes back."""
    for receipt_id, kind, body in golden_bodies(golden):
        decoded = json.loads(body)
        members = {name: value for name, value in decoded.items() if name not in HEADER}
        typed = kind_named(kind).read(members)
        header = {name: decoded[name] for name in HEADER}
        assert rfc8785.dumps({**msgspec.to_builtins(typed), **header}) == body, receipt_id


def test_the_index_names_every_golden_receipt_and_every_version(golden: GoldenSet) -> None:
    assert made_from(golden).startswith(golden.commit)
    index = golden_index(golden)
    bodies = golden_bodies(golden)
    assert [(e.receipt_id, e.kind) for e in index] == [(i, k) for i, k, _ in bodies]
    assert [e.seq for e in index] == list(range(1, len(index) + 1))
    # A receipt of every kind the gateway writes; those it rebuilds are replayed below.
    assert {e.kind for e in index} == set(KIND_NAMES)
    assert {kind.name: kind.replay_as for kind in KINDS if kind.replay_as is not None} == REPLAYED
    assemblers, layouts = VERSIONS[golden.name]
    assert {e.assembler for e in index if e.kind == "context"} == assemblers
    assert {e.layout for e in index if e.kind == "session_context"} == layouts
    for entry in index:
        expected = "identical" if entry.kind in REPLAYED else None
        assert entry.replay in (expected, "memory_erased"), entry


def test_the_golden_keyring_files_are_the_derived_keys(golden: GoldenSet) -> None:
    keyring, private = derived_keys()
    assert golden_keyring(golden).to_json() == keyring.to_json()
    assert Keyring.load(golden.public_keyring).to_json() == keyring.public().to_json()
    assert golden.ed25519_pem.read_bytes().startswith(b"-----BEGIN PRIVATE KEY-----")
    assert keyring.ed25519[0].public_key == private.public_key()


def test_the_golden_log_verifies_offline(golden: GoldenSet) -> None:
    """Each envelope on its own (with the secret keyring and with the public one), then the
    whole log: the prev chain, the leaves and the checkpoint's Merkle root."""
    keyring = golden_keyring(golden)
    public = Keyring.load(golden.public_keyring)
    rows = sorted(_rows(golden, "receipts"), key=lambda row: row["seq"])
    bodies = {receipt_id: body for receipt_id, _, body in golden_bodies(golden)}
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
    [log] = _rows(golden, "receipt_logs")
    assert (log["size"], _hex(log["head"])) == (len(rows), previous)
    report = verify_export(_export(rows, golden.checkpoint.read_text(encoding="utf-8")), keyring)
    assert report.complete and report.receipts == len(rows) == report.proven
    assert report.links == len(rows) - 1 and report.tenant_id == TENANT


@pytest.fixture
def golden_client(
    golden: GoldenSet, database_url: str, app_database_url: str, tmp_path: Path
) -> Iterator[TestClient[Litestar]]:
    """The real app on a fresh database holding the golden dump, signing with the golden keys."""
    with psycopg.connect(database_url) as conn:
        load_dump(conn, dump_lines(golden))
    settings = Settings(
        database_url=app_database_url,
        data_dir=tmp_path / "data",
        pool_min_size=1,
        pool_max_size=4,
        receipt_keyring=golden.keyring,
        receipt_ed25519_key=golden.ed25519_pem,
    )
    with TestClient(app=create_app(settings)) as client:
        yield client


def test_the_dump_loads_exactly(golden: GoldenSet, database_url: str) -> None:
    """Loaded into a fresh database, the rows dump again to the same values, digit for digit
    (columns a later migration adds aside)."""
    lines = dump_lines(golden)
    with psycopg.connect(database_url) as conn:
        loaded = load_dump(conn, lines)
        conn.commit()
        again = dump_tenant(conn, TENANT)
    assert loaded["receipts"] == len(golden_bodies(golden))
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
    golden: GoldenSet, golden_client: TestClient[Litestar], make_key: KeyFactory
) -> None:
    auditor = make_key(tenant=TENANT, role="auditor", agent_id="golden-auditor")
    bodies = {receipt_id: body for receipt_id, _, body in golden_bodies(golden)}
    index = golden_index(golden)
    replayable = [entry for entry in index if entry.replay is not None]
    assert len(replayable) >= 20
    failures = {
        f"{entry.seq} {entry.kind} {entry.receipt_id} ({entry.what})": why
        for entry in replayable
        if (why := _replayed(golden_client, auditor, entry, bodies[entry.receipt_id])) is not None
    }
    assert not failures, "\n".join(f"{what}: {why}" for what, why in failures.items())
    # The replays' own receipts continue the golden log, signed with the golden keys.
    export = golden_client.get("/v1/receipts/export", headers=auditor.headers)
    report = verify_export(export.text.splitlines(), golden_keyring(golden), tenant_id=TENANT)
    assert report.complete and report.receipts == len(index) + len(replayable)


@pytest.mark.skipif(
    os.environ.get("CTXGW_GOLDEN_SAME_BYTES") != "1",
    reason="opt-in (CTXGW_GOLDEN_SAME_BYTES=1): holds while a change promises the same bytes",
)
def test_the_code_at_hand_writes_the_same_bytes(tmp_path: Path) -> None:
    """The scenario run again by the code at hand writes the newest set byte for byte: every
    new receipt is what the code before it wrote. For a change that promises identical bytes
    (a refactor); a new assembler version or layout is meant to differ."""
    make_golden(tmp_path, "the code at hand")
    for path in NEWEST.directory.iterdir():
        if path != NEWEST.index:
            assert (tmp_path / path.name).read_bytes() == path.read_bytes(), path.name
    made = GoldenSet(tmp_path, "the code at hand")
    made_index, newest_index = (json.loads(d.index.read_text()) for d in (made, NEWEST))
    assert {**made_index, "made_from": None} == {**newest_index, "made_from": None}
