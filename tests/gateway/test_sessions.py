"""Sessions and their history through real HTTP and a real PostgreSQL: create, append, read,
page; every bad input a 4xx naming its field; the history append-only and gapless."""

from __future__ import annotations

import asyncio
from typing import Any

import psycopg
import pytest
from litestar.testing import TestClient

from gateway.requests import SessionIn, TurnIn, TurnsShape
from gateway.shell.clock import new_ulid, system_clock
from gateway.shell.runtime import start_runtime
from gateway.shell.settings import Settings
from tests.conftest import Key, KeyFactory
from tests.gateway.sessions_helpers import append, open_session, receipt_body


def fields(response: Any) -> dict[str, str]:
    return {e["field"]: e["message"] for e in response.json().get("errors", [])}


def test_a_session_is_created_once_per_idempotency_key(client: TestClient[Any], agent: Key) -> None:
    first = open_session(client, agent, idempotency_key="k1", labels=["trip", "trip"])
    assert first["created"] and first["turn_count"] == 0 and first["labels"] == ["trip"]
    assert first["memory_budget_tokens"] == 1000  # a quarter of the default 4000
    again = client.post(
        "/v1/sessions",
        json={
            "namespace": "chat",
            "task": "Help the user plan a trip to Lisbon.",
            "idempotency_key": "k1",
            "labels": ["trip"],
        },
        headers=agent.headers,
    )
    assert again.status_code == 200 and again.json()["session_id"] == first["session_id"]
    other = client.post(
        "/v1/sessions",
        json={"namespace": "chat", "task": "Something else", "idempotency_key": "k1"},
        headers=agent.headers,
    )
    assert other.status_code == 409 and other.json()["code"] == "idempotency_conflict"


def test_appends_number_turns_from_one_and_read_back_in_order(
    client: TestClient[Any], agent: Key, make_key: KeyFactory
) -> None:
    session_id = open_session(client, agent)["session_id"]
    first = append(
        client, agent, session_id, ("user", "Hi, I land on 3 May."), ("assistant", "Ok.")
    )
    assert first.status_code == 200, first.text
    assert (first.json()["first_seq"], first.json()["last_seq"]) == (1, 2)
    second = append(client, agent, session_id, ("tool", "weather: 24C"))
    assert (second.json()["first_seq"], second.json()["last_seq"]) == (3, 3)
    info = client.get(f"/v1/sessions/{session_id}", headers=agent.headers).json()
    assert info["turn_count"] == 3 and info["latest_summary"] is None
    page = client.get(f"/v1/sessions/{session_id}/turns?limit=2", headers=agent.headers)
    assert page.status_code == 200, page.text
    body = page.json()
    assert [t["seq"] for t in body["turns"]] == [1, 2] and body["next_after"] == 2
    assert body["turns"][0]["content"] == "Hi, I land on 3 May."
    assert body["turns"][0]["turn_id"] == first.json()["turn_ids"][0]
    rest = client.get(f"/v1/sessions/{session_id}/turns?after=2", headers=agent.headers).json()
    assert [t["seq"] for t in rest["turns"]] == [3] and rest["next_after"] is None
    # Reading the history is a disclosure: receipted, naming the turns it showed.
    receipt = receipt_body(client, make_key, body["receipt_id"])
    assert receipt["kind"] == "history"
    assert [i["seq"] for i in receipt["included"]] == [1, 2]


def test_remember_turns_writes_each_turn_as_an_episodic_memory(
    client: TestClient[Any], agent: Key
) -> None:
    session_id = open_session(client, agent)["session_id"]
    appended = append(client, agent, session_id, ("user", "My passport number is X1234567."))
    [memory_id] = appended.json()["memory_ids"]
    fetched = client.post("/v1/fetch", json={"ids": [memory_id]}, headers=agent.headers).json()
    [memory] = fetched["memories"]
    assert memory["memory_type"] == "episodic" and memory["source_type"] == "turn"
    assert memory["source_ref"] == appended.json()["turn_ids"][0]
    assert memory["content"] == "My passport number is X1234567."
    quiet = open_session(client, agent, remember_turns=False)["session_id"]
    assert append(client, agent, quiet, ("user", "not remembered")).json()["memory_ids"] == []


def test_an_append_retried_with_its_key_is_answered_as_the_first_time(
    client: TestClient[Any], agent: Key
) -> None:
    session_id = open_session(client, agent)["session_id"]
    first = append(client, agent, session_id, ("user", "a"), ("user", "b"), idempotency_key="x")
    again = append(client, agent, session_id, ("user", "a"), ("user", "b"), idempotency_key="x")
    assert again.status_code == 200 and not again.json()["created"]
    assert again.json()["turn_ids"] == first.json()["turn_ids"]
    assert client.get(f"/v1/sessions/{session_id}", headers=agent.headers).json()["turn_count"] == 2
    clash = append(client, agent, session_id, ("user", "c"), idempotency_key="x")
    assert clash.status_code == 409 and clash.json()["code"] == "idempotency_conflict"


def test_every_bad_turn_is_named(client: TestClient[Any], agent: Key) -> None:
    session_id = open_session(client, agent)["session_id"]
    big = "x" * (64 * 1024 + 1)
    response = client.post(
        f"/v1/sessions/{session_id}/turns",
        json={
            "turns": [
                {"role": "user", "content": ""},
                {"role": "robot", "content": "hi"},
                {"role": "user", "content": big},
                {"role": "user", "content": "   "},
                {"role": "user", "content": "ok", "colour": "red"},
            ]
        },
        headers=agent.headers,
    )
    assert response.status_code == 422, response.text
    named = fields(response)
    assert set(named) == {
        "turns/0/content",
        "turns/1/role",
        "turns/2/content",
        "turns/3/content",
        "turns/4/colour",
    }
    assert "exceeds the limit" in named["turns/2/content"]
    too_many = client.post(
        f"/v1/sessions/{session_id}/turns",
        json={"turns": [{"role": "user", "content": "hi"}] * 101},
        headers=agent.headers,
    )
    assert too_many.status_code == 422 and "turns" in fields(too_many)


