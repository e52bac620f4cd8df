"""Policy bundles over HTTP, and their effect on every disclosure (enforce and log_only)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from litestar.testing import TestClient

from tests.conftest import Key, KeyFactory
from tests.gateway.test_memories_write import memory

STRICT = (Path(__file__).resolve().parents[2] / "policies/bundles/strict.yaml").read_bytes()
YAML = {"content-type": "application/yaml"}


def upload(client: TestClient[Any], admin: Key, source: bytes) -> Any:
    return client.post("/v1/policies", content=source, headers={**admin.headers, **YAML})


def activate(client: TestClient[Any], admin: Key, source: bytes, mode: str) -> str:
    digest = upload(client, admin, source).json()["digest"]
    response = client.post(
        f"/v1/policies/{digest}/activate", json={"mode": mode}, headers=admin.headers
    )
    assert response.status_code == 200, response.text
    return str(digest)


def test_upload_is_content_addressed(client: TestClient[Any], make_key: KeyFactory) -> None:
    admin = make_key(role="admin")
    first = upload(client, admin, STRICT)
    assert first.status_code == 201 and first.json()["digest"].startswith("sha256:")
    reformatted = b"# a comment changes nothing\n" + STRICT
    again = upload(client, admin, reformatted)
    assert again.status_code == 200 and again.json()["digest"] == first.json()["digest"]
    stored = client.get(f"/v1/policies/{first.json()['digest']}", headers=admin.headers).json()
    assert stored["name"] == "strict" and stored["source"] == STRICT.decode()


def test_bad_bundles_are_422_with_positions(client: TestClient[Any], make_key: KeyFactory) -> None:
    admin = make_key(role="admin")
    bad = (
        b"apiVersion: ctxgw/v1\nkind: PolicyBundle\nmetadata: {name: x}\nspec:\n  modee: enforce\n"
    )
    response = upload(client, admin, bad)
    assert response.status_code == 422
    assert response.json()["code"] == "policy_invalid"
    fields = [e["field"] for e in response.json()["errors"]]
    assert any(f.startswith("policy.yaml:5:") for f in fields), fields
    assert upload(client, admin, b"key: [unclosed").status_code == 422
    assert upload(client, admin, b"x" * (2 * 1024 * 1024)).status_code == 413
    regex = STRICT.replace(b"op: exists}", b"op: regex, value: '(a+)+$'}")
    assert upload(client, admin, regex).status_code in (201, 422)  # linear-time engine or refused


def test_only_admins_manage_policies(client: TestClient[Any], agent: Key) -> None:
    assert upload(client, agent, STRICT).status_code == 403
    assert client.get("/v1/policies/active", headers=agent.headers).status_code == 403


def test_default_bundle_applies_until_activation(
    client: TestClient[Any], agent: Key, make_key: KeyFactory
) -> None:
    admin = make_key(role="admin")
    active = client.get("/v1/policies/active", headers=admin.headers).json()
    assert active["name"] == "default" and active["activated"] is False
    context = client.post("/v1/context", json={"task": "x"}, headers=agent.headers).json()
    assert context["policy"]["digest"] == active["digest"]
    digest = activate(client, admin, STRICT, "enforce")
    now_active = client.get("/v1/policies/active", headers=admin.headers).json()
    assert now_active["digest"] == digest and now_active["mode"] == "enforce"


def test_enforced_require_refuses_with_the_rule_reason(
    client: TestClient[Any], agent: Key, make_key: KeyFactory
) -> None:
    activate(client, make_key(role="admin"), STRICT, "enforce")
    refused = client.post("/v1/context", json={"task": "x"}, headers=agent.headers)
    assert refused.status_code == 403
    assert refused.json()["code"] == "policy_refused"
    assert "Every assembly declares a purpose" in refused.json()["detail"]
    allowed = client.post(
        "/v1/context", json={"task": "x", "purpose": "support"}, headers=agent.headers
    )
    assert allowed.status_code == 200


def seed_sensitive(client: TestClient[Any], agent: Key) -> dict[str, str]:
    items = {
        "hr": memory(namespace="hr", heading="Salary bands", content="Band 4 pays 80k."),
        "pii": memory(heading="Customer contact", content="Reach Dana at dana@example.com about the refund."),
        "secret": memory(heading="Deploy token", content="token rotation", labels=["secret"]),
        "plain": memory(heading="Refund policy", content="Refunds under 200 EUR need one approval."),
    }  # fmt: skip
    response = client.post(
        "/v1/memories/batch", json={"items": list(items.values())}, headers=agent.headers
    )
    return {
        name: item["memory_id"] for name, item in zip(items, response.json()["items"], strict=True)
    }


def test_enforce_filters_and_redacts_every_disclosure(
    client: TestClient[Any], agent: Key, make_key: KeyFactory
) -> None:
    ids = seed_sensitive(client, agent)
    activate(client, make_key(role="admin"), STRICT, "enforce")
    ask = {"purpose": "support"}
    context = client.post("/v1/context", json={"task": "refund salary token contact", "top_k": 10, **ask}, headers=agent.headers).json()  # fmt: skip
    # The agent is not told what was denied (need to know); its receipt names every denial.
    assert not {ids["hr"], ids["secret"]} & {e["memory_id"] for e in context["excluded"]}
    auditor = make_key(role="auditor", agent_id=None)
    receipt = client.get(f"/v1/receipts/{context['receipt_id']}", headers=auditor.headers)
    reasons = {e["memory_id"]: (e["reason"], e["detail"]) for e in receipt.json()["body"]["excluded"]}  # fmt: skip
    assert reasons[ids["hr"]] == ("policy_denied", "hr-needs-privileged-role")
    assert reasons[ids["secret"]] == ("policy_denied", "withhold-secrets")
    assert "Band 4" not in context["bundle"] and "Salary bands" not in context["bundle"]
    assert "dana@example.com" not in context["bundle"] and "[redacted:email]" in context["bundle"]

    fetched = client.post(
        "/v1/fetch", json={"ids": list(ids.values()), **ask}, headers=agent.headers
    ).json()
    delivered = {m["memory_id"]: m for m in fetched["memories"]}
    assert set(delivered) == {ids["pii"], ids["plain"]}
    assert "dana@example.com" not in delivered[ids["pii"]]["content"]
    assert fetched["withheld"] == []
    assert set(fetched["missing"]) == {ids["hr"], ids["secret"]}  # to the agent, not there
    found = client.post(
        "/v1/search", json={"query": "salary band token", **ask}, headers=agent.headers
    ).json()
    assert ids["hr"] not in {r["memory_id"] for r in found["results"]}
    timeline = client.post(
        "/v1/timeline", json={"ids": [ids["hr"]], **ask}, headers=agent.headers
    ).json()
    assert timeline["entries"] == []


def test_log_only_changes_nothing_but_records_everything(
    client: TestClient[Any], agent: Key, make_key: KeyFactory
) -> None:
    ids = seed_sensitive(client, agent)
    activate(client, make_key(role="admin"), STRICT, "log_only")
    fetched = client.post("/v1/fetch", json={"ids": list(ids.values())}, headers=agent.headers)
    assert fetched.status_code == 200  # require is not enforced either
    body = fetched.json()
    assert {m["memory_id"] for m in body["memories"]} == set(ids.values())
    assert (
        "dana@example.com" in {m["memory_id"]: m for m in body["memories"]}[ids["pii"]]["content"]
    )
    decisions = body["policy"]["decisions"]
    assert body["policy"]["mode"] == "log_only"
    assert all(d["applied"] is False for d in decisions)
    would = {(d["rule_id"], d["memory_id"], d["outcome_if_enforced"]) for d in decisions}
    assert ("hr-needs-privileged-role", ids["hr"], "deny") in would
    auditor = make_key(role="auditor")
    receipt = client.get(f"/v1/receipts/{body['receipt_id']}", headers=auditor.headers).json()
    assert receipt["body"]["policy"]["decisions"] == decisions


def test_cap_limits_episodes_in_rank_order(
    client: TestClient[Any], agent: Key, make_key: KeyFactory
) -> None:
    items = [memory(heading=f"Refund call {i}", content=f"Customer called about refund {i}.", memory_type="episodic")
             for i in range(5)]  # fmt: skip
    client.post("/v1/memories/batch", json={"items": items}, headers=agent.headers)
    activate(client, make_key(role="admin"), STRICT, "enforce")
    context = client.post("/v1/context", json={"task": "refund call", "purpose": "support", "top_k": 10}, headers=agent.headers).json()  # fmt: skip
    assert len(context["included"]) == 3
    assert not [e for e in context["excluded"] if e["reason"] == "policy_capped"]
    auditor = make_key(role="auditor", agent_id=None)
    receipt = client.get(f"/v1/receipts/{context['receipt_id']}", headers=auditor.headers)
    capped = [e for e in receipt.json()["body"]["excluded"] if e["reason"] == "policy_capped"]
    assert len(capped) == 2 and all(e["detail"] == "cap-episodic" for e in capped)


def test_activating_an_unknown_digest_is_404(client: TestClient[Any], make_key: KeyFactory) -> None:
    admin = make_key(role="admin")
    missing = "sha256:" + "0" * 64
    response = client.post(
        f"/v1/policies/{missing}/activate", json={"mode": "enforce"}, headers=admin.headers
    )
    assert response.status_code == 404 and response.json()["code"] == "policy_not_found"
    bad_mode = client.post(
        f"/v1/policies/{missing}/activate", json={"mode": "sometimes"}, headers=admin.headers
    )
    assert bad_mode.status_code == 422


def test_another_tenants_bundle_is_not_found_everywhere(
    client: TestClient[Any], make_key: KeyFactory
) -> None:
    """Bundles are per tenant: once tenant B has used its bundle (so this process parsed it),
    tenant A naming B's digest gets 404 `policy_not_found` from what-if, replay what_if,
    activate and get, never B's bundle and never a 500."""
    theirs = make_key(tenant="beta", role="admin")
    digest = activate(client, theirs, STRICT, "log_only")  # parsed and cached by this process
    assert client.post(
        "/v1/policies/what-if", json={"policy_digest": digest}, headers=theirs.headers
    ).status_code == 200  # fmt: skip
    admin, agent = make_key(tenant="acme", role="admin"), make_key(tenant="acme")
    receipt_id = client.post("/v1/context", json={"task": "x"}, headers=agent.headers).json()[
        "receipt_id"
    ]
    responses = {
        "what-if": client.post(
            "/v1/policies/what-if", json={"policy_digest": digest}, headers=admin.headers
        ),
        "replay": client.post(
            f"/v1/receipts/{receipt_id}/replay",
            json={"mode": "what_if", "policy_digest": digest},
            headers=admin.headers,
        ),
        "activate": client.post(
            f"/v1/policies/{digest}/activate", json={"mode": "enforce"}, headers=admin.headers
        ),
        "get": client.get(f"/v1/policies/{digest}", headers=admin.headers),
    }
    for path, response in responses.items():
        assert (path, response.status_code) == (path, 404), response.text
        assert response.json()["code"] == "policy_not_found", (path, response.text)
    # Nothing was activated for acme: the shipped default is still in force there.
    active = client.get("/v1/policies/active", headers=admin.headers).json()
    assert active["activated"] is False and active["digest"] != digest
