"""The LangGraph store (gateway.client.langgraph) with LangGraph's own `BaseStore` methods,
against a real gateway over HTTP and the real PostgreSQL: a put is a memory, a put again
supersedes it, get and search read through receipted disclosures an auditor verifies, delete
retires, namespaces stay apart, and what the policy denies the agent never reaches the graph."""

from __future__ import annotations

import asyncio
import json
from typing import TypedDict

import msgspec
import pytest
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore, InvalidNamespaceError

from gateway.client import AsyncClient, Client, ForbiddenError
from gateway.client.langgraph import (
    CtxgwItem,
    CtxgwSearchItem,
    CtxgwStore,
    claim_key,
    namespace_name,
)
from tests.conftest import Key, KeyFactory

USER = ("users", "alice")
DENY_SECRETS = """
apiVersion: ctxgw/v1
kind: PolicyBundle
metadata: {name: no-secrets}
spec:
  default_decision: allow
  rules:
    - id: secrets-are-not-for-agents
      effect: deny
      when:
        all:
          - {field: memory.labels, op: contains_any, value: [secret]}
          - {field: request.role, op: eq, value: agent}
"""


def test_the_mapping_of_namespaces_and_keys() -> None:
    assert namespace_name(("users", "alice")) == "users.alice"
    assert claim_key("preferences") == "langgraph.preferences"
    hashed = claim_key("Meeting notes 2026-12-04")
    assert hashed.startswith("langgraph.h.") and len(hashed) == len("langgraph.h.") + 40
    assert claim_key("Meeting notes 2026-12-04") == hashed != claim_key("meeting notes")
    with pytest.raises(InvalidNamespaceError, match="not a ctxgw namespace"):
        namespace_name(("users", "alice smith"))
    with pytest.raises(InvalidNamespaceError, match="periods"):
        namespace_name(("users", "a.b"))


def test_put_get_search_delete_through_receipts(
    served: str, agent: Key, make_key: KeyFactory
) -> None:
    with Client(agent.key, served) as ctxgw:
        store = CtxgwStore(ctxgw, purpose="support")
        assert isinstance(store, BaseStore)
        store.put(USER, "preferences", {"food": "no coriander", "level": 2})
        store.put(USER, "Trip plan", {"text": "Alice flies to Lisbon on Friday"})
        store.put(("users", "bob"), "preferences", {"food": "everything"})
        got = store.get(USER, "preferences")
        assert isinstance(got, CtxgwItem)
        assert got.value == {"food": "no coriander", "level": 2} and got.namespace == USER
        assert got.key == "preferences" and got.created_at == got.updated_at
        assert store.get(USER, "nothing here") is None
        # Put again: a new version, the old one superseded by the gateway (rule claim_key).
        store.put(USER, "preferences", {"food": "no coriander, no olives", "level": 3})
        again = store.get(USER, "preferences")
        assert isinstance(again, CtxgwItem) and again.value["level"] == 3
        assert again.memory_id != got.memory_id
        [entry] = ctxgw.timeline([got.memory_id]).entries
        assert entry.superseded_by == again.memory_id
        assert entry.supersession is not None and entry.supersession.rule == "claim_key"

        found = store.search(USER, query="food: coriander, olives", limit=5)
        assert [i.key for i in found][:1] == ["preferences"]
        assert all(isinstance(i, CtxgwSearchItem) and i.namespace == USER for i in found)
        assert {i.key for i in found} <= {"preferences", "Trip plan"}  # not bob's
        assert found[0].value["level"] == 3 and found[0].score is not None
        filtered = store.search(USER, query="alice", filter={"level": {"$gte": 3}})
        assert [i.key for i in filtered] == ["preferences"]
        everywhere = store.search((), query="preferences food", limit=10)
        assert {i.namespace for i in everywhere} == {USER, ("users", "bob")}

        store.delete(USER, "preferences")
        assert store.get(USER, "preferences") is None
        store.delete(USER, "preferences")  # already gone: nothing to do
        assert store.get(("users", "bob"), "preferences") is not None
        assert "preferences" not in {i.key for i in store.search(USER, query="coriander olives")}

    assert isinstance(found[0], CtxgwSearchItem)
    with Client(make_key(role="auditor", agent_id=None).key, served) as audit:
        search = audit.receipt(found[0].search_receipt_id)
        fetch = audit.receipt(found[0].receipt_id)
        read = audit.receipt(again.receipt_id)
        assert (search.kind, fetch.kind, read.kind) == ("search", "fetch", "fetch")
        assert read.agent_id == "agent-1" and read.body is not None
        assert again.memory_id in json.dumps(read.body)
        for receipt_id in (search.receipt_id, fetch.receipt_id, read.receipt_id):
            assert audit.verify_receipt(receipt_id).valid


