"""A LangGraph store (the `langgraph` extra) on memories: `CtxgwStore`, a `BaseStore` whose items
are ctxgw memories, written, read and searched through the gateway's own endpoints, as any
agent's, so that every value that reaches the graph passed the policy and left a receipt.

    from gateway.client import AsyncClient, Client
    from gateway.client.langgraph import CtxgwStore

    store = CtxgwStore(Client(key, url), async_client=AsyncClient(key, url))
    store.put(("users", "alice"), "preferences", {"food": "no coriander"})
    store.get(("users", "alice"), "preferences").value  # {'food': 'no coriander'}
    hits = store.search(("users", "alice"), query="what does alice eat?")
    hits[0].receipt_id  # the receipt of the fetch that read it (search_receipt_id: the search's)

How an item is a memory:

- **Namespace**: the labels joined with `.` (`("users", "alice")` is `users.alice`). LangGraph
  forbids `.` inside a label, so the join is one-to-one; the joined name must be a ctxgw
  namespace (letters, digits, `_`, `:`, `-` and the dots, a letter or digit first, at most 128
  characters), else `InvalidNamespaceError` names it. The API key must be allowed it.
- **Key**: the memory's claim key (ARCHITECTURE §12), `langgraph.<key>` when the key is lower
  case letters, digits and `_` (at most 54), else `langgraph.h.<sha256 of the key, 40 hex>`;
  the key itself is the memory's `source_ref` (`source_type` `langgraph`) and its heading. A
  claim key is the gateway's name for a single-valued fact, so the gateway itself supersedes
  the previous value of a key when it is put again, in the write's transaction, with a
  recorded decision (rule `claim_key`, on the timeline); nothing here reads before a write.
- **Value**: the memory's content, the value as JSON with sorted keys. A memory whose shown
  text is not a JSON object (a transform rule of the policy rewrote it) reads as
  `{"content": <text>}`.

Operations: `get` is `POST /v1/fetch/claims` (a fetch, receipted); `search` is `POST /v1/search`
then `POST /v1/fetch` of the hits (both receipted: `gateway.client.recall`), in the
namespace itself (not its sub-namespaces: ctxgw namespaces are flat) or, for the empty prefix,
every namespace the key may read; `delete` retires the memory (`DELETE /v1/memories/{id}`, see
`CtxgwStore.delete_reason`). Items carry the memory id and the receipt ids (`CtxgwItem`,
`CtxgwSearchItem`). What the gateway cannot do is refused by name: TTLs, `index` other than the
default, a search without a query, listing namespaces.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

import msgspec
from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    validate_op_namespace,
)

from gateway.client.asynchronous import AsyncClient
from gateway.client.errors import ConflictError
from gateway.client.options import MemoryOptions, MemoryType
from gateway.client.recall import Recalled, arecall, recall
from gateway.client.sync import Client
from gateway.responses.disclosures import FetchedMemories, FetchedMemory

__all__ = ["CtxgwItem", "CtxgwSearchItem", "CtxgwStore", "claim_key", "namespace_name"]

SOURCE_TYPE = "langgraph"
_NAMESPACE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")
_READABLE_KEY = re.compile(r"[a-z0-9_]{1,54}")
_MOST_RESULTS = 50  # POST /v1/search's largest `limit`
_HEADING = 200  # a memory heading's most characters
_SOURCE_REF = 512  # a memory source_ref's most characters


def namespace_name(namespace: tuple[str, ...]) -> str:
    """The ctxgw namespace of a LangGraph namespace: its labels joined with `.`."""
    validate_op_namespace(GetOp(namespace, ""))  # labels: strings, none empty, no `.`
    name = ".".join(namespace)
    if not _NAMESPACE.fullmatch(name):
        raise InvalidNamespaceError(
            f"{namespace!r} joins to {name!r}, not a ctxgw namespace: letters, digits, "
            "'_', ':', '-' (and the '.' between labels), a letter or digit first, "
            "at most 128 characters"
        )
    return name


def _labels(name: str) -> tuple[str, ...]:
    return tuple(name.split("."))


def claim_key(key: str) -> str:
    """The claim key of an item's key: readable where the key allows, else its digest."""
    if _READABLE_KEY.fullmatch(key):
        return f"langgraph.{key}"
    return f"langgraph.h.{hashlib.sha256(key.encode('utf-8')).hexdigest()[:40]}"


class CtxgwItem(Item):
    """An item read through `get`: the memory's id and the receipt of the fetch that read it."""

    __slots__ = ("memory_id", "receipt_id")

    def __init__(self, *, memory_id: str, receipt_id: str, **item: Any) -> None:
        super().__init__(**item)
        self.memory_id, self.receipt_id = memory_id, receipt_id


