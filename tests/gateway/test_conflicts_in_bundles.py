"""Conflicting memories in bundles, through real HTTP and a real PostgreSQL (ARCHITECTURE §12):
two agents' facts for one claim at one instant are shown together with writer and time, the
receipt records the conflict so an exact replay rebuilds the same bytes after it is resolved,
and a resolved conflict is no longer shown."""

from __future__ import annotations

from typing import Any

from litestar.testing import TestClient

from gateway.core.versions import ASSEMBLER
from tests.conftest import Key, KeyFactory
from tests.gateway.sessions_helpers import context, open_session, receipt_body

AT = "2024-05-01T09:00:00Z"
ASK = {"task": "Which team am I on?", "namespaces": ["team"], "budget_tokens": 800}


def say_and_compile(client: TestClient[Any], key: Key, text: str) -> dict[str, Any]:
    session_id = open_session(client, key, namespace="team")["session_id"]
    body = {"turns": [{"role": "user", "content": text, "occurred_at": AT}]}
    appended = client.post(f"/v1/sessions/{session_id}/turns", json=body, headers=key.headers)
    assert appended.status_code == 200, appended.text
    done = client.post("/v1/compile", json={"session_id": session_id}, headers=key.headers)
    assert done.status_code == 200, done.text
    result: dict[str, Any] = done.json()
    return result


def resolve_for_fraud(client: TestClient[Any], key: Key) -> None:
    """Resolve the one open conflict for its Fraud side."""
    [conflict] = client.get("/v1/conflicts", headers=key.headers).json()["conflicts"]
    fraud = next(s["memory_id"] for s in conflict["sides"] if "Fraud" in s["heading"])
    resolved = client.post(
        f"/v1/conflicts/{conflict['conflict_id']}/resolve",
        json={"winner": fraud, "reason": "the transfer went through"},
        headers=key.headers,
    )
    assert resolved.status_code == 200, resolved.text


def replay_exactly(client: TestClient[Any], auditor: Key, receipt_id: str) -> dict[str, Any]:
    replayed = client.post(
        f"/v1/receipts/{receipt_id}/replay", json={"mode": "exact"}, headers=auditor.headers
    )
    assert replayed.status_code == 200, replayed.text
    result: dict[str, Any] = replayed.json()
    assert result["identical"] is True, result["problems"]
    return result


def test_two_writers_conflicting_facts_are_shown_together_and_replay_exactly(
    client: TestClient[Any], make_key: KeyFactory
) -> None:
    planner = make_key(agent_id="planner", namespaces=("team",))
    coder = make_key(agent_id="coder", namespaces=("team",))
    assert say_and_compile(client, planner, "I'm on the Payments team.")["conflicts"] == 0
    assert say_and_compile(client, coder, "I'm on the Fraud team.")["conflicts"] == 1

    original = client.post("/v1/context", json=ASK, headers=coder.headers).json()
    bundle = original["bundle"]
    section = bundle[bundle.index("### Conflicting memories: user.team, unresolved") :]
    assert f"written by planner (key {planner.key_id}) at 2024-05-01T09:00:00Z" in section
    assert f"written by coder (key {coder.key_id}) at 2024-05-01T09:00:00Z" in section
    assert "Payments team" in section and "Fraud team" in section
    receipt = client.get(
        f"/v1/receipts/{original['receipt_id']}", headers=make_key(role="auditor").headers
    ).json()
    assert receipt["body"]["assembler"]["version"] == ASSEMBLER.version
    [recorded] = receipt["body"]["conflicts"]
    assert recorded["claim_key"] == "user.team"
    assert {s["agent_id"] for s in recorded["sides"]} == {"planner", "coder"}

    resolve_for_fraud(client, coder)
    after = client.post("/v1/context", json=ASK, headers=coder.headers).json()["bundle"]
    assert "Conflicting memories" not in after and "Fraud" in after

    exact = replay_exactly(client, make_key(role="auditor"), original["receipt_id"])
    assert exact["replayed"]["bundle_sha256"] == original["bundle_sha256"]


def test_a_session_context_shows_the_conflict_and_replays_it_after_resolution(
    client: TestClient[Any], make_key: KeyFactory
) -> None:
    planner = make_key(agent_id="planner", namespaces=("team",))
    coder = make_key(agent_id="coder", namespaces=("team",))
    say_and_compile(client, planner, "I'm on the Payments team.")
    assert say_and_compile(client, coder, "I'm on the Fraud team.")["conflicts"] == 1
    session_id = open_session(client, coder, namespace="team", budget_tokens=1200)["session_id"]
    step = {"query": "Which team am I on?"}
    original = context(client, coder, session_id, **step).json()
    section = original["text"][original["text"].index("### Conflicting memories: user.team") :]
    assert "written by planner" in section and "written by coder" in section
    recorded = receipt_body(client, make_key, original["receipt_id"])["memory"]["conflicts"]
    assert [c["claim_key"] for c in recorded] == ["user.team"]

    resolve_for_fraud(client, coder)
    after = context(client, coder, session_id, **step).json()["text"]
    assert "Conflicting memories" not in after and "Fraud" in after

    exact = replay_exactly(client, make_key(role="auditor"), original["receipt_id"])
    assert exact["text"] == original["text"]
