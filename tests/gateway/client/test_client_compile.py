"""Compile and conflicts through the sync and async clients against the real gateway."""

from __future__ import annotations

import time

import httpx
import pytest

from gateway.client import AsyncClient, Client, InvalidRequestError
from tests.conftest import Key


def _conversation(served: str, key: Key, at: str) -> str:
    headers = {"Authorization": f"Bearer {key.key}"}
    with httpx.Client(base_url=served, headers=headers) as http:
        session_id = str(
            http.post("/v1/sessions", json={"namespace": "c", "task": "t"}).json()["session_id"]
        )
        turns = [
            {"role": "user", "content": "I'm on the Payments team.", "occurred_at": at},
            {"role": "user", "content": "I'm on the Fraud team.", "occurred_at": at},
        ]
        assert http.post(f"/v1/sessions/{session_id}/turns", json={"turns": turns}).is_success
    return session_id


def test_the_sync_client_compiles_lists_and_resolves(served: str, agent: Key) -> None:
    session_id = _conversation(served, agent, "2024-05-01T09:00:00Z")
    with Client(agent.key, served) as ctxgw:
        done = ctxgw.compile(session_id=session_id)
        assert done.status == "completed" and done.created == 2 and done.conflicts == 1
        assert ctxgw.compile_job(done.job_id).counts.conflicts == 1
        [conflict] = ctxgw.conflicts().conflicts
        winner = conflict.sides[1].memory_id
        resolved = ctxgw.resolve_conflict(conflict.conflict_id, winner, "the later news")
        assert resolved.winner == winner and resolved.resolved_at is not None
        assert ctxgw.conflicts().conflicts == []
        with pytest.raises(InvalidRequestError) as raised:
            ctxgw.compile(namespace="c", extractor="nope")
        assert [e.field for e in raised.value.errors] == ["extractor"]
        with pytest.raises(ValueError, match="exactly one scope"):
            ctxgw.compile()


@pytest.mark.anyio
async def test_the_async_client_queues_and_polls(served: str, agent: Key) -> None:
    session_id = _conversation(served, agent, "2024-05-02T09:00:00Z")
    async with AsyncClient(agent.key, served) as ctxgw:
        accepted = await ctxgw.compile_later(session_id=session_id)
        assert accepted.status == "pending"
        deadline = time.monotonic() + 30
        job = await ctxgw.compile_job(accepted.job_id)
        while job.status not in ("completed", "failed") and time.monotonic() < deadline:
            job = await ctxgw.compile_job(accepted.job_id)
        assert job.status == "completed" and job.counts.created == 2
        page = await ctxgw.conflicts(namespace="c", status="all")
        assert len(page.conflicts) == 1 and page.conflicts[0].claim_key == "user.team"
