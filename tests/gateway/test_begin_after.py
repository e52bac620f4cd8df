"""A statement committed on its own, then a transaction, in one round trip (`begin_after`, which
the key's charge and the request's BEGIN share)."""

from __future__ import annotations

import asyncio

import psycopg
import pytest
from psycopg.pq import TransactionStatus

from gateway.store.transactions import begin_after
from tests.conftest import Key

_CHARGE = "UPDATE rate_buckets SET tokens = tokens - 1 WHERE key_id = %(key_id)s RETURNING tokens"


def _tokens(database_url: str, key_id: str) -> list[float]:
    with psycopg.connect(database_url) as conn:
        rows = conn.execute("SELECT tokens FROM rate_buckets WHERE key_id = %s", (key_id,))
        return [float(t) for (t,) in rows.fetchall()]


def _charged_key(database_url: str, agent: Key) -> float:
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO rate_buckets (tenant_id, key_id, bucket, rate, capacity, asked, granted,"
            " tokens, charged_at) VALUES (%s, %s, 'requests', 1, 2, 1, true, 10, now())",
            (agent.tenant_id, agent.key_id),
        )
    return 10.0


def test_the_statement_commits_though_the_transaction_rolls_back(
    database_url: str, agent: Key
) -> None:
    start = _charged_key(database_url, agent)

    async def run() -> None:
        async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as conn:
            with pytest.raises(RuntimeError):
                async with begin_after(
                    conn, agent.tenant_id, _CHARGE, {"key_id": agent.key_id}
                ) as cur:
                    assert await cur.fetchall() == [(start - 1,)]
                    assert conn.info.transaction_status is TransactionStatus.INTRANS
                    tenant = await (await conn.execute("SELECT current_setting('ctxgw.tenant')")).fetchone()  # fmt: skip
                    assert tenant == (agent.tenant_id,)  # the transaction is in the wall too
                    await conn.execute(_CHARGE, {"key_id": agent.key_id})  # rolled back below
                    raise RuntimeError("the request failed")
            assert conn.info.transaction_status is TransactionStatus.IDLE

    asyncio.run(run())
    assert _tokens(database_url, agent.key_id) == [start - 1]


def test_a_failing_statement_opens_no_transaction(database_url: str, agent: Key) -> None:
    async def run() -> None:
        async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as conn:
            with pytest.raises(psycopg.errors.DivisionByZero):
                async with begin_after(conn, agent.tenant_id, "SELECT 1 / 0", {}):
                    pytest.fail("the block must not run")
            assert conn.info.transaction_status is TransactionStatus.IDLE
            assert await (await conn.execute("SELECT 1")).fetchone() == (1,)

    asyncio.run(run())
