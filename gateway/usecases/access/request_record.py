"""What the request log learns about the request being served from the layers that know it.

The edge opens a `RequestRecord` when a request arrives (`gateway.http.request_log`) and writes
the log line when the response is sent; in between, the unit of work notes who the key turned
out to be and the recorder notes the receipt it appended. Only identifiers: nothing a client
wrote (task, memory text, the key's secret) ever reaches the record.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from gateway.domain.principal import Principal

__all__ = ["RequestRecord", "note_principal", "note_receipt", "note_replica_lag", "recording"]


@dataclass(slots=True)
class RequestRecord:
    request_id: str
    tenant_id: str | None = None
    key_id: str | None = None
    receipt_id: str | None = None
    replica_lag_seconds: float | None = None  # the request read from a replica this far behind


# A holder, not values set one by one: tasks spawned below (a thread, a child task) copy the
# context, so they write to the same record rather than to copies of single variables.
_CURRENT: ContextVar[RequestRecord | None] = ContextVar("ctxgw_request_record", default=None)


@contextmanager
def recording(request_id: str) -> Iterator[RequestRecord]:
    record = RequestRecord(request_id)
    token = _CURRENT.set(record)
    try:
        yield record
    finally:
        _CURRENT.reset(token)


def note_principal(principal: Principal) -> None:
    """The key authenticated as `principal` (nothing is noted for keys that did not)."""
    record = _CURRENT.get()
    if record is not None:
        record.tenant_id = principal.tenant_id
        record.key_id = principal.key_id


def note_receipt(receipt_id: str) -> None:
    """A receipt was appended in this request's transaction (the last one counts: a replay
    writes its own)."""
    record = _CURRENT.get()
    if record is not None:
        record.receipt_id = receipt_id


def note_replica_lag(seconds: float) -> None:
    """The request's reads were served by a replica trailing its primary by `seconds`."""
    record = _CURRENT.get()
    if record is not None:
        record.replica_lag_seconds = seconds