def test_occurred_at_never_goes_backwards_nor_into_the_future(
    client: TestClient[Any], agent: Key
) -> None:
    session_id = open_session(client, agent)["session_id"]

    def turns(*times: str) -> Any:
        body = {"turns": [{"role": "user", "content": "x", "occurred_at": t} for t in times]}
        return client.post(f"/v1/sessions/{session_id}/turns", json=body, headers=agent.headers)

    backwards = turns("2024-05-02T10:00:00Z", "2024-05-01T10:00:00Z")
    assert backwards.status_code == 422 and "turns/1/occurred_at" in fields(backwards)
    future = turns("2999-01-01T00:00:00Z")
    assert future.status_code == 422 and "future" in fields(future)["turns/0/occurred_at"]
    naive = turns("2024-05-02T10:00:00")
    assert naive.status_code == 422 and "turns/0/occurred_at" in fields(naive)
    assert turns("2024-05-01T10:00:00Z", "2024-05-01T10:00:00Z").status_code == 200
    # Against the history too: an import may not land before what is already there.
    earlier = turns("2024-04-30T10:00:00Z")
    assert earlier.status_code == 422 and "goes backwards" in fields(earlier)["turns/0/occurred_at"]
    assert client.get(f"/v1/sessions/{session_id}", headers=agent.headers).json()["turn_count"] == 2


def test_bad_sessions_are_refused_with_the_field(
    client: TestClient[Any], agent: Key, make_key: KeyFactory
) -> None:
    small = client.post(
        "/v1/sessions",
        json={"namespace": "chat", "task": "Plan a trip", "budget_tokens": 40},
        headers=agent.headers,
    )
    assert small.status_code == 422 and small.json()["code"] == "budget_too_small"
    assert "the minimum for this session is" in fields(small)["budget_tokens"]
    narrow = make_key(namespaces=("chat",))
    forbidden = client.post(
        "/v1/sessions", json={"namespace": "hr", "task": "x"}, headers=narrow.headers
    )
    assert forbidden.status_code == 403 and forbidden.json()["code"] == "namespace_forbidden"
    missing = client.post("/v1/sessions", json={"namespace": "chat"}, headers=agent.headers)
    assert missing.status_code == 422 and fields(missing) == {"task": "required"}
    auditor = make_key(role="auditor")
    assert (
        client.post(
            "/v1/sessions", json={"namespace": "chat", "task": "x"}, headers=auditor.headers
        ).status_code
        == 403
    )


def test_another_tenants_session_is_not_found(
    client: TestClient[Any], agent: Key, make_key: KeyFactory
) -> None:
    session_id = open_session(client, agent)["session_id"]
    stranger = make_key(tenant="globex")
    narrow = make_key(namespaces=("ops",))
    for key in (stranger, narrow):
        for response in (
            client.get(f"/v1/sessions/{session_id}", headers=key.headers),
            client.get(f"/v1/sessions/{session_id}/turns", headers=key.headers),
            append(client, key, session_id, ("user", "hi")),
            client.post(f"/v1/sessions/{session_id}/context", json={}, headers=key.headers),
        ):
            assert response.status_code == 404, response.text
            assert response.json()["code"] == "session_not_found"
    unknown = client.get(f"/v1/sessions/{new_ulid(system_clock())}", headers=agent.headers)
    assert unknown.status_code == 404


def test_turns_and_summaries_are_append_only(
    client: TestClient[Any], agent: Key, database_url: str
) -> None:
    session_id = open_session(client, agent)["session_id"]
    append(client, agent, session_id, ("user", "hello there"))
    with psycopg.connect(database_url, autocommit=True) as conn:
        for statement in (
            "UPDATE session_turns SET content = 'changed'",
            "DELETE FROM session_turns",
            "TRUNCATE session_turns CASCADE",
            "UPDATE sessions SET task = 'another task'",
            "UPDATE sessions SET turn_count = 0",
            "DELETE FROM sessions",
        ):
            with pytest.raises(psycopg.errors.Error):
                conn.execute(statement)


def test_concurrent_appends_never_share_nor_skip_a_seq(settings: Settings, agent: Key) -> None:
    """Two writers appending at once to one session (real concurrency: two pooled connections):
    every seq from 1 to the total is given exactly once."""
    writers, batches, per_batch = 2, 8, 5

    async def run() -> list[int]:
        async with start_runtime(settings) as runtime:
            auth = f"Bearer {agent.key}"
            info = await runtime.sessions.create(
                auth, SessionIn("chat", "race", remember_turns=False)
            )

            async def writer(w: int) -> list[int]:
                seqs: list[int] = []
                for b in range(batches):
                    turns = [TurnIn("user", f"w{w} b{b} t{t}") for t in range(per_batch)]
                    done = await runtime.sessions.append(auth, info.session_id, TurnsShape(turns))
                    seqs.extend(range(done.first_seq, done.last_seq + 1))
                return seqs

            results = await asyncio.gather(*(writer(w) for w in range(writers)))
            return [seq for seqs in results for seq in seqs]

    seqs = asyncio.run(run())
    assert sorted(seqs) == list(range(1, writers * batches * per_batch + 1))
