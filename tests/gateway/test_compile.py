"""Compile through real HTTP and a real PostgreSQL (ARCHITECTURE §12): a session's turns become
facts with provenance, a newer fact supersedes the older (and the raw turn that stated it), the
bundle never shows the superseded value; idempotent, safe under concurrency, async with reclaim;
every bad input a clear 4xx."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import psycopg
from litestar.testing import TestClient

from gateway.shell.runtime import start_runtime
from gateway.shell.settings import Settings
from tests.conftest import Key, KeyFactory
from tests.gateway.sessions_helpers import open_session

PLAN_OLD = "We're on the Starter plan for Tallyworks, which caps us at 10 seats."
PLAN_NEW = "Done. Your Tallyworks workspace is now on the Premium plan with 25 seats."


def turns(client: TestClient[Any], key: Key, session_id: str, *items: tuple[str, str, str]) -> None:
    body = {"turns": [{"role": r, "content": c, "occurred_at": at} for r, c, at in items]}
    response = client.post(f"/v1/sessions/{session_id}/turns", json=body, headers=key.headers)
    assert response.status_code == 200, response.text


def compile_(client: TestClient[Any], key: Key, **body: Any) -> Any:
    return client.post("/v1/compile", json=body, headers=key.headers)


def plan_session(
    client: TestClient[Any], key: Key, namespace: str = "chat", *, remember_turns: bool = True
) -> str:
    session_id: str = open_session(client, key, namespace=namespace, remember_turns=remember_turns)[
        "session_id"
    ]
    turns(
        client,
        key,
        session_id,
        ("user", PLAN_OLD, "2024-01-02T10:00:00Z"),
        ("assistant", "Noted.", "2024-01-02T10:00:05Z"),
        ("user", "Please upgrade us, we need more seats.", "2024-02-10T09:00:00Z"),
        ("assistant", PLAN_NEW, "2024-02-10T09:00:05Z"),
    )
    return session_id


def test_a_compile_writes_facts_and_the_newer_plan_supersedes_the_older(
    client: TestClient[Any], agent: Key
) -> None:
    session_id = plan_session(client, agent)
    done = compile_(client, agent, session_id=session_id)
    assert done.status_code == 200, done.text
    body = done.json()
    assert body["status"] == "completed" and body["created"] == 2
    assert body["superseded"] == 1 and body["conflicts"] == 0 and body["skipped"] == 0

    context = client.post(
        "/v1/context",
        json={"task": "Which Tallyworks plan are we on?", "budget_tokens": 800},
        headers=agent.headers,
    ).json()
    assert "Premium" in context["bundle"] and "Starter" not in context["bundle"]
    superseded = [e for e in context["excluded"] if e["reason"] == "superseded"]
    # The older fact and the raw turn that stated it, each naming its decision.
    assert len(superseded) == 2
    assert all("(decision " in e["detail"] for e in superseded)

    listed = client.get(f"/v1/compile/{body['job_id']}", headers=agent.headers).json()
    assert listed["status"] == "completed" and listed["counts"]["created"] == 2
    assert listed["extractor"].startswith("rules/") and listed["session_id"] == session_id


def test_timeline_shows_the_decision_and_the_provenance(
    client: TestClient[Any], agent: Key, database_url: str
) -> None:
    session_id = plan_session(client, agent)
    job_id = compile_(client, agent, session_id=session_id).json()["job_id"]
    with psycopg.connect(database_url) as conn:
        rows = conn.execute(
            "SELECT older, newer, rule, claim_key, job_id FROM supersessions ORDER BY rule"
        ).fetchall()
        facts = conn.execute(
            "SELECT memory_id, claim_key, extractor, sources, valid_from FROM memories"
            " WHERE extractor LIKE 'rules/%%' ORDER BY valid_from"
        ).fetchall()
    assert [r[2] for r in rows] == ["claim_key", "source"]
    assert all(r[3] == "account.plan" and r[4] == job_id for r in rows)
    older, newer = facts
    assert older[1] == newer[1] == "account.plan" and older[2].startswith("rules/")
    assert len(older[3]) == 2  # the turn id and its remembered memory's id
    assert older[4] == datetime(2024, 1, 2, 10, tzinfo=UTC)
    # Erasure finds the facts derived from a turn by its id.
    with psycopg.connect(database_url) as conn:
        derived = conn.execute(
            "SELECT memory_id FROM memories WHERE sources @> ARRAY[%s]", (older[3][0],)
        ).fetchall()
    assert [d[0] for d in derived] == [older[0]]

    timeline = client.post(
        "/v1/timeline", json={"ids": [older[0], newer[0]]}, headers=agent.headers
    ).json()
    entries = {e["memory_id"]: e for e in timeline["entries"]}
    decision = entries[older[0]]["supersession"]
    assert decision["rule"] == "claim_key" and decision["newer"] == newer[0]
    assert decision["claim_key"] == "account.plan" and decision["job_id"] == job_id
    assert entries[newer[0]]["supersession"] is None
    assert entries[newer[0]]["extractor"].startswith("rules/")


def test_a_second_compile_creates_nothing_and_new_turns_are_picked_up(
    client: TestClient[Any], agent: Key
) -> None:
    session_id = plan_session(client, agent)
    assert compile_(client, agent, session_id=session_id).json()["created"] == 2
    again = compile_(client, agent, session_id=session_id).json()
    assert (again["created"], again["superseded"], again["skipped"]) == (0, 0, 0)
    turns(client, agent, session_id, ("user", "My name is Ana Souza.", "2024-03-01T08:00:00Z"))
    more = compile_(client, agent, session_id=session_id).json()
    assert more["created"] == 1 and more["superseded"] == 0


def test_a_namespace_compile_reads_its_episodic_memories(
    client: TestClient[Any], agent: Key
) -> None:
    for content in ("I live in Columbus.", "Now that I'm in Pittsburgh, I miss my old gym."):
        written = client.post(
            "/v1/memories",
            json={
                "namespace": "notes",
                "memory_type": "episodic",
                "heading": "turn",
                "content": content,
            },
            headers=agent.headers,
        )
        assert written.status_code == 201
    done = compile_(client, agent, namespace="notes").json()
    assert done["created"] == 2 and done["superseded"] == 1
    assert compile_(client, agent, namespace="notes").json()["created"] == 0


def test_an_update_without_its_noun_supersedes_the_claim_an_earlier_compile_wrote(
    client: TestClient[Any], agent: Key
) -> None:
    # Two sessions compiled one after the other: the second names no noun for its amount, and
    # the live claims of its namespace (not of another) say which amount it changes.
    def session(namespace: str, content: str, at: str) -> str:
        session_id: str = open_session(client, agent, namespace=namespace)["session_id"]
        turns(client, agent, session_id, ("user", content, at))
        return session_id

    budget = "Fixed costs: rent is $1,850, my parking spot is $120 a month."
    update = "Signed the renewal. Now that I'm paying $1,975 a month, I need to cut back."
    first = compile_(client, agent, session_id=session("rent", budget, "2024-05-12T12:00:00Z"))
    assert first.json()["created"] == 2
    second = compile_(client, agent, session_id=session("rent", update, "2024-08-06T12:00:00Z"))
    # The new rent, superseding the old one (and what stated it).
    assert (second.json()["created"], second.json()["superseded"]) == (1, 2)
    context = client.post(
        "/v1/context",
        json={"task": "How much is my rent?", "namespaces": ["rent"], "budget_tokens": 800},
        headers=agent.headers,
    ).json()
    assert "$1,975" in context["bundle"] and "$1,850" not in context["bundle"]
    # Another namespace's claims are not known to it: nothing to resolve, no fact.
    elsewhere = compile_(client, agent, session_id=session("other", update, "2024-08-06T12:00:00Z"))
    assert (elsewhere.json()["created"], elsewhere.json()["superseded"]) == (0, 0)


def test_an_empty_scope_compiles_to_zeros(client: TestClient[Any], agent: Key) -> None:
    done = compile_(client, agent, namespace="nothing-here")
    assert done.status_code == 200
    assert {k: done.json()[k] for k in ("status", "created", "superseded", "conflicts")} == {
        "status": "completed",
        "created": 0,
        "superseded": 0,
        "conflicts": 0,
    }


def test_bad_compile_requests_are_4xx_naming_the_field(
    client: TestClient[Any], agent: Key, make_key: KeyFactory
) -> None:
    neither = compile_(client, agent)
    assert neither.status_code == 422
    assert {e["field"] for e in neither.json()["errors"]} == {"session_id", "namespace"}
    both = compile_(client, agent, namespace="a", session_id="01JDZ6Q0000000000000000000")
    assert both.status_code == 422
    unknown = compile_(client, agent, namespace="a", extractor="magic")
    assert unknown.status_code == 422 and unknown.json()["errors"][0]["field"] == "extractor"
    missing = compile_(client, agent, session_id="01JDZ6Q0000000000000000000")
    assert missing.status_code == 404 and missing.json()["code"] == "session_not_found"
    narrow = make_key(namespaces=("mine",))
    forbidden = compile_(client, narrow, namespace="theirs")
    assert forbidden.status_code == 403
    bad_id = compile_(client, agent, session_id="not-an-id")
    assert bad_id.status_code == 422 and bad_id.json()["errors"][0]["field"] == "session_id"
    extra = compile_(client, agent, namespace="a", surprise=True)
    assert extra.status_code == 422
    auditor = make_key(role="auditor")
    assert compile_(client, auditor, namespace="a").status_code == 403


def test_a_job_of_another_tenant_is_not_found(
    client: TestClient[Any], agent: Key, make_key: KeyFactory
) -> None:
    job_id = compile_(client, agent, namespace="chat").json()["job_id"]
    other = make_key(tenant="globex")
    assert client.get(f"/v1/compile/{job_id}", headers=other.headers).status_code == 404
    narrow = make_key(namespaces=("elsewhere",))
    assert client.get(f"/v1/compile/{job_id}", headers=narrow.headers).status_code == 404
    assert client.get(f"/v1/compile/{job_id}", headers=agent.headers).status_code == 200


def test_an_async_compile_is_run_by_the_worker(client: TestClient[Any], agent: Key) -> None:
    session_id = plan_session(client, agent)
    accepted = compile_(client, agent, session_id=session_id, **{"async": True})
    assert accepted.status_code == 202 and accepted.json()["status"] == "pending"
    job_id = accepted.json()["job_id"]
    deadline = datetime.now(UTC) + timedelta(seconds=30)
    while True:
        job = client.get(f"/v1/compile/{job_id}", headers=agent.headers).json()
        if job["status"] in ("completed", "failed") or datetime.now(UTC) > deadline:
            break
    assert job["status"] == "completed" and job["counts"]["created"] == 2
    assert job["attempts"] == 1 and job["finished_at"] is not None


def test_an_interrupted_job_is_reclaimed_and_resumed(
    settings: Settings, agent: Key, database_url: str
) -> None:
    async def run() -> tuple[str, int]:
        async with start_runtime(settings) as runtime:
            auth = f"Bearer {agent.key}"
            from gateway.requests import SessionIn, TurnIn, TurnsShape

            info = await runtime.sessions.create(auth, SessionIn("chat", "plan"))
            await runtime.sessions.append(
                auth, info.session_id, TurnsShape([TurnIn("user", "My name is Ana Souza.")])
            )
            # A job some process claimed, then died: running, its heartbeat long silent.
            stale = datetime.now(UTC) - timedelta(hours=1)
            with psycopg.connect(database_url, autocommit=True) as conn:
                conn.execute(
                    "INSERT INTO compile_jobs (tenant_id, job_id, namespace, session_id,"
                    " extractor, status, attempts, agent_id, requested_by_key, requested_at,"
                    " heartbeat_at) VALUES (%s, '01JDZ6Q0000000000000000001', 'chat', %s,"
                    " %s, 'running', 1, 'agent-1', %s, %s, %s)",
                    (
                        agent.tenant_id,
                        info.session_id,
                        "rules/" + next(iter(runtime.compiler.extractors.values())).version,
                        agent.key_id,
                        stale,
                        stale,
                    ),
                )
            deadline = asyncio.get_running_loop().time() + 30
            while asyncio.get_running_loop().time() < deadline:
                job = await runtime.compiler.status(auth, "01JDZ6Q0000000000000000001")
                if job.status == "completed":
                    return job.status, job.attempts
                await asyncio.sleep(0.2)
            return job.status, job.attempts

    status, attempts = asyncio.run(run())
    assert (status, attempts) == ("completed", 2)


def test_concurrent_compiles_of_one_scope_never_duplicate(
    served: str, agent: Key, database_url: str
) -> None:
    async def run() -> list[dict[str, Any]]:
        async with httpx.AsyncClient(base_url=served, headers=agent.headers) as http:
            created = await http.post("/v1/sessions", json={"namespace": "race", "task": "t"})
            session_id = created.json()["session_id"]
            body = {
                "turns": [
                    {
                        "role": "user",
                        "content": f"My favorite color is shade {i}.",
                        "occurred_at": f"2024-01-{i + 1:02d}T10:00:00Z",
                    }
                    for i in range(20)
                ]
            }
            assert (await http.post(f"/v1/sessions/{session_id}/turns", json=body)).is_success
            answers = await asyncio.gather(
                *(http.post("/v1/compile", json={"session_id": session_id}) for _ in range(4))
            )
            return [a.json() for a in answers]

    answers = asyncio.run(run())
    assert all(a["status"] == "completed" for a in answers)
    assert sum(a["created"] for a in answers) == 20
    assert sum(a["superseded"] for a in answers) == 19
    with psycopg.connect(database_url) as conn:
        facts = conn.execute(
            "SELECT count(*), count(*) FILTER (WHERE deleted_at IS NULL) FROM memories"
            " WHERE extractor LIKE 'rules/%%'"
        ).fetchone()
        digests = conn.execute(
            "SELECT count(*), count(*) FILTER (WHERE superseded_by IS NULL) FROM memories"
            " WHERE extractor LIKE 'digest/%%'"
        ).fetchone()
    assert facts == (20, 1)
    assert digests == (1, 1)  # one digest of the session, however many compiles ran


def test_a_write_with_a_claim_key_supersedes_the_older_one(
    client: TestClient[Any], agent: Key
) -> None:
    def write(content: str, claim_key: str) -> Any:
        return client.post(
            "/v1/memories",
            json={
                "namespace": "acct",
                "heading": "plan",
                "content": content,
                "claim_key": claim_key,
            },
            headers=agent.headers,
        )

    first = write("The account is on the Pro plan.", "account.plan").json()["memory_id"]
    second = write("The account is on the Enterprise plan.", "account.plan").json()["memory_id"]
    timeline = client.post(
        "/v1/timeline", json={"ids": [first, second]}, headers=agent.headers
    ).json()
    entries = {e["memory_id"]: e for e in timeline["entries"]}
    assert entries[first]["superseded_by"] == second
    assert entries[first]["supersession"]["rule"] == "claim_key"
    assert entries[second]["superseded_by"] is None
    other = write("The user works at Initech.", "user.employer")
    assert other.status_code == 201
    for bad in ("Account.plan", "1plan", "plan key", "a" * 65, "plan-key"):
        refused = write("x", bad)
        assert refused.status_code == 422, bad
        assert refused.json()["errors"][0]["field"] == "claim_key"


def test_facts_of_one_instant_conflict_until_resolved(client: TestClient[Any], agent: Key) -> None:
    session_id = open_session(client, agent, namespace="team")["session_id"]
    at = "2024-05-01T09:00:00Z"
    turns(
        client,
        agent,
        session_id,
        ("user", "I'm on the Payments team.", at),
        ("user", "I'm on the Fraud team.", at),
    )
    done = compile_(client, agent, session_id=session_id).json()
    assert done["conflicts"] == 1 and done["superseded"] == 0
    page = client.get("/v1/conflicts", headers=agent.headers).json()
    [conflict] = page["conflicts"]
    assert conflict["claim_key"] == "user.team" and page["next_after"] is None
    assert [s["agent_id"] for s in conflict["sides"]] == ["agent-1", "agent-1"]
    assert all(s["written_by_key"] == agent.key_id for s in conflict["sides"])
    fraud = next(s["memory_id"] for s in conflict["sides"] if "Fraud" in s["heading"])
    path = f"/v1/conflicts/{conflict['conflict_id']}/resolve"
    wrong = client.post(
        path, json={"winner": "01JDZ6Q0000000000000000000", "reason": "x"}, headers=agent.headers
    )
    assert wrong.status_code == 422 and wrong.json()["errors"][0]["field"] == "winner"
    resolved = client.post(
        path, json={"winner": fraud, "reason": "the transfer went through"}, headers=agent.headers
    )
    assert resolved.status_code == 200, resolved.text
    assert resolved.json()["winner"] == fraud and resolved.json()["decision_id"]
    again = client.post(path, json={"winner": fraud, "reason": "x"}, headers=agent.headers)
    assert again.status_code == 409
    assert client.get("/v1/conflicts", headers=agent.headers).json()["conflicts"] == []
    everything = client.get("/v1/conflicts?status=all", headers=agent.headers).json()
    assert len(everything["conflicts"]) == 1
    bundle = client.post(
        "/v1/context", json={"task": "Which team am I on?"}, headers=agent.headers
    ).json()["bundle"]
    assert "Fraud" in bundle and "Payments" not in bundle
    other = client.post(
        path, json={"winner": fraud, "reason": "x"}, headers={"Authorization": "Bearer nope"}
    )
    assert other.status_code == 401


NOT_ENGLISH = (
    "Ich heiße Jonas und arbeite seit 2021 bei der Firma Nordlicht in Hamburg.",
    "Mein Gehalt beträgt jetzt 85.000 € im Jahr, vorher waren es 72.000 €.",
    "私は東京に住んでいて、毎朝七時に起きます。犬を二匹飼っています。",
    "أعيش في القاهرة منذ خمس سنوات وأعمل مهندسًا.",
    "Сейчас я живу в Казани, раньше жил в Москве.",
    "🙂🙂 ¿Dónde está la biblioteca? Está cerca del parque, a 300 metros.",
)


def test_a_conversation_in_other_languages_compiles_without_error_or_invented_facts(
    client: TestClient[Any], agent: Key
) -> None:
    """The rules read English; other languages pass through a compile as text they cannot read:
    the job completes, and no fact is written from a sentence it did not understand."""
    session_id: str = open_session(client, agent, namespace="abroad")["session_id"]
    turns(
        client,
        agent,
        session_id,
        *(("user", text, f"2024-03-0{n + 1}T10:00:00Z") for n, text in enumerate(NOT_ENGLISH)),
    )
    done = compile_(client, agent, session_id=session_id)
    assert done.status_code == 200, done.text
    assert done.json()["status"] == "completed"
    assert (done.json()["created"], done.json()["superseded"], done.json()["conflicts"]) == (
        0,
        0,
        0,
    )
