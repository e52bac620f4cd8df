"""The store's `recall` as a test drives it: one namespace, the hash embedder, now."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import psycopg
from pgvector.psycopg import register_vector_async

from gateway.core.model import Candidate
from gateway.embedding import HashEmbedder
from gateway.store import retrieval
from gateway.store.scope import Scope


async def _recall(
    url: str, tenant_id: str, namespace: str, task: str, limit: int, as_of: datetime | None
) -> list[Candidate]:
    embedder = HashEmbedder()
    scope = (
        Scope(tenant_id, (namespace,), None, datetime.now(UTC))
        if as_of is None
        else Scope(tenant_id, (namespace,), None, as_of, historical=True)
    )
    async with await psycopg.AsyncConnection.connect(url) as conn:
        await register_vector_async(conn)  # as every pooled connection is (query vectors go binary)
        return await retrieval.recall(
            conn,
            scope,
            task=task,
            query_vector=embedder.embed([task])[0],
            embedding_model=embedder.model,
            limit=limit,
        )


def recall(
    url: str, tenant_id: str, namespace: str, task: str, limit: int, as_of: datetime | None = None
) -> list[Candidate]:
    """What `retrieval.recall` returns for `task` in `namespace`, each retriever cut at `limit`:
    now, or at the past instant `as_of`."""
    return asyncio.run(_recall(url, tenant_id, namespace, task, limit, as_of))
