"""Need to know (ARCHITECTURE §14): an agent's response names nothing the policy withheld.

Denied and capped memories stay out of an agent's search, context, fetch and timeline answers
(no id, no rule, no evidence, no decision), while the receipt, auditors and admins keep the
whole ledger; the bundle's `withheld_count` decides whether the agent learns a count.
"""

from __future__ import annotations

import json
from typing import Any

from litestar.testing import TestClient

from tests.conftest import Key, KeyFactory
from tests.gateway.test_memories_write import memory
from tests.gateway.test_policies_api import STRICT, activate

ASK = {"purpose": "support"}
SHOWN = STRICT.replace(b"  on_error: deny\n", b"  on_error: deny\n  withheld_count: shown\n")


def _seed(client: TestClient[Any], agent: Key) -> dict[str, str]:
    items = {
        "hr": memory(namespace="hr", heading="Refund salary bands", content="Band 4 pays 80k."),
        "secret": memory(heading="Refund signing token", content="refund token", labels=["secret"]),
        "plain": memory(heading="Refund policy", content="Refunds under 200 EUR need one approval."),
        **{
            f"episode{i}": memory(
                heading=f"Refund call {i}", content=f"Customer called about refund {i}.",
                memory_type="episodic",
            )
            for i in range(5)
        },
    }  # fmt: skip
    response = client.post(
        "/v1/memories/batch", json={"items": list(items.values())}, headers=agent.headers
    )
    assert response.status_code == 200, response.text
    return {n: item["memory_id"] for n, item in zip(items, response.json()["items"], strict=True)}


def _asks(ids: dict[str, str]) -> list[tuple[str, dict[str, Any]]]:
    every = list(ids.values())
    return [
        ("/v1/context", {"task": "refund salary token call", "top_k": 10, **ASK}),
        ("/v1/search", {"query": "refund salary token call", "limit": 20, **ASK}),
        ("/v1/fetch", {"ids": every, **ASK}),
        ("/v1/timeline", {"ids": every, **ASK}),
    ]


def _withheld(receipt: dict[str, Any]) -> dict[str, tuple[str, str]]:
    return {
        e["memory_id"]: (e["reason"], e["detail"])
        for e in receipt["excluded"]
        if e["reason"] in ("policy_denied", "policy_capped")
    }


def _said(answer: dict[str, Any]) -> str:
    """The answer's text but for `missing` (which names the ids asked for, as asked)."""
    return json.dumps({k: v for k, v in answer.items() if k != "missing"})


def _received(path: str, answer: dict[str, Any]) -> set[str]:
    if path == "/v1/context":
        return {i["memory_id"] for i in answer["included"]} | set(answer["index"]["entries"])
    key = {"/v1/search": "results", "/v1/fetch": "memories", "/v1/timeline": "entries"}[path]
    return {item["memory_id"] for item in answer[key]}


def test_an_agent_is_told_nothing_of_what_the_policy_withheld(
    client: TestClient[Any], agent: Key, make_key: KeyFactory
) -> None:
    ids = _seed(client, agent)
    activate(client, make_key(role="admin"), STRICT, "enforce")
    auditor = make_key(role="auditor", agent_id=None)
    for path, body in _asks(ids):
        response = client.post(path, json=body, headers=agent.headers)
        assert response.status_code == 200, (path, response.text)
        answer = response.json()
        receipt = client.get(
            f"/v1/receipts/{answer['receipt_id']}", headers=auditor.headers
        ).json()["body"]
        withheld = _withheld(receipt)
        # The receipt keeps the whole ledger: every denial and cap, with its rule.
        assert withheld[ids["hr"]] == ("policy_denied", "hr-needs-privileged-role"), path
        assert withheld[ids["secret"]] == ("policy_denied", "withhold-secrets"), path
        assert any(reason == "policy_capped" for reason, _ in withheld.values()), path
        # The agent's answer names none of them, nor their rules or evidence (a capped episode
        # may still be listed by heading in a bundle's index: that line it did receive).
        text, received = _said(answer), _received(path, answer)
        for memory_id in set(withheld) - received:
            assert memory_id not in text, (path, memory_id)
        for said in ("hr-needs-privileged-role", "withhold-secrets", "cap-episodic", '"secret"'):
            assert said not in text, (path, said)
        policy = answer["policy"]
        assert policy["withheld"] is None
        assert {o["memory_id"] for o in policy["outcomes"]} <= received, path
        assert {d["memory_id"] for d in policy["decisions"]} - {None} <= received, path
        # Asked by id, a withheld memory is missing, as another tenant's would be.
        if path in ("/v1/fetch", "/v1/timeline"):
            assert set(answer["missing"]) == set(withheld), path
            assert not received & set(withheld), path
        if path == "/v1/context":
            assert answer["index"]["total_live"] is None
            assert receipt["index"]["total_live"] == len(ids)  # which counts the withheld


def test_auditors_and_admins_see_the_whole_account(
    client: TestClient[Any], agent: Key, make_key: KeyFactory
) -> None:
    ids = _seed(client, agent)
    admin = make_key(role="admin")
    activate(client, admin, STRICT, "enforce")
    context = client.post(
        "/v1/context", json={"task": "refund token call", "top_k": 10, **ASK}, headers=admin.headers
    ).json()
    reasons = {e["memory_id"]: e["reason"] for e in context["excluded"]}
    assert reasons[ids["secret"]] == "policy_denied"
    denied = [d for d in context["policy"]["decisions"] if d["memory_id"] == ids["secret"]]
    assert denied and denied[0]["rule_id"] == "withhold-secrets"
    assert context["policy"]["withheld"] == sum(
        r in ("policy_denied", "policy_capped") for r in reasons.values()
    )
    assert context["index"]["total_live"] == len(ids)


def test_a_bundle_may_tell_agents_how_many_were_withheld(
    client: TestClient[Any], agent: Key, make_key: KeyFactory
) -> None:
    ids = _seed(client, agent)
    activate(client, make_key(role="admin"), SHOWN, "enforce")
    auditor = make_key(role="auditor", agent_id=None)
    for path, body in _asks(ids):
        response = client.post(path, json=body, headers=agent.headers)
        answer = response.json()
        receipt = client.get(
            f"/v1/receipts/{answer['receipt_id']}", headers=auditor.headers
        ).json()["body"]
        withheld = _withheld(receipt)
        assert answer["policy"]["withheld"] == len(withheld) >= 3, path
        for memory_id in set(withheld) - _received(path, answer):
            assert memory_id not in _said(answer), (path, memory_id)


def test_the_shipped_default_narrows_nothing_an_agent_may_see(
    client: TestClient[Any], agent: Key
) -> None:
    # Its deny rule is log_only: nothing is withheld, every decision concerns what was received.
    ids = _seed(client, agent)
    fetched = client.post("/v1/fetch", json={"ids": list(ids.values())}, headers=agent.headers)
    answer = fetched.json()
    assert {m["memory_id"] for m in answer["memories"]} == set(ids.values())
    would = {(d["rule_id"], d["memory_id"]) for d in answer["policy"]["decisions"]}
    assert ("withhold-secrets", ids["secret"]) in would
    assert answer["policy"]["withheld"] is None
    context = client.post("/v1/context", json={"task": "refund"}, headers=agent.headers).json()
    assert context["index"]["total_live"] == len(ids)