class CtxgwSearchItem(SearchItem):
    """An item found by `search`: the memory's id, the receipt of the fetch that read it and
    the receipt of the search that found it."""

    __slots__ = ("memory_id", "receipt_id", "search_receipt_id")

    def __init__(
        self, *, memory_id: str, receipt_id: str, search_receipt_id: str, **item: Any
    ) -> None:
        super().__init__(**item)
        self.memory_id, self.receipt_id = memory_id, receipt_id
        self.search_receipt_id = search_receipt_id


def _value(content: str) -> dict[str, Any]:
    try:
        value = msgspec.json.decode(content)
    except msgspec.DecodeError:
        return {"content": content}
    return value if isinstance(value, dict) else {"content": content}


def _fields(memory: FetchedMemory, key: str) -> dict[str, Any]:
    # A version is never updated in place: a put is a new version, so it was created and last
    # updated at once.
    at = datetime.fromisoformat(memory.created_at)
    return {
        "namespace": _labels(memory.namespace),
        "key": key,
        "value": _value(memory.content),
        "created_at": at,
        "updated_at": at,
    }


def _got(op: GetOp, fetched: FetchedMemories) -> CtxgwItem | None:
    """The newest live memory holding the key (two can be live only in an open conflict)."""
    for memory in fetched.memories:
        if memory.source_ref == op.key:
            return CtxgwItem(
                memory_id=memory.memory_id, receipt_id=fetched.receipt_id, **_fields(memory, op.key)
            )
    return None


def _matches(value: Mapping[str, Any], wanted: Mapping[str, Any]) -> bool:
    """LangGraph's filter: each field equal to a value, or to operators (`$eq`, `$ne`, `$gt`,
    `$gte`, `$lt`, `$lte`)."""
    for name, condition in wanted.items():
        actual = value.get(name)
        tests = condition if isinstance(condition, Mapping) else {"$eq": condition}
        for operator, expected in tests.items():
            test = _OPERATORS.get(operator)
            if test is None:
                raise ValueError(f"filter {name!r}: unknown operator {operator!r}")
            try:
                if not test(actual, expected):
                    return False
            except TypeError:  # an order between values that have none (None < 3)
                return False
    return True


_OPERATORS: dict[str, Any] = {
    "$eq": lambda a, b: a == b,
    "$ne": lambda a, b: a != b,
    "$gt": lambda a, b: a > b,
    "$gte": lambda a, b: a >= b,
    "$lt": lambda a, b: a < b,
    "$lte": lambda a, b: a <= b,
}


def _found(op: SearchOp, recalled: Sequence[Recalled]) -> list[SearchItem]:
    """The store's items among the recalled memories, in the search's order, filtered, paged."""
    items: list[SearchItem] = []
    for r in recalled:
        key = r.memory.source_ref
        if (
            r.memory.source_type != SOURCE_TYPE
            or key is None
            or r.memory.claim_key != claim_key(key)
        ):
            continue  # a memory this store did not write
        fields = _fields(r.memory, key)
        if op.filter and not _matches(fields["value"], op.filter):
            continue
        items.append(
            CtxgwSearchItem(
                memory_id=r.memory.memory_id,
                receipt_id=r.receipt_id,
                search_receipt_id=r.search_receipt_id,
                score=r.score,
                **fields,
            )
        )
    return items[op.offset : op.offset + op.limit]


