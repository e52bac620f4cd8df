"""The LlamaIndex retriever (gateway.client.llamaindex) with LlamaIndex's own `BaseRetriever`,
against a real gateway over HTTP: nodes carry memory id, heading and the receipts of the search
and the fetch that an auditor then verifies; what the policy denies is no node."""

from __future__ import annotations

import json

import pytest
from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import MetadataMode, TextNode

from gateway.client import AsyncClient, Client, NewMemory
from gateway.client.llamaindex import CtxgwRetriever
from tests.conftest import Key, KeyFactory
from tests.gateway.client.test_langgraph import DENY_SECRETS


def test_the_retriever_returns_receipted_nodes(
    served: str, agent: Key, make_key: KeyFactory
) -> None:
    admin = make_key(role="admin", agent_id=None)
    with Client(admin.key, served) as boss:
        boss.activate_policy(boss.upload_policy(DENY_SECRETS).digest, "enforce")
    with Client(agent.key, served) as ctxgw:
        written = ctxgw.write_batch(
            [
                NewMemory(namespace="ops", heading="Rollback", content="Run atlasctl rollback."),
                NewMemory(namespace="ops", heading="Deploys", content="Deploys go out Tuesdays."),
                NewMemory(
                    namespace="ops",
                    heading="Rollback key",
                    content="The rollback signing key is in vault 7.",
                    labels=["secret"],
                ),
                NewMemory(namespace="hr", heading="Holidays", content="Rollback day is off."),
            ]
        )
        ids = [str(item.memory_id) for item in written.items]
        retriever = CtxgwRetriever(ctxgw, namespaces=["ops"], k=3)
        assert isinstance(retriever, BaseRetriever)
        hits = retriever.retrieve("atlasctl rollback")
    assert [h.node.node_id for h in hits][:1] == [ids[0]]
    assert ids[2] not in {h.node.node_id for h in hits}  # denied: no node
    assert ids[3] not in {h.node.node_id for h in hits}  # another namespace
    node = hits[0].node
    assert isinstance(node, TextNode) and node.text == "Run atlasctl rollback."
    assert node.metadata["heading"] == "Rollback" and node.metadata["namespace"] == "ops"
    assert hits[0].score is not None
    # The model reads the heading, not the audit trail.
    shown = node.get_content(metadata_mode=MetadataMode.LLM)
    assert "Rollback" in shown and node.metadata["receipt_id"] not in shown
    with Client(make_key(role="auditor", agent_id=None).key, served) as audit:
        fetch = audit.receipt(node.metadata["receipt_id"])
        search = audit.receipt(node.metadata["search_receipt_id"])
        assert (fetch.kind, search.kind) == ("fetch", "search")
        assert audit.verify_receipt(fetch.receipt_id).valid
        assert fetch.body is not None and ids[0] in json.dumps(fetch.body)


@pytest.mark.anyio
async def test_the_retriever_awaited(served: str, agent: Key) -> None:
    async with AsyncClient(agent.key, served) as ctxgw:
        await ctxgw.write_memory("ops", "Standup", "Standup is at 09:30.")
        retriever = CtxgwRetriever(async_client=ctxgw, namespaces=["ops"])
        hits = await retriever.aretrieve("when is standup")
        assert [h.node.metadata["heading"] for h in hits] == ["Standup"]
        assert await CtxgwRetriever(async_client=ctxgw, namespaces=["empty"]).aretrieve("x") == []
        with pytest.raises(RuntimeError, match="no Client"):
            retriever.retrieve("when is standup")


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="Client"):
        CtxgwRetriever()
    with (
        Client("ctxgw_test_key", "http://127.0.0.1:9") as ctxgw,
        pytest.raises(ValueError, match="k is 1 to 50"),
    ):
        CtxgwRetriever(ctxgw, k=51)
