"""Wire types only the edge parses (ARCHITECTURE §5); the request bodies the use cases take as
they are live in `gateway.requests`.

Here: a batch's body with its items raw (`BatchIn`, `TurnsIn`), so that each item is decoded on
its own and its errors name it; the documented shape of a batch of memories (`BatchShape`: the
edge makes each item a `MemoryDraft`, the writer's value); and the receipts' query, whose kinds
are the registry's (`gateway.usecases.receiptlog.kinds`, above `gateway.requests`), which the
edge turns into a `ReceiptFilter` as the console does its form."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import msgspec
from msgspec import Meta

from gateway.requests import MemoryIdText, MemoryIn
from gateway.usecases.receiptlog.kinds import KIND_NAMES

__all__ = [
    "BatchIn",
    "BatchShape",
    "KindText",
    "LogPositionText",
    "ReceiptQuery",
    "TurnsIn",
]

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


class BatchIn(msgspec.Struct, forbid_unknown_fields=True):
    items: Annotated[list[dict[str, object]], Meta(min_length=1, max_length=100)]


class BatchShape(msgspec.Struct, forbid_unknown_fields=True):
    """The documented shape of a batch (OpenAPI): each item is then decoded as a `MemoryIn` on
    its own, so that its errors name the item (`BatchIn` keeps the items raw for that)."""

    items: Annotated[list[MemoryIn], Meta(min_length=1, max_length=100)]


class TurnsIn(msgspec.Struct, forbid_unknown_fields=True):
    turns: Annotated[list[dict[str, object]], Meta(min_length=1, max_length=100)]
    idempotency_key: Annotated[str, Meta(min_length=1, max_length=128)] | None = None


class ReceiptQuery(msgspec.Struct, forbid_unknown_fields=True):
    agent_id: Annotated[str, Meta(max_length=256)] | None = None
    kind: KindText | None = None
    since: Annotated[datetime, Meta(tz=True)] | None = None
    until: Annotated[datetime, Meta(tz=True)] | None = None
    memory_id: MemoryIdText | None = None
    cursor: LogPositionText | None = None
    limit: Annotated[int, Meta(ge=1, le=1000)] = 100
