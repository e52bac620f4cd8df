"""The request bodies and queries of the v1 contract (ARCHITECTURE §5), as the edge decodes and
validates them and the use cases take them: one value per request from the wire to the use case,
never a copy. Only msgspec and the standard library, like `gateway.responses`.

What stays at the edge (`gateway.http.wire`): the bodies it decodes with their items raw, to
decode each item on its own (`BatchIn`, `TurnsIn`); the documented shape of a batch of memories
(`BatchShape`: the memory writer takes drafts, `gateway.domain.memory.MemoryDraft`, as compiles
and remembered turns make them); and the receipts' query (`ReceiptQuery`: its kinds are the
registry's, `gateway.usecases.receiptlog.kinds`, above this module; the edge turns it into a
`gateway.domain.receipt_filter.ReceiptFilter`, as the console does its form)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

import msgspec
from msgspec import Meta

__all__ = [
    "NOT_WHITESPACE",
    "ActivateIn",
    "ClaimKey",
    "CompileIn",
    "ConflictsQuery",
    "ContextIn",
    "DeleteIn",
    "EraseIn",
    "FetchClaimsIn",
    "FetchIn",
    "HistoryQuery",
    "MemoryIdText",
    "MemoryIn",
    "MemoryTypeText",
    "Namespace",
    "ReplayIn",
    "ResolveIn",
    "SearchIn",
    "SessionContextIn",
    "SessionIn",
    "ShortText",
    "Task",
    "TimelineIn",
    "TurnIn",
    "TurnsShape",
    "WhatIfIn",
]

Namespace = Annotated[str, Meta(pattern=r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$")]
MemoryIdText = Annotated[str, Meta(pattern=r"^[0-9A-HJKMNP-TV-Z]{26}$")]
# A single-valued fact's name (ARCHITECTURE §12): `user.employer`, `account.plan`.
ClaimKey = Annotated[str, Meta(pattern=r"^[a-z][a-z0-9_.]{0,63}$")]
ShortText = Annotated[str, Meta(max_length=512)]
MemoryTypeText = Literal["semantic", "episodic", "procedural", "working"]
# More than whitespace: the schema says so, and the handlers check it again (`_require_text`).
# Whitespace as Python's `str.strip` means it, spelled out: a JSON Schema pattern is read as an
# ECMA-262 regex, whose `\s` leaves out U+001C..U+001F and U+0085 (and adds U+FEFF).
NOT_WHITESPACE = r"[^\t\n\v\f\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"
Task = Annotated[str, Meta(min_length=1, max_length=8000, pattern=NOT_WHITESPACE)]
Label = Annotated[str, Meta(min_length=1, max_length=64)]
# The largest integer a receipt body can hold: RFC 8785 numbers are IEEE 754 doubles (§3.2.2.3),
# so a request field recorded in a receipt is bounded by it (2^53 - 1).
MAX_SAFE_INTEGER = 2**53 - 1
RoleText = Literal["system", "user", "assistant", "tool"]

# Disclosures (ARCHITECTURE §1): stages 1-3 and a receipt's replay.


class FetchIn(msgspec.Struct, forbid_unknown_fields=True):
    ids: Annotated[list[MemoryIdText], Meta(min_length=1, max_length=50)]
    purpose: ShortText | None = None


class FetchClaimsIn(msgspec.Struct, forbid_unknown_fields=True):
    """Stage 3 by claim: the live memories of one namespace that hold these claim keys (a
    key-value store's lookup by key, e.g. the LangGraph store's `get`)."""

    namespace: Namespace
    claim_keys: Annotated[list[ClaimKey], Meta(min_length=1, max_length=50)]
    purpose: ShortText | None = None


class ContextIn(msgspec.Struct, forbid_unknown_fields=True):
    task: Task
    namespaces: Annotated[list[Namespace], Meta(min_length=1, max_length=64)] | None = None
    budget_tokens: Annotated[int, Meta(ge=1, le=128_000)] | None = None
    # None: the full tier is sized by the budget and the ranking's relevance cut.
    top_k: Annotated[int, Meta(ge=1, le=50)] | None = None
    memory_types: Annotated[list[MemoryTypeText], Meta(min_length=1)] | None = None
    purpose: ShortText | None = None
    include_index: bool = True
    index_budget_tokens: Annotated[int, Meta(ge=0, le=128_000)] | None = None
    fill: Literal["skip", "stop"] = "skip"
    as_of: Annotated[datetime, Meta(tz=True)] | None = None


class SearchIn(msgspec.Struct, forbid_unknown_fields=True):
    query: Task
    namespaces: Annotated[list[Namespace], Meta(min_length=1, max_length=64)] | None = None
    memory_types: Annotated[list[MemoryTypeText], Meta(min_length=1)] | None = None
    limit: Annotated[int, Meta(ge=1, le=50)] = 8
    purpose: ShortText | None = None


class TimelineIn(msgspec.Struct, forbid_unknown_fields=True):
    ids: Annotated[list[MemoryIdText], Meta(min_length=1, max_length=50)]
    purpose: ShortText | None = None


class ReplayIn(msgspec.Struct, forbid_unknown_fields=True):
    mode: Literal["exact", "current", "what_if"]
    policy_digest: Annotated[str, Meta(pattern=r"^sha256:[0-9a-f]{64}$")] | None = None
    policy_yaml: Annotated[str, Meta(max_length=256 * 1024)] | None = None


# Memories (ARCHITECTURE §5): a write (the edge makes it a `MemoryDraft`, checking the content's
# size against the gateway's setting), a soft delete, an erasure (of a memory or a turn).


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


class DeleteIn(msgspec.Struct, forbid_unknown_fields=True):
    reason: Annotated[str, Meta(min_length=1, max_length=512)]


class EraseIn(msgspec.Struct, forbid_unknown_fields=True):
    reason: Annotated[str, Meta(min_length=1, max_length=512)]


# Policies (ARCHITECTURE §7): an activation, and a candidate judged against past receipts.


class ActivateIn(msgspec.Struct, forbid_unknown_fields=True):
    mode: Literal["enforce", "log_only"]


class WhatIfIn(msgspec.Struct, forbid_unknown_fields=True):
    policy_digest: Annotated[str, Meta(pattern=r"^sha256:[0-9a-f]{64}$")] | None = None
    policy_yaml: Annotated[str, Meta(max_length=256 * 1024)] | None = None
    last: Annotated[int, Meta(ge=1, le=1000)] = 100
    since: Annotated[datetime, Meta(tz=True)] | None = None
    until: Annotated[datetime, Meta(tz=True)] | None = None


# Sessions (ARCHITECTURE §11): open one, append turns, build a step's context, page the history.


class SessionIn(msgspec.Struct, forbid_unknown_fields=True):
    namespace: Namespace
    task: Task
    system_prompt: Annotated[str, Meta(min_length=1, max_length=32_000)] | None = None
    budget_tokens: Annotated[int, Meta(ge=1, le=128_000)] = 4000
    keep_last: Annotated[int, Meta(ge=0, le=100)] = 3
    # None: a quarter of the budget (`gateway.usecases.sessions.budget.memory_share`).
    memory_budget_tokens: Annotated[int, Meta(ge=0, le=128_000)] | None = None
    remember_turns: bool = True
    labels: Annotated[list[Label], Meta(max_length=32)] = []
    idempotency_key: Annotated[str, Meta(min_length=1, max_length=128)] | None = None


class TurnIn(msgspec.Struct, forbid_unknown_fields=True):
    role: RoleText
    content: Annotated[str, Meta(min_length=1, pattern=NOT_WHITESPACE)]
    name: Annotated[str, Meta(pattern=r"^[A-Za-z0-9_-]{1,64}$")] | None = None
    occurred_at: Annotated[datetime, Meta(tz=True)] | None = None


# An append as the use case takes it (and the OpenAPI document names it): the edge decodes the
# body with its turns raw (`gateway.http.wire.TurnsIn`), then each turn on its own.
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


# Compile (ARCHITECTURE §12): a scope's facts, and the conflicts they raise.


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
