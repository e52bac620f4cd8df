"""The write path through real HTTP and a real PostgreSQL."""

from __future__ import annotations

from typing import Any

import psycopg
from litestar.testing import TestClient

from tests.conftest import Key, KeyFactory


def memory(**overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "namespace": "ops",
        "heading": "Deploys happen on Tuesdays",
        "content": "The release train leaves every Tuesday at 10:00 UTC.",
        "memory_type": "procedural",
        "confidence": 0.9,
    }
    body.update(overrides)
    return body


def write(client: TestClient[Any], key: Key, **overrides: Any) -> Any:
    return client.post("/v1/memories", json=memory(**overrides), headers=key.headers)


def test_write_then_fetch_round_trips_every_field(client: TestClient[Any], agent: Key) -> None:
    response = write(
        client,
        agent,
        labels=["release", "ops"],
        source_type="chat",
        source_ref="thread-9",
        expires_at="2099-01-01T00:00:00Z",
    )
    assert response.status_code == 201, response.text
    memory_id = response.json()["memory_id"]
    fetched = client.post("/v1/fetch", json={"ids": [memory_id]}, headers=agent.headers)
    assert fetched.status_code == 200
    [stored] = fetched.json()["memories"]
    assert stored["heading"] == "Deploys happen on Tuesdays"
    assert stored["labels"] == ["ops", "release"]
    assert stored["confidence"] == 0.9
    assert stored["agent_id"] == "agent-1"
    assert stored["embedding_model"] == "hash-v2-384"
    assert stored["tokens"] > stored["heading_tokens"] > 0
    assert stored["expires_at"].startswith("2099-01-01")


def test_special_token_text_is_ordinary_content(client: TestClient[Any], agent: Key) -> None:
    response = write(client, agent, content="before <|endoftext|> after <|fim_prefix|>")
    assert response.status_code == 201
    [stored] = client.post(
        "/v1/fetch", json={"ids": [response.json()["memory_id"]]}, headers=agent.headers
    ).json()["memories"]
    assert stored["content"] == "before <|endoftext|> after <|fim_prefix|>"


def test_idempotent_retry_returns_the_first_write(
    client: TestClient[Any], agent: Key, database_url: str
) -> None:
    first = write(client, agent, idempotency_key="op-1")
    again = write(client, agent, idempotency_key="op-1")
    assert first.status_code == 201 and again.status_code == 200
    assert first.json()["memory_id"] == again.json()["memory_id"]
    different = write(client, agent, idempotency_key="op-1", content="something else")
    assert different.status_code == 409
    assert different.json()["code"] == "idempotency_conflict"
    with psycopg.connect(database_url) as conn:
        assert conn.execute("SELECT count(*) FROM memories").fetchone() == (1,)


def test_supersede_writes_new_version_and_retires_old(client: TestClient[Any], agent: Key) -> None:
    old = write(client, agent).json()["memory_id"]
    new = write(client, agent, content="Now on Wednesdays.", supersedes=old)
    assert new.status_code == 201
    new_id = new.json()["memory_id"]
    body = client.post("/v1/fetch", json={"ids": [old, new_id]}, headers=agent.headers).json()
    assert [m["memory_id"] for m in body["memories"]] == [new_id]
    assert body["memories"][0]["supersedes"] == old
    assert body["withheld"] == [{"memory_id": old, "reason": "superseded", "detail": ""}]
    again = write(client, agent, content="Thursday?", supersedes=old)
    assert again.status_code == 409
    assert again.json()["code"] == "already_superseded"


def test_supersede_deleted_or_foreign_memory(
    client: TestClient[Any], agent: Key, make_key: KeyFactory
) -> None:
    victim = write(client, agent).json()["memory_id"]
    deleted = client.request(
        "DELETE", f"/v1/memories/{victim}", json={"reason": "wrong"}, headers=agent.headers
    )
    assert deleted.status_code == 200
    conflict = write(client, agent, supersedes=victim)
    assert conflict.status_code == 409 and conflict.json()["code"] == "memory_deleted"

    other = make_key(tenant="globex")
    foreign = write(client, other, supersedes=write(client, agent).json()["memory_id"])
    assert foreign.status_code == 404


def test_delete_is_soft_and_once(client: TestClient[Any], agent: Key, database_url: str) -> None:
    memory_id = write(client, agent).json()["memory_id"]
    path = f"/v1/memories/{memory_id}"
    assert (
        client.request(
            "DELETE", path, json={"reason": "obsolete"}, headers=agent.headers
        ).status_code
        == 200
    )
    twice = client.request("DELETE", path, json={"reason": "again"}, headers=agent.headers)
    assert twice.status_code == 409
    with psycopg.connect(database_url) as conn:
        row = conn.execute("SELECT deleted_reason, content FROM memories").fetchone()
    assert row is not None and row[0] == "obsolete" and row[1].startswith("The release")


def test_batch_gives_per_item_results(client: TestClient[Any], agent: Key) -> None:
    first = write(client, agent).json()["memory_id"]
    client.request("DELETE", f"/v1/memories/{first}", json={"reason": "x"}, headers=agent.headers)
    items = [memory(heading=f"item {i}") for i in range(3)] + [memory(supersedes=first)]
    response = client.post("/v1/memories/batch", json={"items": items}, headers=agent.headers)
    assert response.status_code == 200
    body = response.json()
    assert [i["status"] for i in body["items"]] == [201, 201, 201, 409]
    assert body["written"] == 3 and body["failed"] == 1


def test_batch_with_a_bad_item_writes_nothing(
    client: TestClient[Any], agent: Key, database_url: str
) -> None:
    items = [memory(), memory(heading="x" * 201), memory(confidence=2)]
    response = client.post("/v1/memories/batch", json={"items": items}, headers=agent.headers)
    assert response.status_code == 422
    fields = {e["field"] for e in response.json()["errors"]}
    assert fields == {"items/1/heading", "items/2/confidence"}
    with psycopg.connect(database_url) as conn:
        assert conn.execute("SELECT count(*) FROM memories").fetchone() == (0,)


def test_batch_over_100_items_is_rejected(client: TestClient[Any], agent: Key) -> None:
    response = client.post(
        "/v1/memories/batch", json={"items": [memory()] * 101}, headers=agent.headers
    )
    assert response.status_code == 422
    assert response.json()["errors"][0]["field"] == "items"
