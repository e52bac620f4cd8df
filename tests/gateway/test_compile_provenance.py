"""What compile derives obeys what it derives from (ARCHITECTURE §12, §14), through real HTTP and
a real PostgreSQL.

Probes that once got through: an episodic memory labelled `secret`, which the policy denies
agents, compiled into a fact of the same text with no label, and the fact reached the agent by
context, search, fetch, timeline and conflicts; likewise a secret session's facts and digest;
and an agent's own compile of what it may not see turned it into facts it could read.

1. Policy follows provenance: a compiled memory carries its sources' labels (a turn's are its
   session's), whoever compiled it, so the policy judges it as it judges them.
2. An agent's compile reads only what its policy admits it: the rest is skipped and counted,
   and nothing is derived from it (no fact, no digest line); a session the policy denies it is
   not found.
"""

from __future__ import annotations

from typing import Any

import psycopg
from litestar.testing import TestClient

from tests.conftest import Key, KeyFactory
from tests.gateway.sessions_helpers import open_session
from tests.gateway.test_conflicts_in_bundles import AT, say_and_compile
from tests.gateway.test_memories_write import write
from tests.gateway.test_policies_api import activate

# Secrets are for admins only; and a word agents may not read, wherever it is said.
POLICY = b"""
apiVersion: ctxgw/v1
kind: PolicyBundle
metadata: {name: compile-provenance}
spec:
  default_decision: allow
  rules:
    - id: secrets-for-admins
      effect: deny
      when:
        all:
          - {field: memory.labels, op: contains_any, value: [secret]}
          - {field: request.role, op: eq, value: agent}
    - id: zorblatt-for-admins
      effect: deny
      when:
        all:
          - {field: memory.content, op: contains, value: Zorblatt}
          - {field: request.role, op: eq, value: agent}
"""
CLASSIFIED = "Quixotrand"  # said only in sources labelled secret
DENIED = "Zorblatt"  # denied agents by its text
UNKNOWN = "01ARZ3NDEKTSV4RRFFQ69G5FAV"


def _enforce(client: TestClient[Any], make_key: KeyFactory) -> Key:
    admin = make_key(role="admin", agent_id=None)
    activate(client, admin, POLICY, "enforce")
    return admin


def _compile(client: TestClient[Any], key: Key, **scope: str) -> dict[str, Any]:
    done = client.post("/v1/compile", json=scope, headers=key.headers)
    assert done.status_code == 200, done.text
    assert done.json()["status"] == "completed", done.text
    result: dict[str, Any] = done.json()
    return result


def _compiled(database_url: str, word: str) -> list[tuple[str, str, list[str]]]:
    """Every memory a compile wrote (fact or digest) whose text holds `word`: id, extractor,
    labels."""
    with psycopg.connect(database_url) as conn:
        rows = conn.execute(
            "SELECT memory_id, extractor, labels FROM memories WHERE extractor IS NOT NULL"
            " AND heading || ' ' || content LIKE %s ORDER BY memory_id",
            (f"%{word}%",),
        ).fetchall()
    return [(str(m), str(e), list(labels)) for m, e, labels in rows]


def _told(client: TestClient[Any], key: Key, ids: list[str], task: str, word: str) -> list[str]:
    """The answers `key` gets about `ids` and `task` that hold `word`, by every disclosure and
    the conflicts list (the task does not name the word: requests are echoed back)."""
    asks = {
        "context": ("/v1/context", {"task": task, "budget_tokens": 2000}),
        "context index": ("/v1/context", {"task": "anything", "index_budget_tokens": 2000}),
        "search": ("/v1/search", {"query": task}),
        "fetch": ("/v1/fetch", {"ids": ids}),
        "timeline": ("/v1/timeline", {"ids": ids}),
    }
    answers = {
        name: client.post(path, json=body, headers=key.headers)
        for name, (path, body) in asks.items()
    }
    answers["conflicts"] = client.get(
        "/v1/conflicts", params={"status": "all"}, headers=key.headers
    )
    assert all(a.status_code == 200 for a in answers.values()), answers
    return [name for name, answer in answers.items() if word in answer.text]


# 1. Policy follows provenance ---------------------------------------------------------------------


def test_a_fact_compiled_from_a_secret_memory_is_as_secret(
    client: TestClient[Any], make_key: KeyFactory, agent: Key, database_url: str
) -> None:
    admin = _enforce(client, make_key)
    said = write(
        client,
        admin,
        namespace="vault",
        memory_type="episodic",
        heading="note",
        content=f"I live in {CLASSIFIED}.",
        labels=["secret"],
    )
    assert said.status_code == 201, said.text
    done = _compile(client, admin, namespace="vault")
    assert (done["created"], done["skipped"]) == (1, 0)  # an admin's compile reads secrets
    [(fact, _, labels)] = _compiled(database_url, CLASSIFIED)
    assert labels == ["secret"]

    assert _told(client, agent, [fact], "Where do I live?", CLASSIFIED) == []
    # Whom the policy lets see the source sees the fact.
    fetched = client.post("/v1/fetch", json={"ids": [fact]}, headers=admin.headers)
    assert fetched.status_code == 200 and CLASSIFIED in fetched.text