def test_the_store_refuses_what_the_gateway_cannot_do(served: str, agent: Key) -> None:
    with Client(agent.key, served) as ctxgw:
        store = CtxgwStore(ctxgw)
        with pytest.raises(ValueError, match="needs a query"):
            store.search(USER)
        with pytest.raises(ValueError, match="offset"):
            store.search(USER, query="x", limit=40, offset=20)
        with pytest.raises(ValueError, match="index"):
            store.put(USER, "k", {"a": 1}, index=["a"])
        with pytest.raises(NotImplementedError, match="TTL"):
            store.put(USER, "k", {"a": 1}, ttl=5)
        with pytest.raises(NotImplementedError, match="namespaces"):
            store.list_namespaces()
        assert store.batch([]) == []
        with pytest.raises(RuntimeError, match="no AsyncClient"):
            asyncio.run(store.abatch([]))
    with pytest.raises(ValueError, match="Client"):
        CtxgwStore()


def test_a_key_reads_only_its_namespaces(served: str, make_key: KeyFactory) -> None:
    writer = make_key(agent_id="writer", namespaces=("users.alice", "users.bob"))
    with Client(writer.key, served) as ctxgw:
        CtxgwStore(ctxgw).put(USER, "preferences", {"food": "no coriander"})
    reader = make_key(agent_id="reader", namespaces=("users.bob",))
    with Client(reader.key, served) as ctxgw:
        store = CtxgwStore(ctxgw)
        with pytest.raises(ForbiddenError, match="namespace"):
            store.get(USER, "preferences")
        assert store.search((), query="coriander") == []


def test_the_agent_never_receives_what_the_policy_denies(
    served: str, agent: Key, make_key: KeyFactory
) -> None:
    admin = make_key(role="admin", agent_id=None)
    with Client(admin.key, served) as boss:
        boss.activate_policy(boss.upload_policy(DENY_SECRETS).digest, "enforce")
    with Client(agent.key, served) as ctxgw:
        open_store = CtxgwStore(ctxgw)
        secret_store = CtxgwStore(ctxgw, labels=["secret"])
        open_store.put(USER, "plan", {"text": "the launch is on Monday"})
        secret_store.put(USER, "codename", {"text": "the launch codename is Bluebird"})
        assert open_store.get(USER, "codename") is None
        # Not even its id: the answer is the one for a key no memory holds.
        asked = ctxgw.fetch_claims(namespace_name(USER), [claim_key("codename")])
        nothing = ctxgw.fetch_claims(namespace_name(USER), [claim_key("no_such_key")])
        assert (asked.memories, asked.withheld, asked.missing) == ([], [], [])
        assert msgspec.structs.replace(asked, receipt_id="") == msgspec.structs.replace(
            nothing, receipt_id=""
        )
        found = open_store.search(USER, query="launch codename Bluebird Monday")
        assert [i.key for i in found] == ["plan"]
        said = json.dumps([i.dict() for i in found])
        assert "Bluebird" not in said
        # Deleting what it may not see does nothing (a write retires only what its writer sees).
        open_store.delete(USER, "codename")
    with Client(admin.key, served) as boss:
        fetched = boss.fetch_claims(namespace_name(USER), [claim_key("codename")])
        assert [m.heading for m in fetched.memories] == ["codename"]


@pytest.mark.anyio
async def test_the_async_methods(served: str, agent: Key) -> None:
    async with AsyncClient(agent.key, served) as ctxgw:
        store = CtxgwStore(async_client=ctxgw)
        await store.aput(("team",), "standup", {"time": "09:30"})
        await store.aput(("team",), "standup", {"time": "10:00"})
        item = await store.aget(("team",), "standup")
        assert item is not None and item.value == {"time": "10:00"}
        found = await store.asearch(("team",), query="standup time")
        assert [(i.key, i.value) for i in found] == [("standup", {"time": "10:00"})]
        await store.adelete(("team",), "standup")
        assert await store.aget(("team",), "standup") is None
        with pytest.raises(RuntimeError, match="no Client"):
            store.get(("team",), "standup")


class Turn(TypedDict):
    user: str
    said: str
    recalled: list[str]
    receipts: list[str]


def _remember(state: Turn, *, store: BaseStore) -> dict[str, object]:
    """A node of a graph: what the user said goes into the store, what it knows comes out."""
    namespace = ("users", state["user"])
    store.put(namespace, "last_said", {"text": state["said"]})
    found = store.search(namespace, query=state["said"], limit=3)
    receipts = [i.receipt_id for i in found if isinstance(i, CtxgwSearchItem)]
    return {"recalled": [str(i.value["text"]) for i in found], "receipts": receipts}


def test_a_graph_uses_the_store(served: str, agent: Key, make_key: KeyFactory) -> None:
    graph = StateGraph(Turn)
    graph.add_node("remember", _remember)
    graph.add_edge(START, "remember")
    graph.add_edge("remember", END)
    with Client(agent.key, served) as ctxgw:
        app = graph.compile(store=CtxgwStore(ctxgw))
        first = app.invoke(Turn(user="alice", said="I moved to Lisbon", recalled=[], receipts=[]))
        second = app.invoke(Turn(user="alice", said="I moved to Porto", recalled=[], receipts=[]))
    assert first["recalled"] == ["I moved to Lisbon"]
    assert second["recalled"] == ["I moved to Porto"]  # the put superseded the first value
    with Client(make_key(role="auditor", agent_id=None).key, served) as audit:
        assert all(audit.verify_receipt(r).valid for r in first["receipts"] + second["receipts"])
