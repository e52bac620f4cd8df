"""A LlamaIndex retriever (the `llamaindex` extra) on memories, through the gateway's receipted
path as any agent's reads: a search then a fetch of the hits (`gateway.client.recall`).

    from gateway.client import Client
    from gateway.client.llamaindex import CtxgwRetriever

    retriever = CtxgwRetriever(Client(key, url), namespaces=["ops"], k=4)
    for hit in retriever.retrieve("how do I roll back a deploy?"):
        hit.node.metadata  # memory_id, heading, namespace, receipt_id, search_receipt_id, ...

Each node is a `TextNode` whose id is the memory id and whose text is the memory's content as
the policy let it through, scored by the search. The ids and receipts in its metadata are kept
out of what an LLM or an embedder reads of the node; the heading, namespace and type are not.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from gateway.client.asynchronous import AsyncClient
from gateway.client.recall import Recalled, arecall, recall
from gateway.client.sync import Client

__all__ = ["CtxgwRetriever"]

# Metadata for the audit trail, not for the model: left out of the node's LLM and embedding text.
_RECORD_KEYS = ["memory_id", "receipt_id", "search_receipt_id", "confidence"]


def _node(recalled: Recalled) -> NodeWithScore:
    memory = recalled.memory
    node = TextNode(
        id_=memory.memory_id,
        text=memory.content,
        metadata={
            "memory_id": memory.memory_id,
            "heading": memory.heading,
            "namespace": memory.namespace,
            "memory_type": memory.memory_type,
            "confidence": memory.confidence,
            "receipt_id": recalled.receipt_id,
            "search_receipt_id": recalled.search_receipt_id,
        },
        excluded_llm_metadata_keys=list(_RECORD_KEYS),
        excluded_embed_metadata_keys=list(_RECORD_KEYS),
    )
    return NodeWithScore(node=node, score=recalled.score)


class CtxgwRetriever(BaseRetriever):
    """Memories relevant to a query as LlamaIndex nodes, best first: `retrieve` on `client`,
    `aretrieve` on `async_client` (one may be left out when only the other is used).
    `namespaces`: those to search (None: every one the key may read); `k`: how many (1 to 50)."""

    def __init__(
        self,
        client: Client | None = None,
        *,
        async_client: AsyncClient | None = None,
        namespaces: Sequence[str] | None = None,
        k: int = 4,
        purpose: str | None = None,
        **base: Any,
    ) -> None:
        if client is None and async_client is None:
            raise ValueError("CtxgwRetriever needs a Client, an AsyncClient, or both")
        if not 1 <= k <= 50:
            raise ValueError(f"k is 1 to 50 (the gateway's most search results); got {k}")
        super().__init__(**base)
        self.client, self.async_client = client, async_client
        self.namespaces = list(namespaces) if namespaces is not None else None
        self.k, self.purpose = k, purpose

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        if self.client is None:
            raise RuntimeError("this CtxgwRetriever has no Client: pass client= to retrieve")
        recalled = recall(
            self.client,
            query_bundle.query_str,
            namespaces=self.namespaces,
            limit=self.k,
            purpose=self.purpose,
        )
        return [_node(r) for r in recalled]

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        if self.async_client is None:
            raise RuntimeError(
                "this CtxgwRetriever has no AsyncClient: pass async_client= to aretrieve"
            )
        recalled = await arecall(
            self.async_client,
            query_bundle.query_str,
            namespaces=self.namespaces,
            limit=self.k,
            purpose=self.purpose,
        )
        return [_node(r) for r in recalled]
