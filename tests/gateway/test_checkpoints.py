"""Checkpoints grow with the log: each stores the Merkle tree's right edge, so the next reads and
hashes only the receipts appended since (gateway.usecases.receiptlog.checkpoints)."""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from typing import Any

import psycopg
import pytest
from litestar.testing import TestClient

from gateway.shell.settings import Settings
from gateway.store import log_tree as receipt_store
from receipts import Keyring, leaf_hash, root, verify_checkpoint, verify_export, verify_inclusion
from receipts.merkle import TILE_SIZE, tile_roots
from tests.conftest import Key, KeyFactory
from tests.gateway.test_receipts_api import disclose_everything
from tests.spying import spy_on


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """No periodic checkpoint in the background: what the spies see is the requests' work, and
    a failure in a spy cannot be swallowed by the worker's retry loop."""
    return dataclasses.replace(settings, checkpoint_interval_seconds=3600.0)


def _checkpoint(client: TestClient[Any], auditor: Key, keyring: Keyring) -> Any:
    response = client.get("/v1/log/checkpoint", headers=auditor.headers)
    assert response.status_code == 200, response.text
    return verify_checkpoint(response.text, keyring.checkpoint_keys())


def _all_leaves(database_url: str, tenant_id: str) -> list[bytes]:
    with psycopg.connect(database_url) as conn:
        rows = conn.execute(
            "SELECT leaf FROM receipts WHERE tenant_id = %s ORDER BY seq", (tenant_id,)
        ).fetchall()
    return [bytes(row[0]) for row in rows]


def test_a_checkpoint_hashes_only_what_was_appended_since_the_last(
    client: TestClient[Any],
    agent: Key,
    make_key: KeyFactory,
    settings: Settings,
    database_url: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    auditor = make_key(role="auditor")
    keyring = Keyring.load(settings.data_dir / "keys" / "keyring.json")
    disclose_everything(client, agent)
    first = _checkpoint(client, auditor, keyring)
    for _ in range(3):
        client.post("/v1/context", json={"task": "roll back"}, headers=agent.headers)
    whole: list[object] = []
    read: list[tuple[int, int]] = []

    with monkeypatch.context() as patch:
        spy_on(patch, receipt_store, "leaves", _noting_whole_log(whole))
        spy_on(patch, receipt_store, "leaves_between", _counting_leaves_between(read))
        second = _checkpoint(client, auditor, keyring)
    leaves = _all_leaves(database_url, agent.tenant_id)
    assert second.size == len(leaves) == first.size + 3
    assert second.root == root(leaves)
    # It read the three receipts appended since, and only those: from the stored edge.
    assert read == [(first.size + 1, first.size + 3)]
    assert whole == []


@pytest.mark.parametrize("edge", [None, b"\x00" * 32], ids=["none-stored", "corrupt"])
def test_without_a_usable_edge_the_checkpoint_is_rebuilt_from_every_leaf(
    client: TestClient[Any],
    agent: Key,
    make_key: KeyFactory,
    settings: Settings,
    database_url: str,
    edge: bytes | None,
) -> None:
    """A checkpoint written before edges were stored (NULL), or one whose edge does not give its
    own root: the next checkpoint reads every leaf instead, and is right."""
    auditor = make_key(role="auditor")
    keyring = Keyring.load(settings.data_dir / "keys" / "keyring.json")
    disclose_everything(client, agent)
    size = len(_all_leaves(database_url, agent.tenant_id))
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO checkpoints (tenant_id, size, root, note, frontier)"
            " VALUES (%s, %s, %s, 'an older checkpoint', %s)",
            (agent.tenant_id, size, root(_all_leaves(database_url, agent.tenant_id)), edge),
        )
    client.post("/v1/context", json={"task": "roll back"}, headers=agent.headers)
    checkpoint = _checkpoint(client, auditor, keyring)
    leaves = _all_leaves(database_url, agent.tenant_id)
    assert (checkpoint.size, checkpoint.root) == (len(leaves), root(leaves))


