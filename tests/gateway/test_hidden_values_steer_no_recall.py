"""A value the policy hides steers no recall: under an enforced redaction of emails, an agent
that names an address in its task (or search, or a session step's query) is shown the same as
for any other address, so it cannot learn which memory holds the address from the order or the
presence of what it is shown. Where the policy shows addresses (no rule, or log_only), they are
searched by as before. Real HTTP, real PostgreSQL."""

from __future__ import annotations

from typing import Any

from litestar.testing import TestClient

from tests.conftest import Key, KeyFactory
from tests.gateway.sessions_helpers import append, open_session
from tests.gateway.test_memories_write import memory
from tests.gateway.test_policies_api import activate
from tests.gateway.test_policy_rendered_redaction import REDACT_EMAILS

ANN, BOB = "ann.lee@example.com", "bob.stone@example.com"


def _seed(client: TestClient[Any], agent: Key) -> dict[str, str]:
    """Two contacts alike but for their address, and a few other memories; ids by address."""
    items = [
        memory(namespace="crm", heading="Contact", content=f"Prefers a call before 10am: {ANN}"),
        memory(namespace="crm", heading="Contact", content=f"Prefers a call before 10am: {BOB}"),
        *(
            memory(namespace="crm", heading=f"Note {i}", content=f"Renewal {i} is due in spring.")
            for i in range(4)
        ),
    ]
    response = client.post("/v1/memories/batch", json={"items": items}, headers=agent.headers)
    assert response.status_code == 200, response.text
    ids = [item["memory_id"] for item in response.json()["items"]]
    return {ANN: ids[0], BOB: ids[1]}


def _context(client: TestClient[Any], agent: Key, address: str) -> dict[str, Any]:
    ask = {"task": f"When should I call {address}?", "budget_tokens": 400, "top_k": 1}
    response = client.post("/v1/context", json=ask, headers=agent.headers)
    assert response.status_code == 200, response.text
    payload: dict[str, Any] = response.json()
    return payload


def _search(client: TestClient[Any], agent: Key, address: str) -> list[str]:
    ask = {"query": address, "limit": 1}
    response = client.post("/v1/search", json=ask, headers=agent.headers)
    assert response.status_code == 200, response.text
    return [hit["memory_id"] for hit in response.json()["results"]]


def test_an_address_the_policy_shows_is_searched_by(
    client: TestClient[Any], make_key: KeyFactory
) -> None:
    agent = make_key(agent_id="desk", namespaces=("crm",))
    ids = _seed(client, agent)
    for address in (ANN, BOB):
        assert [m["memory_id"] for m in _context(client, agent, address)["included"]] == [
            ids[address]
        ]
        assert _search(client, agent, address) == [ids[address]]
    # log_only redacts nothing shown: the addresses still find their memories.
    activate(client, make_key(role="admin"), REDACT_EMAILS, "log_only")
    assert _search(client, agent, BOB) == [ids[BOB]]


def test_an_address_the_policy_hides_steers_nothing(
    client: TestClient[Any], make_key: KeyFactory
) -> None:
    agent = make_key(agent_id="desk", namespaces=("crm",))
    _seed(client, agent)
    activate(client, make_key(role="admin"), REDACT_EMAILS, "enforce")
    ann, bob = _context(client, agent, ANN), _context(client, agent, BOB)
    assert ann["bundle"] == bob["bundle"]
    assert ann["included"] == bob["included"] and ann["excluded"] == bob["excluded"]
    assert ANN not in ann["bundle"] and BOB not in bob["bundle"]
    assert _search(client, agent, ANN) == _search(client, agent, BOB)
    # The same address in another Unicode form is the same secret.
    fullwidth = ANN.replace("ann", "ａｎｎ").replace("@", "＠")
    assert _context(client, agent, fullwidth)["bundle"] == ann["bundle"]


def test_a_session_step_query_naming_a_hidden_address_steers_nothing(
    client: TestClient[Any], make_key: KeyFactory
) -> None:
    agent = make_key(agent_id="desk", namespaces=("crm",))
    _seed(client, agent)
    activate(client, make_key(role="admin"), REDACT_EMAILS, "enforce")
    session_id = open_session(client, agent, namespace="crm")["session_id"]
    assert append(client, agent, session_id, ("user", "Hello")).status_code == 200
    bundles = []
    for address in (ANN, BOB):
        step = {"budget_tokens": 600, "query": f"call {address}"}
        response = client.post(
            f"/v1/sessions/{session_id}/context", json=step, headers=agent.headers
        )
        assert response.status_code == 200, response.text
        bundles.append(response.json())
    assert bundles[0]["memory"] is not None
    assert bundles[0]["memory"] == bundles[1]["memory"]
    assert bundles[0]["text"] == bundles[1]["text"]
