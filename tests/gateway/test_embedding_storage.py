"""A memory's row keeps what recall reads of every row in it, inline and uncompressed: the
embedding, the tsvector, the identifiers (migrations 0024 and 0026). Distances, BM25 scores,
hashes and sorts would otherwise fetch each of them back from the TOAST table or decompress it
first. Only a row past a page gives up its content. Real HTTP writes, real PostgreSQL."""

from __future__ import annotations

from typing import Any

import psycopg
from litestar.testing import TestClient

from tests.conftest import Key
from tests.gateway.test_memories_write import memory

_LAYOUT = """
SELECT heading,
       pg_column_toast_chunk_id(embedding) IS NULL AND pg_column_compression(embedding) IS NULL,
       pg_column_toast_chunk_id(tsv) IS NULL AND pg_column_compression(tsv) IS NULL,
       pg_column_toast_chunk_id(memory_id) IS NULL,
       pg_column_toast_chunk_id(content) IS NULL AND pg_column_compression(content) IS NULL
  FROM memories WHERE tenant_id = %s ORDER BY heading
"""


def test_a_memory_row_keeps_what_recall_reads_inline(
    client: TestClient[Any], agent: Key, database_url: str
) -> None:
    # A long turn: about 2 kB of content and a tsvector of about 200 lexemes, past the 2 kB where
    # PostgreSQL starts cutting rows down (pgvector's default storage moved the embedding out,
    # the default one the tsvector). A longer memory, past a page: its content leaves.
    long_turn = " ".join(f"word{i} topic{i % 97}" for i in range(150))
    longer = " ".join(f"{'chapter' * 12}{i % 20}" for i in range(200))  # 17 kB, 20 lexemes
    items = [memory(heading=f"long {i}", content=f"{long_turn} unique{i}") for i in range(4)]
    items.append(memory(heading="past a page", content=longer))
    written = client.post("/v1/memories/batch", json={"items": items}, headers=agent.headers)
    assert written.status_code in (200, 201), written.text
    with psycopg.connect(database_url) as conn:
        rows = conn.execute(_LAYOUT, (agent.tenant_id,)).fetchall()
    assert [r[0] for r in rows] == ["long 0", "long 1", "long 2", "long 3", "past a page"]
    for heading, embedding, tsv, memory_id, content in rows:
        assert embedding and tsv and memory_id, f"{heading}: recall's columns stay in the row"
        assert content == (heading != "past a page"), f"{heading}: only a row past a page is cut"
