"""A compiled session's digest (ARCHITECTURE §12), through real HTTP and a real PostgreSQL: one
episodic memory retelling the session, its sources the turns it retells, folded again as new
turns are compiled (the newer version superseding the older), one per session and versions
however many compiles run at once."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import psycopg
import pytest
from litestar.testing import TestClient

from gateway.usecases.compiling import jobs as compiling
from tests.conftest import Key
from tests.gateway.test_compile import compile_, plan_session, turns

DIGESTS = (
    "SELECT memory_id, content, sources, superseded_by, memory_type, source_ref FROM memories"
    " WHERE extractor LIKE 'digest/%%' ORDER BY memory_id"
)


def test_a_compiled_session_is_recalled_as_one_digest(
    client: TestClient[Any], agent: Key, database_url: str
) -> None:
    session_id = plan_session(client, agent)
    assert compile_(client, agent, session_id=session_id).json()["status"] == "completed"
    with psycopg.connect(database_url) as conn:
        [digest] = conn.execute(DIGESTS).fetchall()
        kept = conn.execute(
            "SELECT turn_id FROM session_turns WHERE session_id = %s AND seq <> 1", (session_id,)
        ).fetchall()
    memory_id, content, sources, superseded_by, memory_type, source_ref = digest
    assert (memory_type, source_ref, superseded_by) == ("episodic", session_id, None)
    assert content.startswith("Session of 4 turns, 2024-01-02 to 2024-02-10.\n")
    assert "Premium" in content
    # The turn stating the superseded plan was retired by compile: the digest does not retell it.
    assert "Starter" not in content
    assert {t[0] for t in kept} <= set(sources)

    bundle = client.post(
        "/v1/context",
        json={"task": "What did we do about the seats in that session?", "budget_tokens": 800},
        headers=agent.headers,
    ).json()["bundle"]
    assert "Session digest, 2024-01-02 to 2024-02-10" in bundle

    turns(
        client, agent, session_id, ("user", "We also hired two designers.", "2024-03-01T09:00:00Z")
    )
    assert compile_(client, agent, session_id=session_id).json()["status"] == "completed"
    assert compile_(client, agent, session_id=session_id).json()["created"] == 0
    with psycopg.connect(database_url) as conn:
        older, newer = conn.execute(DIGESTS).fetchall()
    assert older[0] == memory_id and older[3] == newer[0] and newer[3] is None
    assert newer[1].startswith("Session of 5 turns, 2024-01-02 to 2024-03-01.\n")
    assert "designers" in newer[1] and "Premium" in newer[1]
    assert memory_id in newer[2]  # folded from the one before: erasing a turn reaches it
    timeline = client.post("/v1/timeline", json={"ids": [memory_id]}, headers=agent.headers)
    assert timeline.json()["entries"][0]["superseded_by"] == newer[0]


def test_concurrent_compiles_fold_one_digest_chain(
    served: str, agent: Key, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(compiling, "CHUNK_EPISODES", 5)  # 23 turns: five chunks, five folds

    async def run() -> list[dict[str, Any]]:
        async with httpx.AsyncClient(base_url=served, headers=agent.headers, timeout=60) as http:
            created = await http.post("/v1/sessions", json={"namespace": "race", "task": "t"})
            session_id = created.json()["session_id"]
            body = {
                "turns": [
                    {
                        "role": "user",
                        "content": f"Step {i}: we deployed build {100 + i} to staging.",
                        "occurred_at": f"2024-01-{i + 1:02d}T10:00:00Z",
                    }
                    for i in range(23)
                ]
            }
            assert (await http.post(f"/v1/sessions/{session_id}/turns", json=body)).is_success
            answers = await asyncio.gather(
                *(http.post("/v1/compile", json={"session_id": session_id}) for _ in range(4))
            )
            return [a.json() for a in answers]

    answers = asyncio.run(run())
    assert all(a["status"] == "completed" for a in answers), answers
    with psycopg.connect(database_url) as conn:
        digests = conn.execute(DIGESTS).fetchall()
    assert len(digests) == 5
    live = [d for d in digests if d[3] is None]
    assert len(live) == 1 and live[0][1].startswith(
        "Session of 23 turns, 2024-01-01 to 2024-01-23.\n"
    )
    # A chain: each version superseded by the next, each folded from the one before.
    by_id = {d[0]: d for d in digests}
    chain = [d for d in digests if not any(d[0] in other[2] for other in digests)]
    assert len(chain) == 1  # only the newest is no other's source
    assert all(by_id[d[3]][2][0] == d[0] for d in digests if d[3] is not None)
