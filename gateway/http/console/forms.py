"""What the console's forms and query strings may carry, validated like the API's JSON: every
bad field named at once (`gateway.http.validation`), with the API's own limits.

An HTML form sends every field, the blank ones as empty strings: blank means "not given". A
`datetime-local` input sends no offset: the console's pages say their times are UTC, so such a
value is read as UTC.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime
from typing import Annotated, Any, Literal, TypeVar

import msgspec
from msgspec import Meta

from gateway.http.validation import decode_struct
from gateway.http.wire import KindText, LogPositionText
from gateway.requests import MemoryIdText, Namespace, Task

__all__ = [
    "CSRF_FIELD",
    "AgentQuery",
    "AsOfForm",
    "ListQuery",
    "ReplayForm",
    "WhatIfForm",
    "decode_form",
]

Digest = Annotated[str, Meta(pattern=r"^sha256:[0-9a-f]{64}$")]
Instant = Annotated[datetime, Meta(tz=True)]
PolicyYaml = Annotated[str, Meta(max_length=256 * 1024)]
_LOCAL_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d{1,6})?)?$")
CSRF_FIELD = "csrf"
ALL = "*"
S = TypeVar("S", bound=msgspec.Struct)


class ListQuery(msgspec.Struct, forbid_unknown_fields=True):
    agent_id: Annotated[str, Meta(max_length=256)] | None = None
    kind: KindText | None = None
    since: Instant | None = None
    until: Instant | None = None
    memory_id: MemoryIdText | None = None
    policy_digest: Digest | None = None
    cursor: LogPositionText | None = None


class AgentQuery(msgspec.Struct, forbid_unknown_fields=True):
    at: Instant | None = None


class AgentPick(msgspec.Struct, forbid_unknown_fields=True):
    """The list page's "what did an agent know at T" form."""

    agent_id: Annotated[str, Meta(min_length=1, max_length=256)]
    at: Instant | None = None


class ReplayForm(msgspec.Struct, forbid_unknown_fields=True):
    mode: Literal["exact", "current", "what_if"]
    policy_digest: Digest | None = None
    policy_yaml: PolicyYaml | None = None


class AsOfForm(msgspec.Struct, forbid_unknown_fields=True):
    at: Instant
    task: Task
    namespaces: Annotated[list[Namespace], Meta(min_length=1, max_length=64)] | None = None
    budget_tokens: Annotated[int, Meta(ge=1, le=128_000)] | None = None
    # Blank: as the API without top_k, a full tier sized by the budget.
    top_k: Annotated[int, Meta(ge=1, le=50)] | None = None


class WhatIfForm(msgspec.Struct, forbid_unknown_fields=True):
    policy_digest: Digest | None = None
    policy_yaml: PolicyYaml | None = None
    last: Annotated[int, Meta(ge=1, le=1000)] = 100


def _value(name: str, value: str) -> Any:
    if _LOCAL_TIME.match(value):
        return value + "Z"
    if name in {"budget_tokens", "top_k", "last"} and value.isdigit():
        return int(value)
    if name == "namespaces":
        # "*" is how a request by a key of every namespace records them: "all", as blank is.
        return [part for part in re.split(r"[\s,]+", value) if part and part != ALL] or None
    return value


def decode_form(items: Iterable[tuple[str, str]], struct_type: type[S]) -> S:
    """A struct from form or query fields; blank fields and the CSRF token left out."""
    data: dict[str, Any] = {}
    for name, value in items:
        if name != CSRF_FIELD and isinstance(value, str) and value.strip():
            parsed = _value(name, value.strip() if name != "policy_yaml" else value)
            if parsed is not None:
                data[name] = parsed
    return decode_struct(data, struct_type)
