"""Wire types the edge parses: the JSON shapes of the v1 contract (ARCHITECTURE §5) that the
edge turns into use-case values itself (the request bodies the use cases take as they are live
in `gateway.requests`)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

import msgspec
from msgspec import Meta

from gateway.requests import (
    NOT_WHITESPACE,
    ClaimKey,
    MemoryIdText,
    MemoryTypeText,
    Namespace,
    ShortText,
    Task,
)
from gateway.usecases.receiptlog.kinds import KIND_NAMES

__all__ = [
    "BatchIn",
    "BatchShape",
    "DeleteIn",
    "KindText",
    "LogPositionText",
    "MemoryIdText",
    "MemoryIn",
    "Namespace",
    "Task",
]

Label = Annotated[str, Meta(min_length=1, max_length=64)]
# The largest integer a receipt body can hold: RFC 8785 numbers are IEEE 754 doubles (§3.2.2.3),
# so a request field recorded in a receipt is bounded by it (2^53 - 1).
MAX_SAFE_INTEGER = 2**53 - 1
# A position in a tenant's log, as a listing's cursor spells it: at most 2^53 - 1.
LogPositionText = Annotated[str, Meta(pattern=r"^[0-9]{1,16}$")]
# A receipt kind, one of the registry's (validated by pattern, documented as an enum).
KindText = Annotated[
    str,
    Meta(
        pattern="^(" + "|".join(KIND_NAMES) + ")$",
        extra_json_schema={"enum": list(KIND_NAMES)},
    ),
]


class MemoryIn(msgspec.Struct, forbid_unknown_fields=True):
    namespace: Namespace
    heading: Annotated[str, Meta(min_length=1, max_length=200)]
    content: str
    memory_type: MemoryTypeText = "semantic"
    confidence: Annotated[float, Meta(ge=0.0, le=1.0)] = 0.8
    labels: Annotated[list[Label], Meta(max_length=32)] = []
    source_type: ShortText | None = None
    source_ref: ShortText | None = None
    claim_key: ClaimKey | None = None
    supersedes: MemoryIdText | None = None
    expires_at: Annotated[datetime, Meta(tz=True)] | None = None
    idempotency_key: Annotated[str, Meta(min_length=1, max_length=128)] | None = None


class BatchIn(msgspec.Struct, forbid_unknown_fields=True):
    items: Annotated[list[dict[str, object]], Meta(min_length=1, max_length=100)]


class BatchShape(msgspec.Struct, forbid_unknown_fields=True):
    """The documented shape of a batch (OpenAPI): each item is then decoded as a `MemoryIn` on
    its own, so that its errors name the item (`BatchIn` keeps the items raw for that)."""

    items: Annotated[list[MemoryIn], Meta(min_length=1, max_length=100)]


class DeleteIn(msgspec.Struct, forbid_unknown_fields=True):
    reason: Annotated[str, Meta(min_length=1, max_length=512)]


class EraseIn(msgspec.Struct, forbid_unknown_fields=True):
    reason: Annotated[str, Meta(min_length=1, max_length=512)]


class ReceiptQuery(msgspec.Struct, forbid_unknown_fields=True):
    agent_id: Annotated[str, Meta(max_length=256)] | None = None
    kind: KindText | None = None
    since: Annotated[datetime, Meta(tz=True)] | None = None
    until: Annotated[datetime, Meta(tz=True)] | None = None
    memory_id: MemoryIdText | None = None
    cursor: LogPositionText | None = None
    limit: Annotated[int, Meta(ge=1, le=1000)] = 100


class ActivateIn(msgspec.Struct, forbid_unknown_fields=True):
    mode: Literal["enforce", "log_only"]


class WhatIfIn(msgspec.Struct, forbid_unknown_fields=True):
    policy_digest: Annotated[str, Meta(pattern=r"^sha256:[0-9a-f]{64}$")] | None = None
    policy_yaml: Annotated[str, Meta(max_length=256 * 1024)] | None = None
    last: Annotated[int, Meta(ge=1, le=1000)] = 100
    since: Annotated[datetime, Meta(tz=True)] | None = None
    until: Annotated[datetime, Meta(tz=True)] | None = None


RoleText = Literal["system", "user", "assistant", "tool"]


class SessionIn(msgspec.Struct, forbid_unknown_fields=True):
    namespace: Namespace
    task: Task
    system_prompt: Annotated[str, Meta(min_length=1, max_length=32_000)] | None = None
    budget_tokens: Annotated[int, Meta(ge=1, le=128_000)] = 4000
    keep_last: Annotated[int, Meta(ge=0, le=100)] = 3
    memory_budget_tokens: Annotated[int, Meta(ge=0, le=128_000)] | None = None
    remember_turns: bool = True
    labels: Annotated[list[Label], Meta(max_length=32)] = []
    idempotency_key: Annotated[str, Meta(min_length=1, max_length=128)] | None = None


class TurnIn(msgspec.Struct, forbid_unknown_fields=True):
    role: RoleText
    content: Annotated[str, Meta(min_length=1, pattern=NOT_WHITESPACE)]
    name: Annotated[str, Meta(pattern=r"^[A-Za-z0-9_-]{1,64}$")] | None = None
    occurred_at: Annotated[datetime, Meta(tz=True)] | None = None


class TurnsIn(msgspec.Struct, forbid_unknown_fields=True):
    turns: Annotated[list[dict[str, object]], Meta(min_length=1, max_length=100)]
    idempotency_key: Annotated[str, Meta(min_length=1, max_length=128)] | None = None


class TurnsShape(msgspec.Struct, forbid_unknown_fields=True):
    """The documented shape of an append (OpenAPI): each turn is then decoded as a `TurnIn` on
    its own, so that its errors name the turn (`TurnsIn` keeps them raw for that)."""

    turns: Annotated[list[TurnIn], Meta(min_length=1, max_length=100)]
    idempotency_key: Annotated[str, Meta(min_length=1, max_length=128)] | None = None


class SessionContextIn(msgspec.Struct, forbid_unknown_fields=True):
    budget_tokens: Annotated[int, Meta(ge=1, le=128_000)] | None = None
    query: Task | None = None
    purpose: ShortText | None = None


class HistoryQuery(msgspec.Struct, forbid_unknown_fields=True):
    after: Annotated[int, Meta(ge=0, le=MAX_SAFE_INTEGER)] = 0
    limit: Annotated[int, Meta(ge=1, le=1000)] = 100
    purpose: ShortText | None = None


class CompileIn(msgspec.Struct, forbid_unknown_fields=True):
    """POST /v1/compile: one scope, a session or a namespace; `async` to poll for the result."""

    session_id: MemoryIdText | None = None
    namespace: Namespace | None = None
    run_async: bool = msgspec.field(default=False, name="async")
    extractor: Annotated[str, Meta(min_length=1, max_length=64)] | None = None


class ResolveIn(msgspec.Struct, forbid_unknown_fields=True):
    """POST /v1/conflicts/{id}/resolve: which side holds, and why."""

    winner: MemoryIdText
    reason: Annotated[str, Meta(min_length=1, max_length=512)]


class ConflictsQuery(msgspec.Struct, forbid_unknown_fields=True):
    namespace: Namespace | None = None
    status: Literal["open", "all"] = "open"
    after: Annotated[str, Meta(max_length=26)] = ""
    limit: Annotated[int, Meta(ge=1, le=200)] = 50
