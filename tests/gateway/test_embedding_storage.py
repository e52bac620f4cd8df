"""A memory's embedding stays in its row however long the memory is (migration 0024): the
distances recall computes from rows would otherwise fetch each embedding back from the TOAST
table first. Real HTTP writes, real PostgreSQL."""

from __future__ import annotations

from typing import Any

import psycopg
from litestar.testing import TestClient

from tests.conftest import Key
from tests.gateway.test_memories_write import memory


def test_long_memories_keep_their_embeddings_inline(
    client: TestClient[Any], agent: Key, database_url: str
) -> None:
    # About 2.5 kB of content and a tsvector of hundreds of lexemes: past the 2 kB TOAST target,
    # where pgvector's default storage moved the embedding out of the row.
    long_turn = " ".join(f"word{i} topic{i % 97}" for i in range(200))
    items = [memory(heading=f"turn {i}", content=f"{long_turn} unique{i}") for i in range(5)]
    written = client.post("/v1/memories/batch", json={"items": items}, headers=agent.headers)
    assert written.status_code in (200, 201), written.text
    with psycopg.connect(database_url) as conn:
        rows = conn.execute(
            "SELECT pg_column_toast_chunk_id(embedding) IS NULL,"
            "       pg_column_toast_chunk_id(content) IS NULL FROM memories WHERE tenant_id = %s",
            (agent.tenant_id,),
        ).fetchall()
    assert len(rows) == 5
    assert all(inline for inline, _ in rows), "every embedding is stored in its row"
    assert not any(content_inline for _, content_inline in rows), "the long contents were moved"
