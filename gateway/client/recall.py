"""Recall, as the framework adapters do it (LangChain, LangGraph, LlamaIndex): the progressive
disclosure of the API, a search (stage 1: pointers, receipted) then a fetch of the hits (stage 3:
the memories in full as the policy lets them through, receipted). Written once, sync and async;
each adapter only turns a `Recalled` into its framework's type.

A hit the fetch withholds (deleted since, or denied) is recalled as nothing: the search's
pointers are not content.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gateway.client.asynchronous import AsyncClient
from gateway.client.options import SearchOptions
from gateway.client.sync import Client
from gateway.responses.disclosures import FetchedMemories, FetchedMemory, SearchResults

__all__ = ["Recalled", "arecall", "recall"]


@dataclass(frozen=True, slots=True)
class Recalled:
    """A memory recalled for a query: as fetched, with its search score, the receipt of the
    fetch that read it and of the search that found it."""

    memory: FetchedMemory
    score: float
    receipt_id: str
    search_receipt_id: str


def _options(namespaces: Sequence[str] | None, limit: int, purpose: str | None) -> SearchOptions:
    options: SearchOptions = {"limit": limit}
    if namespaces:
        options["namespaces"] = namespaces
    if purpose:
        options["purpose"] = purpose
    return options


def _recalled(hits: SearchResults, fetched: FetchedMemories) -> list[Recalled]:
    """The fetched memories in the search's order (best first)."""
    found = {m.memory_id: m for m in fetched.memories}
    return [
        Recalled(memory, hit.score, fetched.receipt_id, hits.receipt_id)
        for hit in hits.results
        if (memory := found.get(hit.memory_id)) is not None
    ]


def recall(
    client: Client,
    query: str,
    *,
    namespaces: Sequence[str] | None = None,
    limit: int = 4,
    purpose: str | None = None,
) -> list[Recalled]:
    """The best `limit` memories for `query` in `namespaces` (None: every one the key may
    read), best first; no fetch (and no second receipt) when the search finds nothing."""
    hits = client.search(query, **_options(namespaces, limit, purpose))
    if not hits.results:
        return []
    fetched = client.fetch([hit.memory_id for hit in hits.results], purpose=purpose)
    return _recalled(hits, fetched)


async def arecall(
    client: AsyncClient,
    query: str,
    *,
    namespaces: Sequence[str] | None = None,
    limit: int = 4,
    purpose: str | None = None,
) -> list[Recalled]:
    """`recall`, awaited on an `AsyncClient`."""
    hits = await client.search(query, **_options(namespaces, limit, purpose))
    if not hits.results:
        return []
    fetched = await client.fetch([hit.memory_id for hit in hits.results], purpose=purpose)
    return _recalled(hits, fetched)
