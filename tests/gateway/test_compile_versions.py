"""Compile with the rules extractor of 2026-12-05.1 through real HTTP and PostgreSQL: the
default names it; the earlier version is still selectable by a request, and a job stored with it
runs with it (its facts byte for byte what that version gave); a compile of text in other
languages, or of nothing, answers sensibly; a self-introduction gives identity facts; a newer
statement of one attribute in other words supersedes the older, in the bundle too."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
from litestar.testing import TestClient

from gateway.core.extraction import RULES, RULES_TABLE
from gateway.shell.runtime import start_runtime
from gateway.shell.settings import Settings
from tests.conftest import Key
from tests.gateway.sessions_helpers import open_session
from tests.gateway.test_compile import compile_, turns

OLD = f"{RULES_TABLE[0]}/{RULES_TABLE[1]}"
NEW = f"{RULES[0]}/{RULES[1]}"


def _session(client: TestClient[Any], key: Key, namespace: str, *said: tuple[str, str]) -> str:
    session_id: str = open_session(client, key, namespace=namespace)["session_id"]
    turns(client, key, session_id, *[("user", text, at) for text, at in said])
    return session_id


def _facts(database_url: str, namespace: str) -> list[tuple[str, str | None, str | None]]:
    with psycopg.connect(database_url) as conn:
        rows = conn.execute(
            "SELECT extractor, claim_key, claim_value FROM memories WHERE namespace = %s"
            " AND extractor LIKE 'rules/%%' ORDER BY valid_from, claim_key",
            (namespace,),
        ).fetchall()
    return [(r[0], r[1], r[2]) for r in rows]


def test_the_default_is_the_new_version_and_the_old_one_is_selectable(
    client: TestClient[Any], agent: Key, database_url: str
) -> None:
    said = ("I weigh 185 pounds.", "2024-01-02T10:00:00Z")
    new = compile_(client, agent, session_id=_session(client, agent, "w-new", said)).json()
    old_session = _session(client, agent, "w-old", said)
    old = compile_(client, agent, session_id=old_session, extractor=OLD).json()
    for job, extractor in ((new, NEW), (old, OLD)):
        listed = client.get(f"/v1/compile/{job['job_id']}", headers=agent.headers).json()
        assert (listed["status"], listed["extractor"]) == ("completed", extractor)
    assert _facts(database_url, "w-new") == [(NEW, "user.weight_weigh", "185 pounds")]
    assert _facts(database_url, "w-old") == []  # the table had no pattern for a weight


def test_a_stored_job_naming_the_old_version_runs_with_it(
    settings: Settings, agent: Key, database_url: str
) -> None:
    async def run() -> str:
        async with start_runtime(settings) as runtime:
            auth = f"Bearer {agent.key}"
            from gateway.requests import SessionIn, TurnIn, TurnsShape

            info = await runtime.sessions.create(auth, SessionIn("stored", "plan"))
            await runtime.sessions.append(
                auth,
                info.session_id,
                TurnsShape([TurnIn("user", "We're on the Starter plan. I weigh 185 pounds.")]),
            )
            stale = datetime.now(UTC) - timedelta(hours=1)
            with psycopg.connect(database_url, autocommit=True) as conn:
                conn.execute(
                    "INSERT INTO compile_jobs (tenant_id, job_id, namespace, session_id,"
                    " extractor, status, attempts, agent_id, requested_by_key, requested_at,"
                    " heartbeat_at) VALUES (%s, '01JDZ6Q0000000000000000002', 'stored', %s,"
                    " %s, 'running', 1, 'agent-1', %s, %s, %s)",
                    (agent.tenant_id, info.session_id, OLD, agent.key_id, stale, stale),
                )
            deadline = asyncio.get_running_loop().time() + 30
            job = await runtime.compiler.status(auth, "01JDZ6Q0000000000000000002")
            while asyncio.get_running_loop().time() < deadline and job.status != "completed":
                await asyncio.sleep(0.2)
                job = await runtime.compiler.status(auth, "01JDZ6Q0000000000000000002")
            return job.status

    assert asyncio.run(run()) == "completed"
    assert _facts(database_url, "stored") == [(OLD, "account.plan", "Starter")]


def test_text_in_other_languages_compiles_to_no_facts_and_no_errors(
    client: TestClient[Any], agent: Key, database_url: str
) -> None:
    session_id = _session(
        client,
        agent,
        "foreign",
        ("Ich wiege 85 Kilo und wohne seit 2019 in Berlin.", "2024-01-02T10:00:00Z"),
        ("Je pèse 80 kilos et mon salaire est de 3 000 €.", "2024-01-03T10:00:00Z"),
        ("私の給料は500万円です。", "2024-01-04T10:00:00Z"),
        ("Мне 35 лет, я живу в Москве.", "2024-01-05T10:00:00Z"),
    )
    done = compile_(client, agent, session_id=session_id)
    assert done.status_code == 200, done.text
    body = done.json()
    assert (body["status"], body["created"], body["superseded"], body["conflicts"]) == (
        "completed",
        0,
        0,
        0,
    )
    assert _facts(database_url, "foreign") == []


def test_an_empty_session_compiles_to_zeros(client: TestClient[Any], agent: Key) -> None:
    session_id: str = open_session(client, agent, namespace="empty")["session_id"]
    done = compile_(client, agent, session_id=session_id)
    assert done.status_code == 200, done.text
    assert (done.json()["status"], done.json()["created"]) == ("completed", 0)


def test_a_self_introduction_gives_identity_facts(
    client: TestClient[Any], agent: Key, database_url: str
) -> None:
    session_id = _session(
        client,
        agent,
        "support",
        (
            "Hi, I'm Bob Martinez from Acme Inc. Enterprise plan. I can't reset my password.",
            "2024-01-02T10:00:00Z",
        ),
    )
    assert compile_(client, agent, session_id=session_id).json()["created"] == 3
    assert {(k, v) for _, k, v in _facts(database_url, "support")} == {
        ("user.name", "Bob Martinez"),
        ("user.employer", "Acme Inc"),
        ("account.plan", "Enterprise"),
    }


def test_a_newer_statement_in_other_words_supersedes_the_older_in_the_bundle(
    client: TestClient[Any], agent: Key
) -> None:
    for text, at in (
        ("I weigh 185 pounds.", "2024-01-02T10:00:00Z"),
        ("Three months of training and I'm down to 172 pounds now.", "2024-04-02T10:00:00Z"),
    ):
        session_id = _session(client, agent, "body", (text, at))
        assert compile_(client, agent, session_id=session_id).status_code == 200
    context = client.post(
        "/v1/context",
        json={"task": "How much do I weigh?", "namespaces": ["body"], "budget_tokens": 800},
        headers=agent.headers,
    ).json()
    assert "172 pounds" in context["bundle"] and "185 pounds" not in context["bundle"]