def test_a_secret_sessions_facts_and_digest_are_as_secret(
    client: TestClient[Any], make_key: KeyFactory, agent: Key, database_url: str
) -> None:
    admin = _enforce(client, make_key)
    # The agent's own fact for user.team; the admin's secret session states another at the same
    # instant, so its fact opens a conflict with the agent's.
    assert say_and_compile(client, agent, "I'm on the Fraud team.")["created"] == 1
    session_id = open_session(client, admin, namespace="team", labels=["secret"])["session_id"]
    said = {"role": "user", "content": f"I'm on the {CLASSIFIED} team.", "occurred_at": AT}
    turns = {"turns": [said]}
    appended = client.post(f"/v1/sessions/{session_id}/turns", json=turns, headers=admin.headers)
    assert appended.status_code == 200, appended.text
    done = _compile(client, admin, session_id=session_id)
    assert (done["created"], done["conflicts"]) == (1, 1)

    compiled = _compiled(database_url, CLASSIFIED)
    assert sorted(e.partition("/")[0] for _, e, _ in compiled) == ["digest", "rules"]
    assert all(labels == ["secret"] for _, _, labels in compiled)
    ids = [m for m, _, _ in compiled]
    assert _told(client, agent, ids, "Which team am I on?", CLASSIFIED) == []
    # The conflict is the admin's to see (and resolve); the agent's own fact still reaches it.
    assert len(client.get("/v1/conflicts", headers=admin.headers).json()["conflicts"]) == 1
    assert "context" in _told(client, agent, ids, "Which team am I on?", "Fraud")


# 2. An agent's compile reads only what it may see --------------------------------------------------


def test_an_agents_compile_does_not_read_a_memory_it_may_not_see(
    client: TestClient[Any], make_key: KeyFactory, agent: Key, database_url: str
) -> None:
    admin = _enforce(client, make_key)
    for key, content, labels in (
        (admin, f"I live in {CLASSIFIED}.", ["secret"]),
        (agent, "My name is Ana Souza.", []),
    ):
        body = {"memory_type": "episodic", "heading": "note", "labels": labels}
        said = write(client, key, namespace="vault", content=content, **body)
        assert said.status_code == 201, said.text
    done = _compile(client, agent, namespace="vault")
    assert (done["created"], done["skipped"]) == (1, 1)
    assert _compiled(database_url, CLASSIFIED) == []
    assert len(_compiled(database_url, "Ana Souza")) == 1


def test_an_agents_compile_does_not_read_a_turn_it_may_not_see(
    client: TestClient[Any], agent: Key, make_key: KeyFactory, database_url: str
) -> None:
    _enforce(client, make_key)
    session_id = open_session(client, agent, namespace="chat")["session_id"]
    said = [f"I live in {DENIED}.", "My name is Ana Souza."]
    turns = {"turns": [{"role": "user", "content": c, "occurred_at": AT} for c in said]}
    appended = client.post(f"/v1/sessions/{session_id}/turns", json=turns, headers=agent.headers)
    assert appended.status_code == 200, appended.text
    done = _compile(client, agent, session_id=session_id)
    assert (done["created"], done["skipped"]) == (1, 1)
    # Neither a fact nor the session's digest retells the turn it may not see.
    assert _compiled(database_url, DENIED) == []
    assert sorted(e.partition("/")[0] for _, e, _ in _compiled(database_url, "Ana Souza")) == [
        "digest",
        "rules",
    ]


def test_an_agents_compile_of_a_session_it_may_not_see_is_not_found(
    client: TestClient[Any], make_key: KeyFactory, agent: Key, database_url: str
) -> None:
    admin = _enforce(client, make_key)
    session_id = open_session(client, admin, namespace="vault", labels=["secret"])["session_id"]
    turns = {"turns": [{"role": "user", "content": f"I live in {CLASSIFIED}.", "occurred_at": AT}]}
    appended = client.post(f"/v1/sessions/{session_id}/turns", json=turns, headers=admin.headers)
    assert appended.status_code == 200, appended.text
    asked = client.post("/v1/compile", json={"session_id": session_id}, headers=agent.headers)
    # A session the policy denies the agent is not found, as an unknown one.
    unknown = client.post("/v1/compile", json={"session_id": UNKNOWN}, headers=agent.headers)
    assert (asked.status_code, asked.json()["code"]) == (404, "session_not_found")
    assert asked.json()["code"] == unknown.json()["code"]
    assert _compiled(database_url, CLASSIFIED) == []
