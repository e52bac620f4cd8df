"""LangChain adapters (the `langchain` extra), on the Python client: a retriever over memories and
a chat-message history on a session. Every call goes through the gateway's receipted path, as
any agent's would: nothing is read around the policy or the receipt log.

    from gateway.client import Client
    from gateway.client.langchain import CtxgwChatHistory, CtxgwRetriever

    ctxgw = Client(key, "http://127.0.0.1:8080")
    retriever = CtxgwRetriever(client=ctxgw, namespaces=["ops"], k=4)
    docs = retriever.invoke("how do I roll back a deploy?")
    docs[0].metadata  # memory_id, heading, receipt_id (the fetch's), search_receipt_id, ...

The retriever is the progressive disclosure of the API (`gateway.client.recall`): a search
(stage 1: pointers, receipted) then a fetch of the hits (stage 3: the memories in full as the
policy lets them through, receipted); a hit the fetch withholds (deleted since, or denied) is
no document. The history
appends turns to a session (`POST /v1/sessions/{id}/turns`) and reads them back as the policy
shows them (`GET /v1/sessions/{id}/turns`, receipted `history`). A session's turns are never
deleted through the API (an admin erases a turn's text, receipted), so `clear` refuses.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.documents import Document
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict

from gateway.client.options import NewTurn, Role
from gateway.client.recall import recall
from gateway.client.sync import Client

__all__ = ["CtxgwChatHistory", "CtxgwRetriever"]


class CtxgwRetriever(BaseRetriever):
    """Memories relevant to a query, as LangChain `Document`s: `page_content` is the memory's
    content (as the policy lets it through), `metadata` its id, heading, namespace, type,
    confidence and score, and the receipts of the search and of the fetch."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    client: Client
    namespaces: list[str] | None = None
    k: int = 4
    purpose: str | None = None

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        recalled = recall(
            self.client, query, namespaces=self.namespaces, limit=self.k, purpose=self.purpose
        )
        return [
            Document(
                page_content=r.memory.content,
                id=r.memory.memory_id,
                metadata={
                    "memory_id": r.memory.memory_id,
                    "heading": r.memory.heading,
                    "namespace": r.memory.namespace,
                    "memory_type": r.memory.memory_type,
                    "confidence": r.memory.confidence,
                    "score": r.score,
                    "receipt_id": r.receipt_id,
                    "search_receipt_id": r.search_receipt_id,
                },
            )
            for r in recalled  # the search's order, best first
        ]


_ROLES: dict[type[BaseMessage], Role] = {
    HumanMessage: "user",
    AIMessage: "assistant",
    SystemMessage: "system",
    ToolMessage: "tool",
}
_MESSAGES: dict[str, type[BaseMessage]] = {role: kind for kind, role in _ROLES.items()}


class CtxgwChatHistory(BaseChatMessageHistory):
    """A session's turns as LangChain messages; `add_messages` appends them, in order."""

    def __init__(self, client: Client, session_id: str, *, purpose: str | None = None) -> None:
        self.client = client
        self.session_id = session_id
        self.purpose = purpose

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]  # read, never assigned
        turns = self.client.iter_history(self.session_id, purpose=self.purpose)
        return [_message(t.role, t.content, t.name, t.turn_id) for t in turns]

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        turns = [
            NewTurn(role=_role(m), content=str(m.text), name=getattr(m, "name", None))
            for m in messages
        ]
        for start in range(0, len(turns), 100):  # the API's most turns per append
            self.client.append_turns(self.session_id, turns[start : start + 100])

    def clear(self) -> None:
        raise NotImplementedError(
            "a session's turns are kept for audit; an admin erases a turn's text "
            "(POST /v1/sessions/{id}/turns/{seq}/erase), receipted"
        )


def _role(message: BaseMessage) -> Role:
    role = _ROLES.get(type(message))
    if role is None:
        raise TypeError(f"no session role for a {type(message).__name__}")
    return role


def _message(role: str, content: str, name: str | None, turn_id: str) -> BaseMessage:
    if role == "tool":
        return ToolMessage(content=content, tool_call_id=name or turn_id, id=turn_id)
    return _MESSAGES[role](content=content, name=name, id=turn_id)
