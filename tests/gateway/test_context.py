"""/v1/context, /v1/search and /v1/timeline through real HTTP and a real PostgreSQL."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from litestar.testing import TestClient

from gateway.core.tokens import load_tokenizer
from tests.conftest import Key, KeyFactory
from tests.gateway.test_memories_write import memory

TOPICS = [
    ("Rollback procedure", "Run atlasctl rollback --to <sha> and page the on-call engineer."),
    ("Deploy schedule", "Deploys leave every Tuesday at 10:00 UTC from a clean main branch."),
    ("Database version", "The ledger database runs PostgreSQL 16 with logical replication."),
    ("Support hours", "Support answers 07:00 to 22:00 CET on weekdays."),
    ("Refund policy", "Refunds under 200 EUR need one approval from a team lead."),
    ("Holiday rota", "The holiday rota covers 23 December to 2 January."),
]


def seed(client: TestClient[Any], key: Key, namespace: str = "ops") -> list[str]:
    items = [
        memory(namespace=namespace, heading=h, content=c, memory_type="semantic", confidence=0.9)
        for h, c in TOPICS
    ]
    response = client.post("/v1/memories/batch", json={"items": items}, headers=key.headers)
    assert response.status_code == 200, response.text
    return [item["memory_id"] for item in response.json()["items"]]


def context(client: TestClient[Any], key: Key, **body: Any) -> Any:
    return client.post(
        "/v1/context", json={"task": "how do I roll back?", **body}, headers=key.headers
    )


def test_bundle_contains_the_relevant_memory_and_accounts_for_the_rest(
    client: TestClient[Any], agent: Key
) -> None:
    ids = seed(client, agent)
    # (Words the memory shares: the hash embedder does not know "roll back" is "rollback".)
    response = context(client, agent, task="how do I run a rollback?", budget_tokens=400, top_k=2)
    assert response.status_code == 200, response.text
    body = response.json()
    assert "atlasctl rollback" in body["bundle"]
    assert body["included"][0]["memory_id"] == ids[0]
    assert load_tokenizer().count(body["bundle"]) == body["tokens_used"] <= 400
    accounted = {i["memory_id"] for i in body["included"]} | {
        e["memory_id"] for e in body["excluded"]
    }
    assert accounted | set(body["index"]["entries"]) == set(ids)
    assert body["tokenizer"] == "cl100k_base"
    assert body["ranking_profile"]["digest"].startswith("sha256:")
    assert set(body["included"][0]["signals"]) >= {"similarity", "lexical", "rrf"}


def test_dead_versions_never_reach_the_bundle_and_say_why(
    client: TestClient[Any], agent: Key
) -> None:
    ids = seed(client, agent)
    client.request(
        "DELETE", f"/v1/memories/{ids[0]}", json={"reason": "wrong"}, headers=agent.headers
    )
    replaced = client.post(
        "/v1/memories",
        json=memory(
            heading="Deploy schedule", content="Deploys now leave on Wednesdays.", supersedes=ids[1]
        ),
        headers=agent.headers,
    ).json()["memory_id"]
    expired = client.post(
        "/v1/memories",
        json=memory(
            heading="Rollback hotline",
            content="Call the rollback hotline.",
            expires_at="2001-01-01T00:00:00Z",
        ),
        headers=agent.headers,
    ).json()["memory_id"]
    body = context(client, agent, task="rollback deploy schedule hotline", top_k=10).json()
    reasons = {e["memory_id"]: e["reason"] for e in body["excluded"]}
    assert reasons[ids[0]] == "deleted"
    assert reasons[ids[1]] == "superseded"
    assert reasons[expired] == "expired"
    assert "atlasctl" not in body["bundle"] and "Call the rollback hotline" not in body["bundle"]
    assert replaced in {i["memory_id"] for i in body["included"]}


def test_empty_namespace_gives_a_valid_bundle_that_says_so(
    client: TestClient[Any], agent: Key
) -> None:
    body = context(client, agent, namespaces=["empty"]).json()
    assert "No memories are stored in these namespaces yet." in body["bundle"]
    assert body["included"] == [] and body["index"]["total_live"] == 0


def test_fill_stop_versus_skip(client: TestClient[Any], agent: Key) -> None:
    """A memory too big for the budget, ranked above smaller ones: `skip` goes past it and admits
    the smaller ones; `stop` ends there, and says so for every memory it did not try."""
    big = "word " * 400
    giant = client.post(
        "/v1/memories",
        json=memory(heading="roll back giant", content="roll back " + big),
        headers=agent.headers,
    ).json()["memory_id"]
    seed(client, agent)
    skip = context(client, agent, budget_tokens=300, include_index=False, fill="skip").json()
    stop = context(client, agent, budget_tokens=300, include_index=False, fill="stop").json()
    for body in (skip, stop):
        reasons = {e["memory_id"]: e["reason"] for e in body["excluded"]}
        assert reasons[giant] == "over_budget"
    skipped = [i["memory_id"] for i in skip["included"]]
    stopped = [i["memory_id"] for i in stop["included"]]
    # Both admit in score order up to the giant; only skip admits anything ranked below it.
    assert stopped == skipped[: len(stopped)] and len(stopped) < len(skipped)
    ended = "fill=stop ended at a higher-ranked memory that did not fit"
    not_tried = {e["memory_id"] for e in stop["excluded"] if e["detail"] == ended}
    assert set(skipped) - set(stopped) <= not_tried and giant not in not_tried
    assert not any(e["detail"] == ended for e in skip["excluded"])
    assert skip["tokens_used"] > stop["tokens_used"]


def test_namespace_and_type_filters(client: TestClient[Any], make_key: KeyFactory) -> None:
    writer = make_key()
    seed(client, writer, "ops")
    seed(client, writer, "hr")
    scoped = make_key(namespaces=("ops",))
    body = context(client, scoped, top_k=20).json()
    ids_ops = {i["memory_id"] for i in body["included"]} | {
        e["memory_id"] for e in body["excluded"]
    }
    fetched = client.post("/v1/fetch", json={"ids": sorted(ids_ops)}, headers=writer.headers).json()
    assert {m["namespace"] for m in fetched["memories"]} == {"ops"}
    forbidden = context(client, scoped, namespaces=["hr"])
    assert forbidden.status_code == 403 and "hr" in forbidden.json()["detail"]
    typed = context(client, writer, memory_types=["episodic"]).json()
    assert typed["included"] == []


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"task": "   "}, "task"),
        ({"task": ""}, "task"),
        ({"task": "x", "budget_tokens": 0}, "budget_tokens"),
        ({"task": "x", "budget_tokens": 128_001}, "budget_tokens"),
        ({"task": "x", "top_k": 0}, "top_k"),
        ({"task": "x", "top_k": 51}, "top_k"),
        ({"task": "x", "memory_types": ["dream"]}, "memory_types"),
        ({"task": "x", "namespaces": ["bad name"]}, "namespaces"),
        ({"task": "x", "fill": "greedy"}, "fill"),
    ],
)
def test_bad_context_requests(
    client: TestClient[Any], agent: Key, body: dict[str, Any], field: str
) -> None:
    response = client.post("/v1/context", json=body, headers=agent.headers)
    assert response.status_code == 422, response.text
    assert field in {e["field"] for e in response.json()["errors"]}


def test_role_budget_default(client: TestClient[Any], agent: Key) -> None:
    assert context(client, agent).json()["budget_tokens"] == 4000


def test_search_returns_pointers_and_timeline_the_history(
    client: TestClient[Any], agent: Key
) -> None:
    ids = seed(client, agent)
    newer = client.post(
        "/v1/memories",
        json=memory(
            heading="Rollback procedure", content="Use atlasctl rollback v2.", supersedes=ids[0]
        ),
        headers=agent.headers,
    ).json()["memory_id"]
    found = client.post("/v1/search", json={"query": "rollback"}, headers=agent.headers).json()
    assert found["results"][0]["memory_id"] == newer
    assert len(found["results"][0]["snippet"]) <= 120
    assert {"heading", "memory_type", "confidence", "distance"} <= set(found["results"][0])
    assert {"memory_id": ids[0], "reason": "superseded"} in [
        {k: e[k] for k in ("memory_id", "reason")} for e in found["excluded"]
    ]
    history = client.post(
        "/v1/timeline", json={"ids": [ids[0], newer]}, headers=agent.headers
    ).json()
    assert [e["memory_id"] for e in history["entries"]] == [newer, ids[0]]
    assert history["entries"][1]["superseded_by"] == newer
    assert history["entries"][0]["supersedes"] == ids[0]


def test_same_request_same_bytes_across_processes(
    client: TestClient[Any], agent: Key, app_database_url: str
) -> None:
    seed(client, agent)
    request = {"task": "how do I roll back?", "budget_tokens": 500, "top_k": 3}
    first = client.post("/v1/context", json=request, headers=agent.headers).json()
    # A separate process with its own app, pool and tokenizer, and another hash seed.
    code = f"""
import json
from litestar.testing import TestClient
from gateway.http.app import create_app
from gateway.shell.settings import Settings
with TestClient(app=create_app(Settings(database_url={app_database_url!r}, pool_min_size=1))) as c:
    r = c.post("/v1/context", json={json.dumps(request)}, headers={{"Authorization": "Bearer {agent.key}"}})
    print(json.dumps(r.json()))
"""
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONHASHSEED": "7", "PATH": "/usr/bin:/bin"},
    )
    second = json.loads(result.stdout)
    assert second["bundle"] == first["bundle"]
    assert second["bundle_sha256"] == first["bundle_sha256"]
