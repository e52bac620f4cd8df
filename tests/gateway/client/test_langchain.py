"""The LangChain adapters (gateway.client.langchain) with LangChain's own package, against a real
gateway over HTTP: the retriever's documents carry memory id, heading and the receipts of the
search and the fetch that an auditor then reads; the chat history is a session's turns."""

from __future__ import annotations

import json

import pytest
from langchain_core.documents import Document
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langchain_core.retrievers import BaseRetriever

from gateway.client import Client, NewMemory
from gateway.client.langchain import CtxgwChatHistory, CtxgwRetriever
from tests.conftest import Key, KeyFactory


def test_the_retriever_returns_receipted_documents(
    served: str, agent: Key, make_key: KeyFactory
) -> None:
    auditor = make_key(role="auditor", agent_id=None)
    with Client(agent.key, served) as ctxgw:
        written = ctxgw.write_batch(
            [
                NewMemory(namespace="ops", heading="Rollback", content="Run atlasctl rollback."),
                NewMemory(namespace="ops", heading="Deploys", content="Deploys go out Tuesdays."),
                NewMemory(namespace="hr", heading="Holidays", content="Rollback day is a holiday."),
            ]
        )
        ids = [str(item.memory_id) for item in written.items]
        ctxgw.delete_memory(ids[1], "obsolete")
        retriever = CtxgwRetriever(client=ctxgw, namespaces=["ops"], k=3)
        assert isinstance(retriever, BaseRetriever)
        docs = retriever.invoke("atlasctl rollback")
    assert all(isinstance(d, Document) for d in docs)
    # Only the live memory of the namespace asked for; the deleted one is no document.
    assert [d.metadata["memory_id"] for d in docs] == [ids[0]]
    [doc] = docs
    assert doc.page_content == "Run atlasctl rollback." and doc.metadata["heading"] == "Rollback"
    assert doc.metadata["namespace"] == "ops" and doc.id == ids[0]
    with Client(auditor.key, served) as audit:
        fetch = audit.receipt(doc.metadata["receipt_id"])
        search = audit.receipt(doc.metadata["search_receipt_id"])
    assert (fetch.kind, search.kind) == ("fetch", "search")
    assert fetch.agent_id == search.agent_id == "agent-1"
    assert fetch.body is not None and ids[0] in json.dumps(fetch.body)


def test_the_retriever_finds_nothing_without_a_fetch(served: str, agent: Key) -> None:
    with Client(agent.key, served) as ctxgw:
        retriever = CtxgwRetriever(client=ctxgw, namespaces=["empty"], k=2)
        assert retriever.invoke("anything at all") == []


def test_the_chat_history_is_a_session_s_turns(served: str, agent: Key) -> None:
    with Client(agent.key, served) as ctxgw:
        session = ctxgw.create_session("chat", "plan the migration")
        history = CtxgwChatHistory(ctxgw, session.session_id)
        assert history.messages == []
        history.add_messages(
            [
                SystemMessage("Be brief."),
                HumanMessage("We move to Postgres 18 on Friday."),
                AIMessage("Noted: Friday."),
            ]
        )
        history.add_user_message("And the rollback plan?")
        read = history.messages
        assert [type(m) for m in read] == [SystemMessage, HumanMessage, AIMessage, HumanMessage]
        assert [m.content for m in read][1:] == [
            "We move to Postgres 18 on Friday.",
            "Noted: Friday.",
            "And the rollback plan?",
        ]
        assert all(m.id for m in read)  # each turn's id
        assert ctxgw.session(session.session_id).turn_count == 4
        with pytest.raises(NotImplementedError, match="erase"):
            history.clear()
