"""The request bodies of the disclosures (ARCHITECTURE §5), as the edge decodes and validates
them and the use cases take them: one value per request from the wire to the pipeline, never a
copy. Only msgspec and the standard library, like `gateway.responses`."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

import msgspec
from msgspec import Meta

__all__ = [
    "NOT_WHITESPACE",
    "ClaimKey",
    "ContextIn",
    "FetchClaimsIn",
    "FetchIn",
    "MemoryIdText",
    "MemoryTypeText",
    "Namespace",
    "ReplayIn",
    "SearchIn",
    "ShortText",
    "Task",
    "TimelineIn",
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
