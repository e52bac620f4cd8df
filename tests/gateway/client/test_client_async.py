"""The async client against the real gateway over HTTP: the same calls, awaited, concurrently."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from gateway.client import AsyncClient, InvalidRequestError, NewMemory, Retries
from tests.conftest import Key, KeyFactory


@pytest.mark.anyio
async def test_the_async_agent_and_auditor(
    served: str, agent: Key, make_key: KeyFactory, tmp_path: Path
) -> None:
    async with AsyncClient(agent.key, served) as ctxgw:
        batch = await ctxgw.write_batch(
            [
                NewMemory(namespace="ops", heading=f"Fact {n}", content=f"fact number {n}")
                for n in range(3)
            ]
        )
        ids = [str(item.memory_id) for item in batch.items]
        asked = await asyncio.gather(*(ctxgw.search(f"fact number {n}") for n in range(4)))
        bundle = await ctxgw.context("fact number 1", budget_tokens=300)
        assert ids[1] in {m.memory_id for m in bundle.included}
        fetched = await ctxgw.fetch(ids[:1])
        assert fetched.memories[0].content == "fact number 0"
        with pytest.raises(InvalidRequestError) as raised:
            await ctxgw.fetch([])
        assert [e.field for e in raised.value.errors] == ["ids"]
    receipts = {a.receipt_id for a in asked} | {bundle.receipt_id, fetched.receipt_id}
    async with AsyncClient(make_key(role="auditor").key, served, retries=Retries(1)) as audit:
        paged = [r.receipt_id async for r in audit.iter_receipts(page_size=2)]
        assert set(paged) == receipts and len(paged) == len(receipts)
        assert (await audit.verify_receipt(bundle.receipt_id)).valid
        exported = await audit.export_receipts(tmp_path / "export.jsonl")
    assert exported.lines == len(receipts) + 1
    assert (tmp_path / "export.jsonl").read_bytes().count(b"\n") == exported.lines
