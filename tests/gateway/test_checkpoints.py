"""Checkpoints grow with the log: each stores the Merkle tree's right edge, so the next reads and
hashes only the receipts appended since (gateway.usecases.checkpoints)."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest
from litestar.testing import TestClient

from gateway.settings import Settings
from gateway.store import receipts as receipt_store
from receipts import Keyring, root, verify_checkpoint
from tests.conftest import Key, KeyFactory
from tests.gateway.test_receipts_api import disclose_everything


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

    def whole_log(*args: object) -> list[bytes]:
        raise AssertionError("the whole log was read for a checkpoint that has an edge")

    with monkeypatch.context() as patch:
        patch.setattr(receipt_store, "leaves", whole_log)
        second = _checkpoint(client, auditor, keyring)
    leaves = _all_leaves(database_url, agent.tenant_id)
    assert second.size == len(leaves) == first.size + 3
    assert second.root == root(leaves)


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