def _append_fillers(database_url: str, tenant_id: str, key_id: str, count: int) -> list[str]:
    """Append `count` receipts straight into the tenant's log (their leaves are all a proof
    reads), chained like real ones; their receipt ids."""
    with psycopg.connect(database_url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT size, head FROM receipt_logs WHERE tenant_id = %s", (tenant_id,)
        ).fetchone()
        assert row is not None
        size, head = int(row[0]), bytes(row[1])
        rows = []
        for seq in range(size + 1, size + count + 1):
            body = f"filler receipt {seq}".encode()
            leaf = leaf_hash(body)
            rows.append((tenant_id, seq, f"filler-{seq}", key_id, body, head, leaf))
            head = leaf
        with conn.transaction():
            conn.cursor().executemany(
                "INSERT INTO receipts (tenant_id, seq, receipt_id, kind, key_id, issued_at, body,"
                " prev, leaf) VALUES (%s, %s, %s, 'search', %s, now(), %s, %s, %s)",
                rows,
            )
            conn.execute(
                "UPDATE receipt_logs SET size = %s, head = %s WHERE tenant_id = %s",
                (size + count, head, tenant_id),
            )
    return [str(r[2]) for r in rows]


def _counting_leaves_between(
    read: list[tuple[int, int]],
) -> Callable[[Any, str, int, int], Awaitable[list[bytes]]]:
    """`receipt_store.leaves_between` noting each (first, last) seq range it reads in `read`."""
    real_between = receipt_store.leaves_between

    async def counted(conn: Any, tenant_id: str, first: int, last: int) -> list[bytes]:
        read.append((first, last))
        return await real_between(conn, tenant_id, first, last)

    return counted


def _noting_whole_log(calls: list[object]) -> Callable[..., Awaitable[list[bytes]]]:
    """`receipt_store.leaves` (every leaf of the log) noting each call in `calls`. Noted, not
    raised: a raise could be caught on the way and leave the test passing."""
    real_leaves = receipt_store.leaves

    async def noted(conn: Any, tenant_id: str, size: int) -> list[bytes]:
        calls.append((tenant_id, size))
        return await real_leaves(conn, tenant_id, size)

    return noted


def _proof(client: TestClient[Any], auditor: Key, receipt_id: str, keyring: Keyring) -> None:
    response = client.get(f"/v1/receipts/{receipt_id}/proof", headers=auditor.headers)
    assert response.status_code == 200, response.text
    proof = response.json()
    checkpoint = verify_checkpoint(proof["checkpoint"], keyring.checkpoint_keys())
    verify_inclusion(
        bytes.fromhex(proof["leaf"]), proof["leaf_index"], checkpoint.size,
        [bytes.fromhex(h) for h in proof["hashes"]], checkpoint.root,
    )  # fmt: skip


