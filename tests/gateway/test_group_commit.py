"""Group commit of the receipt log: concurrent disclosures share transactions, the log stays one
gapless chain, and a batch that cannot be written answers none of its requests. Real HTTP
(uvicorn), real PostgreSQL, real signatures."""

from __future__ import annotations

import asyncio
import hashlib
from typing import Any

import httpx
import psycopg
from litestar.testing import TestClient

from receipts.canonical import decode_body
from tests.conftest import Key
from tests.gateway.test_memories_write import memory

CLIENTS = 16


def _seed(client: TestClient[Any], key: Key) -> None:
    items = [memory(heading=f"Deploy step {n}", content=f"Run step {n} of the deploy.") for n in range(8)]  # fmt: skip
    assert client.post("/v1/memories/batch", json={"items": items}, headers=key.headers).is_success


async def _ask_all(base_url: str, key: Key, count: int) -> list[httpx.Response]:
    async with httpx.AsyncClient(base_url=base_url, headers=key.headers, timeout=60) as http:
        return await asyncio.gather(
            *(http.post("/v1/context", json={"task": f"deploy step {n}"}) for n in range(count))
        )


def _log(database_url: str, tenant_id: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(database_url) as conn:
        return conn.execute(
            "SELECT seq, receipt_id, prev, leaf, body, xmin::text FROM receipts"
            " WHERE tenant_id = %s ORDER BY seq",
            (tenant_id,),
        ).fetchall()


def test_concurrent_receipts_share_commits_and_chain_gaplessly(
    client: TestClient[Any], served: str, agent: Key, database_url: str
) -> None:
    _seed(client, agent)
    before = len(_log(database_url, agent.tenant_id))
    responses = asyncio.run(_ask_all(served, agent, 3 * CLIENTS))
    assert [r.status_code for r in responses] == [200] * (3 * CLIENTS)
    rows = _log(database_url, agent.tenant_id)
    assert [row[0] for row in rows] == list(range(1, len(rows) + 1))  # gapless
    prev = bytes(32)
    for _, _, row_prev, leaf, body, _ in rows:
        assert bytes(row_prev) == prev
        assert bytes(leaf) == hashlib.sha256(b"\x00" + bytes(body)).digest()
        assert decode_body(bytes(body))["log"]["prev"] == prev.hex()
        prev = bytes(leaf)
    answered = {r.json()["receipt_id"] for r in responses}
    written = {row[1] for row in rows[before:]}
    assert answered == written  # every answer's receipt, and no other
    transactions = {row[5] for row in rows[before:]}
    assert len(transactions) < len(written)  # some receipts were committed together


def test_a_batch_that_cannot_be_written_answers_none_of_its_requests(
    client: TestClient[Any], served: str, agent: Key, database_url: str
) -> None:
    _seed(client, agent)
    before = _log(database_url, agent.tenant_id)
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("REVOKE INSERT ON receipts FROM ctxgw_app")
    responses = asyncio.run(_ask_all(served, agent, CLIENTS))
    assert {r.status_code for r in responses} == {503}
    assert {r.json()["code"] for r in responses} == {"receipt_unavailable"}
    assert all("bundle" not in r.json() for r in responses)
    assert _log(database_url, agent.tenant_id) == before
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("GRANT INSERT ON receipts TO ctxgw_app")
    again = asyncio.run(_ask_all(served, agent, 2))  # the writer recovers
    assert [r.status_code for r in again] == [200, 200]
    assert len(_log(database_url, agent.tenant_id)) == len(before) + 2
