"""POST /v1/fetch/claims: the live memories of a namespace by claim key, a fetch like any other
(the same answer, judged and receipted as `fetch`), behind the tenant wall and the key's
namespaces, with every bad field reported. Real HTTP through the app, the real PostgreSQL."""

from __future__ import annotations

from typing import Any

from litestar.testing import TestClient

from tests.conftest import Key, KeyFactory
from tests.gateway.test_memories_write import write

PATH = "/v1/fetch/claims"


def _claims(client: TestClient[Any], key: Key, body: dict[str, Any]) -> Any:
    return client.post(PATH, json=body, headers=key.headers)


def test_the_live_version_of_each_claim(
    client: TestClient[Any], agent: Key, make_key: KeyFactory
) -> None:
    old = write(client, agent, claim_key="account.plan", content="The plan is Basic.").json()
    new = write(client, agent, claim_key="account.plan", content="The plan is Pro.").json()
    write(client, agent, claim_key="account.plan", namespace="other", content="Elsewhere.")
    other = write(client, agent, claim_key="user.employer", content="Works at Acme.").json()
    asked = {"namespace": "ops", "claim_keys": ["account.plan", "user.employer", "no.such"]}
    response = _claims(client, agent, asked)
    assert response.status_code == 200, response.text
    body = response.json()
    assert [m["memory_id"] for m in body["memories"]] == [new["memory_id"], other["memory_id"]]
    assert old["memory_id"] not in str(body) and (body["withheld"], body["missing"]) == ([], [])
    auditor = make_key(role="auditor", agent_id=None)
    receipt = client.get(f"/v1/receipts/{body['receipt_id']}", headers=auditor.headers).json()
    assert receipt["kind"] == "fetch"
    assert receipt["body"]["request"]["ids"] == [new["memory_id"], other["memory_id"]]


def test_the_walls_and_the_roles(client: TestClient[Any], agent: Key, make_key: KeyFactory) -> None:
    write(client, agent, claim_key="account.plan", namespace="hr")
    asked = {"namespace": "hr", "claim_keys": ["account.plan"]}
    assert len(_claims(client, agent, asked).json()["memories"]) == 1
    foreign = _claims(client, make_key(tenant="globex"), asked).json()
    assert (foreign["memories"], foreign["missing"]) == ([], [])
    scoped = _claims(client, make_key(namespaces=("ops",)), asked)
    assert (scoped.status_code, scoped.json()["code"]) == (403, "namespace_forbidden")
    auditor = _claims(client, make_key(role="auditor"), asked)
    assert (auditor.status_code, auditor.json()["code"]) == (403, "wrong_role")


def test_every_bad_field_is_reported(client: TestClient[Any], agent: Key) -> None:
    response = _claims(client, agent, {"namespace": " ops", "claim_keys": ["Not A Claim"]})
    assert response.status_code == 422
    assert {e["field"] for e in response.json()["errors"]} == {"namespace", "claim_keys"}
    empty = _claims(client, agent, {"namespace": "ops", "claim_keys": []})
    assert [e["field"] for e in empty.json()["errors"]] == ["claim_keys"]
    too_many = _claims(client, agent, {"namespace": "ops", "claim_keys": ["a"] * 51})
    assert too_many.status_code == 422