def test_proofs_are_made_from_tiles_without_reading_the_log(
    client: TestClient[Any],
    agent: Key,
    make_key: KeyFactory,
    settings: Settings,
    database_url: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    auditor = make_key(role="auditor")
    keyring = Keyring.load(settings.data_dir / "keys" / "keyring.json")
    first = disclose_everything(client, agent)["search"]["receipt_id"]
    fillers = _append_fillers(database_url, agent.tenant_id, auditor.key_id, 3 * TILE_SIZE + 10)
    size = len(_all_leaves(database_url, agent.tenant_id))
    assert _checkpoint(client, auditor, keyring).size == size  # the checkpoint stores the tiles
    with psycopg.connect(database_url) as conn:
        stored = [bytes(r[0]) for r in conn.execute(
            "SELECT hash FROM receipt_tiles WHERE tenant_id = %s ORDER BY tile", (agent.tenant_id,)
        )]  # fmt: skip
    assert stored == tile_roots(_all_leaves(database_url, agent.tenant_id))
    assert len(stored) == size // TILE_SIZE == 3

    whole: list[object] = []
    read: list[tuple[int, int]] = []
    with monkeypatch.context() as patch:
        spy_on(patch, receipt_store, "leaves", _noting_whole_log(whole))
        spy_on(patch, receipt_store, "leaves_between", _counting_leaves_between(read))
        for receipt_id in (first, fillers[TILE_SIZE], fillers[len(fillers) // 2], fillers[-1]):
            _proof(client, auditor, receipt_id, keyring)
    assert whole == []
    # Each proof read at most the tile it lies in, and the last (incomplete) tile.
    assert read and all(last - first_seq < TILE_SIZE for first_seq, last in read), read

    with psycopg.connect(database_url) as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
        conn.execute(
            "UPDATE receipt_tiles SET hash = hash WHERE tenant_id = %s", (agent.tenant_id,)
        )


def test_tiles_that_do_not_prove_are_not_trusted(
    client: TestClient[Any],
    agent: Key,
    make_key: KeyFactory,
    settings: Settings,
    database_url: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A wrong stored tile (tiles are derived data, never signed) cannot yield a bad proof: the
    tiled proof is checked against the signed root, and the log's leaves serve instead."""
    auditor = make_key(role="auditor")
    keyring = Keyring.load(settings.data_dir / "keys" / "keyring.json")
    disclose_everything(client, agent)
    fillers = _append_fillers(database_url, agent.tenant_id, auditor.key_id, 2 * TILE_SIZE)
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO receipt_tiles (tenant_id, tile, hash) VALUES (%s, 0, %s)",
            (agent.tenant_id, b"\x07" * 32),
        )
    with caplog.at_level("WARNING", logger="gateway.usecases.audit.verification"):
        _proof(client, auditor, fillers[-1], keyring)
    assert "do not prove" in caplog.text


def test_a_filtered_export_proves_its_lines_from_tiles(
    client: TestClient[Any],
    agent: Key,
    make_key: KeyFactory,
    settings: Settings,
    database_url: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Receipts on both sides of a long stretch of the log: the export reads the tile roots and
    the tiles its lines lie in, never the whole log, and every line proves offline."""
    auditor = make_key(role="auditor")
    keyring = Keyring.load(settings.data_dir / "keys" / "keyring.json")
    disclose_everything(client, agent)
    _append_fillers(database_url, agent.tenant_id, auditor.key_id, 4 * TILE_SIZE)
    _checkpoint(client, auditor, keyring)  # the first checkpoint reads every leaf, once
    disclose_everything(client, agent)
    size = len(_all_leaves(database_url, agent.tenant_id))
    read: list[tuple[int, int]] = []
    counted = _counting_leaves_between(read)

    whole: list[object] = []

    with monkeypatch.context() as patch:
        spy_on(patch, receipt_store, "leaves", _noting_whole_log(whole))
        spy_on(patch, receipt_store, "leaves_between", counted)
        export = client.get("/v1/receipts/export?kind=fetch", headers=auditor.headers)
    assert whole == [] and read, read
    assert export.status_code == 200, export.text
    lines = export.text.splitlines()
    report = verify_export(lines, keyring)
    assert report.receipts == report.proven == 2 and not report.complete
    assert report.checkpoint is not None and report.checkpoint.size == size
    # The receipts since the last checkpoint, the last tile and the first line's tile: not the
    # log's 1,032 leaves.
    assert sum(last - first + 1 for first, last in read) < 2 * TILE_SIZE


def test_a_log_that_ends_on_a_tile_edge_proves_from_tiles_alone(
    client: TestClient[Any],
    agent: Key,
    make_key: KeyFactory,
    settings: Settings,
    database_url: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With every tile complete there is no last tile to read: a proof reads its own tile."""
    auditor = make_key(role="auditor")
    keyring = Keyring.load(settings.data_dir / "keys" / "keyring.json")
    disclose_everything(client, agent)
    real = len(_all_leaves(database_url, agent.tenant_id))
    fillers = _append_fillers(database_url, agent.tenant_id, auditor.key_id, 2 * TILE_SIZE - real)
    assert _checkpoint(client, auditor, keyring).size == 2 * TILE_SIZE
    read: list[tuple[int, int]] = []
    counted = _counting_leaves_between(read)

    with monkeypatch.context() as patch:
        spy_on(patch, receipt_store, "leaves_between", counted)
        _proof(client, auditor, fillers[-1], keyring)
        _proof(client, auditor, fillers[0], keyring)
    assert read == [(TILE_SIZE + 1, 2 * TILE_SIZE), (1, TILE_SIZE)]
