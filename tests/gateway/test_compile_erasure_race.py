"""Erasure racing compile (ARCHITECTURE §12, §14): however a compile and erasures of its sources
interleave, no compiled memory, live or retired, keeps text derived from an erased source, and
every erasure answers 200.

A probe once found 26-116 of 60 facts keeping their text: the compile read a memory, an erasure
blanked it and looked for what was derived from it before the compile committed, and the fact
the compile then committed named an erased source with its text intact. Real HTTP through the
served app (its pool of 4 connections), the real PostgreSQL: a compile and an erasure of each of
its sources sent at once, each erasure after its own random delay, round after round.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable
from typing import Any

import httpx
import psycopg

from tests.conftest import Key, KeyFactory

ROUNDS = 10
MEMORIES = 30
SESSION_ROUNDS = 4
TURNS = 30
ERASED_TURNS = 20
# Ten claim keys, three values each: the compile supersedes within the chunk as it writes, so
# its transaction also retires facts an erasure may be blanking.
THINGS = ("book", "band", "food", "movie", "song", "color", "city", "game", "drink", "sport")
# Each erasure waits up to a round's spread, the compile up to half of it: some erasures land
# before the compile reads, some while it runs, some after it committed.
SPREADS = (0.02, 0.05, 0.1, 0.2)
REASON = {"reason": "subject request"}


def _said(i: int) -> str:
    return f"My favorite {THINGS[i % len(THINGS)]} is item {i}."


def _texts_left(database_url: str, tenant_id: str, erased: list[str]) -> list[tuple[str, str]]:
    """Every memory (live or retired) naming an erased source that still has a text."""
    with psycopg.connect(database_url) as conn:
        rows = conn.execute(
            "SELECT memory_id, heading || ' ' || content FROM memories"
            " WHERE tenant_id = %s AND sources && %s::text[]"
            " AND (content <> '' OR heading <> '' OR claim_value IS NOT NULL)",
            (tenant_id, erased),
        ).fetchall()
    return [(str(memory_id), str(text)) for memory_id, text in rows]


async def _after(delay: float, request: Awaitable[httpx.Response]) -> httpx.Response:
    await asyncio.sleep(delay)
    return await request


def test_no_compiled_text_outlives_an_erasure_of_its_memory(
    served: str, make_key: KeyFactory, database_url: str
) -> None:
    admin = make_key(role="admin", agent_id=None)
    rng = random.Random(20261204)

    async def round_(http: httpx.AsyncClient, n: int) -> tuple[list[str], list[int], Any]:
        namespace = f"race-{n}"
        items = [
            {
                "namespace": namespace,
                "memory_type": "episodic",
                "heading": "note",
                "content": _said(i),
            }
            for i in range(MEMORIES)
        ]
        written = await http.post("/v1/memories/batch", json={"items": items})
        assert written.status_code == 200, written.text
        ids = [item["memory_id"] for item in written.json()["items"]]
        spread = SPREADS[n % len(SPREADS)]
        erasures = [
            _after(rng.uniform(0, spread), http.post(f"/v1/memories/{m}/erase", json=REASON))
            for m in rng.sample(ids, len(ids))
        ]
        compile_ = http.post("/v1/compile", json={"namespace": namespace})
        compiled, *erased = await asyncio.gather(
            _after(rng.uniform(0, spread / 2), compile_), *erasures
        )
        return ids, [e.status_code for e in erased], compiled.json()

    async def run() -> list[tuple[list[str], list[int], Any]]:
        async with httpx.AsyncClient(base_url=served, headers=admin.headers, timeout=120) as http:
            return [await round_(http, n) for n in range(ROUNDS)]

    rounds = asyncio.run(run())
    for ids, statuses, compiled in rounds:
        assert statuses == [200] * MEMORIES
        assert compiled["status"] == "completed", compiled
        assert _texts_left(database_url, admin.tenant_id, ids) == []
    # The race was run: some compiles wrote facts before the erasures of their sources.
    assert sum(compiled["created"] for _, _, compiled in rounds) > 0


def test_no_compiled_text_or_digest_outlives_an_erasure_of_its_turn(
    served: str, make_key: KeyFactory, database_url: str
) -> None:
    admin = make_key(role="admin", agent_id=None)
    agent: Key = make_key()
    rng = random.Random(20261205)

    async def round_(
        http: httpx.AsyncClient, agent_http: httpx.AsyncClient, n: int
    ) -> tuple[list[str], list[int], Any]:
        opened = {"namespace": f"race-s-{n}", "task": "t"}
        created = await agent_http.post("/v1/sessions", json=opened)
        session_id = created.json()["session_id"]
        turns = [
            {"role": "user", "content": _said(i), "occurred_at": f"2024-01-{i + 1:02d}T10:00:00Z"}
            for i in range(TURNS)
        ]
        appended = await agent_http.post(f"/v1/sessions/{session_id}/turns", json={"turns": turns})
        assert appended.status_code == 200, appended.text
        path = f"/v1/sessions/{session_id}/turns"
        spread = SPREADS[n % len(SPREADS)]
        erasures = [
            _after(rng.uniform(0, spread), http.post(f"{path}/{seq}/erase", json=REASON))
            for seq in rng.sample(range(1, TURNS + 1), ERASED_TURNS)
        ]
        compile_ = agent_http.post("/v1/compile", json={"session_id": session_id})
        compiled, *erased = await asyncio.gather(
            _after(rng.uniform(0, spread / 2), compile_), *erasures
        )
        # The turns erased and the memories remembered from them: every source gone.
        gone = [i for e in erased if e.status_code == 200 for i in e.json()["turns"]]
        gone += [i for e in erased if e.status_code == 200 for i in e.json()["memories"]]
        return gone, [e.status_code for e in erased], compiled.json()

    async def run() -> list[tuple[list[str], list[int], Any]]:
        async with (
            httpx.AsyncClient(base_url=served, headers=admin.headers, timeout=120) as http,
            httpx.AsyncClient(base_url=served, headers=agent.headers, timeout=120) as agent_http,
        ):
            return [await round_(http, agent_http, n) for n in range(SESSION_ROUNDS)]

    rounds = asyncio.run(run())
    for gone, statuses, compiled in rounds:
        assert statuses == [200] * ERASED_TURNS
        assert compiled["status"] == "completed", compiled
        assert _texts_left(database_url, admin.tenant_id, gone) == []


def test_erasing_what_a_compile_retires_while_it_runs_never_deadlocks(
    served: str, make_key: KeyFactory, database_url: str
) -> None:
    """An admin erases the facts and the digest of a session while its next compile supersedes
    those facts (and retires the turns stating their values): both touch the same rows, so they
    must meet at the namespace's lock, not lock rows in opposite orders."""
    admin = make_key(role="admin", agent_id=None)
    agent: Key = make_key()
    rng = random.Random(20261206)

    def said(start: int) -> dict[str, Any]:
        turns = [
            {
                "role": "user",
                "content": _said(i),
                "occurred_at": f"2024-0{1 + i // 28}-{i % 28 + 1:02d}T10:00:00Z",
            }
            for i in range(start, start + TURNS)
        ]
        return {"turns": turns}

    async def round_(
        http: httpx.AsyncClient, agent_http: httpx.AsyncClient, n: int
    ) -> tuple[list[str], list[int], Any]:
        opened = {"namespace": f"retire-{n}", "task": "t"}
        session_id = (await agent_http.post("/v1/sessions", json=opened)).json()["session_id"]
        compile_ = {"session_id": session_id}
        assert (await agent_http.post(f"/v1/sessions/{session_id}/turns", json=said(0))).is_success
        assert (await agent_http.post("/v1/compile", json=compile_)).json()["created"] == TURNS
        with psycopg.connect(database_url) as conn:
            compiled = [
                str(row[0])
                for row in conn.execute(
                    "SELECT memory_id FROM memories WHERE namespace = %s AND extractor IS NOT NULL",
                    (opened["namespace"],),
                ).fetchall()
            ]
        assert (
            await agent_http.post(f"/v1/sessions/{session_id}/turns", json=said(TURNS))
        ).is_success
        spread = SPREADS[n % len(SPREADS)]
        erasures = [
            _after(rng.uniform(0, spread), http.post(f"/v1/memories/{m}/erase", json=REASON))
            for m in rng.sample(compiled, len(compiled))
        ]
        done, *erased = await asyncio.gather(
            _after(rng.uniform(0, spread / 2), agent_http.post("/v1/compile", json=compile_)),
            *erasures,
        )
        return compiled, [e.status_code for e in erased], done.json()

    async def run() -> list[tuple[list[str], list[int], Any]]:
        async with (
            httpx.AsyncClient(base_url=served, headers=admin.headers, timeout=120) as http,
            httpx.AsyncClient(base_url=served, headers=agent.headers, timeout=120) as agent_http,
        ):
            return [await round_(http, agent_http, n) for n in range(SESSION_ROUNDS)]

    for compiled, statuses, done in asyncio.run(run()):
        # Each erased once: a fact's erasure reaches no other fact, a digest's only later digests.
        assert statuses == [200] * len(compiled)
        assert done["status"] == "completed", done
        assert _texts_left(database_url, admin.tenant_id, compiled) == []
