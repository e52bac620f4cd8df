"""A compile too large for one request (issue 33): queued and answered 202 with its job, whose
progress (episodes read of the scope's total) rises chunk by chunk to the end; a small one still
answers in the request, its progress complete. Real HTTP, real PostgreSQL; the limits are made
small so that a few turns span many chunks."""

from __future__ import annotations

import time
from typing import Any

import pytest
from litestar.testing import TestClient

from gateway.client import calls
from gateway.usecases.compiling import jobs
from tests.conftest import Key
from tests.gateway.sessions_helpers import open_session
from tests.gateway.test_compile import compile_, turns

TURNS = 13


def _conversation(client: TestClient[Any], agent: Key) -> str:
    session_id: str = open_session(client, agent, namespace="chat")["session_id"]
    said = [
        ("user" if n % 2 == 0 else "assistant", f"Note {n}: the deploy runs step {n}.",
         f"2024-01-02T10:{n:02d}:00Z")
        for n in range(TURNS)
    ]  # fmt: skip
    turns(client, agent, session_id, *said)
    return session_id


def test_a_scope_over_the_synchronous_limit_is_queued_and_polled_to_its_end(
    client: TestClient[Any], agent: Key, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(jobs, "SYNC_EPISODES", 5)
    monkeypatch.setattr(jobs, "CHUNK_EPISODES", 4)
    session_id = _conversation(client, agent)
    queued = compile_(client, agent, session_id=session_id)
    assert queued.status_code == 202, queued.text
    assert queued.json()["status"] == "pending"
    job_id = queued.json()["job_id"]
    assert queued.headers["location"] == f"/v1/compile/{job_id}"

    seen = []
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        job = client.get(f"/v1/compile/{job_id}", headers=agent.headers).json()
        seen.append(job["progress"])
        if job["status"] in ("completed", "failed"):
            break
        time.sleep(0.01)
    assert job["status"] == "completed", job
    assert job["progress"] == {"episodes_read": TURNS, "episodes_total": TURNS}
    read = [p["episodes_read"] for p in seen]
    assert read == sorted(read)  # never backwards
    assert all(p["episodes_total"] in (None, TURNS) for p in seen)


def test_a_scope_within_the_limit_answers_in_the_request(
    client: TestClient[Any], agent: Key, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(jobs, "CHUNK_EPISODES", 4)
    session_id = _conversation(client, agent)
    done = compile_(client, agent, session_id=session_id)
    assert done.status_code == 200, done.text
    assert done.json()["status"] == "completed"
    job = client.get(f"/v1/compile/{done.json()['job_id']}", headers=agent.headers).json()
    assert job["progress"] == {"episodes_read": TURNS, "episodes_total": TURNS}
    again = compile_(client, agent, session_id=session_id)  # nothing new to read
    job = client.get(f"/v1/compile/{again.json()['job_id']}", headers=agent.headers).json()
    assert job["progress"] == {"episodes_read": 0, "episodes_total": 0}


def test_the_client_reads_a_queued_compile_as_pending() -> None:
    call = calls.compile_now(session_id="s")
    queued = call.read(b'{"job_id": "01J", "status": "pending"}')
    assert (queued.job_id, queued.status, queued.created, queued.error) == (
        "01J",
        "pending",
        0,
        None,
    )
    done = call.read(
        b'{"job_id": "01J", "status": "completed", "created": 2, "superseded": 1,'
        b' "conflicts": 0, "skipped": 3, "error": null}'
    )
    assert (done.created, done.superseded, done.skipped) == (2, 1, 3)
