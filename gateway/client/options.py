"""The optional members of each request, as keyword arguments (PEP 692 `Unpack`): one definition
that the sync and the async client share, so that their signatures cannot drift apart. Their
meaning is the HTTP contract's (README, `/schema`); an omitted option takes the gateway's
default."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Literal, TypedDict

import msgspec

__all__ = [
    "ContextOptions",
    "MemoryOptions",
    "MemoryType",
    "NewMemory",
    "NewTurn",
    "ReceiptFilter",
    "SearchOptions",
    "SessionContextOptions",
    "SessionOptions",
    "WhatIfOptions",
]

MemoryType = Literal["semantic", "episodic", "procedural", "working"]


class MemoryOptions(TypedDict, total=False):
    memory_type: MemoryType
    confidence: float
    labels: Sequence[str]
    source_type: str
    source_ref: str
    claim_key: str
    supersedes: str
    expires_at: datetime
    # Without one the client makes one, so that a retried write is never a second memory.
    idempotency_key: str


class NewMemory(msgspec.Struct, frozen=True, omit_defaults=True, kw_only=True):
    """One memory to write (an item of `write_batch`); unset members take the gateway's defaults."""

    namespace: str
    heading: str
    content: str
    memory_type: MemoryType | None = None
    confidence: float | None = None
    labels: Sequence[str] | None = None
    source_type: str | None = None
    source_ref: str | None = None
    claim_key: str | None = None
    supersedes: str | None = None
    expires_at: datetime | None = None
    idempotency_key: str | None = None


class ContextOptions(TypedDict, total=False):
    namespaces: Sequence[str]
    budget_tokens: int
    top_k: int
    memory_types: Sequence[MemoryType]
    purpose: str
    include_index: bool
    index_budget_tokens: int
    fill: Literal["skip", "stop"]
    as_of: datetime  # auditors and admins: the memory state and policy in force then


class SearchOptions(TypedDict, total=False):
    namespaces: Sequence[str]
    memory_types: Sequence[MemoryType]
    limit: int
    purpose: str


class ReceiptFilter(TypedDict, total=False):
    agent_id: str
    kind: str
    since: datetime
    until: datetime
    memory_id: str  # every receipt that disclosed this memory


class WhatIfOptions(TypedDict, total=False):
    policy_digest: str
    policy_yaml: str
    last: int
    since: datetime
    until: datetime


class SessionOptions(TypedDict, total=False):
    system_prompt: str
    budget_tokens: int
    keep_last: int
    memory_budget_tokens: int  # 0: no memory hydration
    remember_turns: bool
    labels: Sequence[str]
    # Without one the client makes one, so that a retried create is never a second session.
    idempotency_key: str


Role = Literal["system", "user", "assistant", "tool"]


class NewTurn(msgspec.Struct, frozen=True, omit_defaults=True, kw_only=True):
    """One turn to append to a session's history; `occurred_at` imports a past conversation."""

    role: Role
    content: str
    name: str | None = None
    occurred_at: datetime | None = None


class SessionContextOptions(TypedDict, total=False):
    budget_tokens: int
    query: str  # what memories to recall (default: the task and the last user turn)
    purpose: str
