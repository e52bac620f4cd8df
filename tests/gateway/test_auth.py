"""Identity comes from the API key: missing/wrong/revoked keys are 401, wrong role 403, another
tenant's object 404."""

from __future__ import annotations

from typing import Any

import psycopg
from litestar.testing import TestClient

from gateway.store.keys import revoke_key
from tests.conftest import Key, KeyFactory
from tests.gateway.test_memories_write import memory, write


def test_missing_key_is_401(client: TestClient[Any]) -> None:
    response = client.post("/v1/memories", json=memory())
    assert response.status_code == 401
    assert response.json()["code"] == "missing_credentials"
    assert response.headers["www-authenticate"].startswith("Bearer")


def test_malformed_and_wrong_keys_are_401(client: TestClient[Any], agent: Key) -> None:
    other_last = "B" if agent.key.endswith("A") else "A"  # a different secret, same shape
    for header in ("Bearer nope", "Basic abc", agent.key, "Bearer " + agent.key[:-1] + other_last):
        response = client.post("/v1/memories", json=memory(), headers={"Authorization": header})
        assert response.status_code == 401, header
        assert response.json()["code"] == "invalid_credentials"


def test_revoked_key_is_401(client: TestClient[Any], agent: Key, database_url: str) -> None:
    assert write(client, agent).status_code == 201
    with psycopg.connect(database_url, autocommit=True) as conn:
        assert revoke_key(conn, agent.key_id)
    response = write(client, agent)
    assert response.status_code == 401
    assert response.json()["code"] == "revoked_credentials"


def test_wrong_role_is_403(client: TestClient[Any], make_key: KeyFactory) -> None:
    auditor = make_key(role="auditor")
    response = write(client, auditor)
    assert response.status_code == 403
    assert response.json()["code"] == "wrong_role"


def test_identity_fields_in_the_body_are_rejected(client: TestClient[Any], agent: Key) -> None:
    response = write(client, agent, tenant_id="globex", agent_id="someone-else")
    assert response.status_code == 422
    fields = {e["field"] for e in response.json()["errors"]}
    assert fields == {"tenant_id", "agent_id"}


def test_another_tenants_memory_is_404_everywhere(
    client: TestClient[Any], agent: Key, make_key: KeyFactory
) -> None:
    memory_id = write(client, agent).json()["memory_id"]
    other = make_key(tenant="globex")
    fetched = client.post("/v1/fetch", json={"ids": [memory_id]}, headers=other.headers)
    assert fetched.status_code == 200
    body = fetched.json()
    assert (body["memories"], body["withheld"], body["missing"]) == ([], [], [memory_id])
    deleted = client.request(
        "DELETE", f"/v1/memories/{memory_id}", json={"reason": "x"}, headers=other.headers
    )
    assert deleted.status_code == 404


def test_namespace_scoped_key_cannot_read_other_namespaces(
    client: TestClient[Any], agent: Key, make_key: KeyFactory
) -> None:
    memory_id = write(client, agent, namespace="hr").json()["memory_id"]
    scoped = make_key(namespaces=("ops",))
    fetched = client.post("/v1/fetch", json={"ids": [memory_id]}, headers=scoped.headers)
    assert fetched.json()["missing"] == [memory_id]


def test_a_key_declares_only_its_purposes(client: TestClient[Any], make_key: KeyFactory) -> None:
    scoped = make_key(purposes=["support"])
    ok = client.post(
        "/v1/context", json={"task": "x", "purpose": "support"}, headers=scoped.headers
    )
    assert ok.status_code == 200
    other = client.post(
        "/v1/search", json={"query": "x", "purpose": "sales"}, headers=scoped.headers
    )
    assert other.status_code == 403 and other.json()["code"] == "purpose_forbidden"