class CtxgwStore(BaseStore):
    """A LangGraph `BaseStore` on ctxgw memories, for one API key (the module says how an item
    is a memory). `client` serves the sync methods, `async_client` the async ones (`aget`,
    `aput`, ...); one of them may be left out when the graph runs only the other way.

    `delete` retires the memory (a soft delete, `delete_reason` recorded), it does not erase
    it: the agent's "this is no longer so" is a retirement in ctxgw, after which no search,
    context or `get` shows it, while the receipts that already disclosed it still replay
    exactly. Erasure (the text blanked, for the right to be forgotten) is an admin's act,
    receipted on its own, and no agent key may do it.
    """

    def __init__(
        self,
        client: Client | None = None,
        *,
        async_client: AsyncClient | None = None,
        purpose: str | None = None,
        memory_type: MemoryType = "semantic",
        labels: Sequence[str] = (),
        delete_reason: str = "deleted through the LangGraph store",
    ) -> None:
        if client is None and async_client is None:
            raise ValueError("CtxgwStore needs a Client, an AsyncClient, or both")
        self.client, self.async_client = client, async_client
        self.purpose, self.memory_type = purpose, memory_type
        self.labels, self.delete_reason = tuple(labels), delete_reason

    def _sync(self) -> Client:
        if self.client is None:
            raise RuntimeError("this CtxgwStore has no Client: pass client= for the sync methods")
        return self.client

    def _async(self) -> AsyncClient:
        if self.async_client is None:
            raise RuntimeError(
                "this CtxgwStore has no AsyncClient: pass async_client= for the async methods"
            )
        return self.async_client

    def _write(self, op: PutOp, value: Mapping[str, Any]) -> tuple[str, str, str, MemoryOptions]:
        """The namespace, heading, content and options of the memory a put writes."""
        if op.index is not None:
            raise ValueError("ctxgw indexes every memory whole: `index` must be left unset")
        if op.ttl is not None:
            raise NotImplementedError("CtxgwStore keeps no TTL (a memory's expiry is absolute)")
        if not 0 < len(op.key) <= _SOURCE_REF:
            raise ValueError(f"a key is 1 to {_SOURCE_REF} characters; got {len(op.key)}")
        heading = op.key if len(op.key) <= _HEADING else op.key[: _HEADING - 1] + "…"
        content = msgspec.json.encode(value, order="sorted").decode("utf-8")
        options: MemoryOptions = {
            "memory_type": self.memory_type,
            "source_type": SOURCE_TYPE,
            "source_ref": op.key,
            "claim_key": claim_key(op.key),
        }
        if self.labels:
            options["labels"] = self.labels
        return namespace_name(op.namespace), heading, content, options

    @staticmethod
    def _search_scope(op: SearchOp) -> tuple[str, list[str] | None, int]:
        """The query, the namespaces (None: every one the key may read) and how many hits."""
        if op.query is None or not op.query.strip():
            raise ValueError(
                "CtxgwStore.search needs a query: ctxgw discloses memories through a ranked, "
                "receipted search, and has no unranked listing"
            )
        if op.limit < 1 or op.offset < 0 or op.offset + op.limit > _MOST_RESULTS:
            raise ValueError(f"offset + limit must be 1 to {_MOST_RESULTS} (the gateway's most)")
        names = [namespace_name(op.namespace_prefix)] if op.namespace_prefix else None
        return op.query, names, op.offset + op.limit

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Each op in order, each through the gateway: a get is a fetch by claim, a put a write,
        a delete a fetch by claim and a retirement, a search a search and a fetch."""
        client = self._sync()
        return [self._run(client, op) for op in ops]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """`batch`, awaited on the `AsyncClient`."""
        client = self._async()
        return [await self._arun(client, op) for op in ops]

    def _run(self, client: Client, op: Op) -> Result:
        if isinstance(op, GetOp):
            found = client.fetch_claims(
                namespace_name(op.namespace), [claim_key(op.key)], purpose=self.purpose
            )
            return _got(op, found)
        if isinstance(op, PutOp):
            if op.value is None:
                self._delete(client, op)
            else:
                namespace, heading, content, options = self._write(op, op.value)
                client.write_memory(namespace, heading, content, **options)
            return None
        if isinstance(op, SearchOp):
            query, names, limit = self._search_scope(op)
            recalled = recall(client, query, namespaces=names, limit=limit, purpose=self.purpose)
            return _found(op, recalled)
        return _unlisted(op)

    def _delete(self, client: Client, op: PutOp) -> None:
        name = namespace_name(op.namespace)
        found = client.fetch_claims(name, [claim_key(op.key)], purpose=self.purpose)
        for memory in found.memories:
            if memory.source_ref == op.key:
                # A 409: retired meanwhile (superseded or deleted), gone all the same.
                with contextlib.suppress(ConflictError):
                    client.delete_memory(memory.memory_id, self.delete_reason)

    async def _arun(self, client: AsyncClient, op: Op) -> Result:
        if isinstance(op, GetOp):
            found = await client.fetch_claims(
                namespace_name(op.namespace), [claim_key(op.key)], purpose=self.purpose
            )
            return _got(op, found)
        if isinstance(op, PutOp):
            if op.value is None:
                await self._adelete(client, op)
            else:
                namespace, heading, content, options = self._write(op, op.value)
                await client.write_memory(namespace, heading, content, **options)
            return None
        if isinstance(op, SearchOp):
            query, names, limit = self._search_scope(op)
            recalled = await arecall(
                client, query, namespaces=names, limit=limit, purpose=self.purpose
            )
            return _found(op, recalled)
        return _unlisted(op)

    async def _adelete(self, client: AsyncClient, op: PutOp) -> None:
        name = namespace_name(op.namespace)
        found = await client.fetch_claims(name, [claim_key(op.key)], purpose=self.purpose)
        for memory in found.memories:
            if memory.source_ref == op.key:
                # A 409: retired meanwhile (superseded or deleted), gone all the same.
                with contextlib.suppress(ConflictError):
                    await client.delete_memory(memory.memory_id, self.delete_reason)


def _unlisted(op: Op) -> Result:
    if isinstance(op, ListNamespacesOp):
        raise NotImplementedError(
            "ctxgw lists no namespaces to an agent: a key's namespaces are set when it is made"
        )
    raise TypeError(f"not a LangGraph store operation: {op!r}")
