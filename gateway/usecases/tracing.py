"""Where a request's stages begin and end, for whoever traces them (`gateway.http.tracing`).

The use cases name their stages (the policy's request and memory stages, recall, assembly, the
receipt write) and label them with ids, a tenant, a kind or a count: never memory text, a task or
a key. They know nothing of OpenTelemetry, an optional extra: the HTTP edge sets a `Tracer` for
the request it serves, in a context variable (two apps in one process never share one). Without
one, a stage costs a context-variable read and a no-op context manager.
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from contextvars import ContextVar
from typing import Protocol

__all__ = [
    "KIND",
    "RECEIPT_ID",
    "TENANT",
    "TRACER",
    "Span",
    "Tracer",
    "Value",
    "stage",
]

# The labels a stage may carry (OpenTelemetry attribute names, in the gateway's own namespace).
RECEIPT_ID = "ctxgw.receipt_id"
TENANT = "ctxgw.tenant"
KIND = "ctxgw.kind"

Value = str | int | float | bool


class Span(Protocol):
    def label(self, name: str, value: Value) -> None:
        """Attach ``value`` under ``name``: an id, a tenant, a kind, a count; never text."""


class Tracer(Protocol):
    def stage(self, name: str) -> AbstractContextManager[Span]:
        """A span for the stage ``name``, a child of the current one, around a `with` block."""


class _Untraced:
    def label(self, name: str, value: Value) -> None:
        pass


_UNTRACED = _Untraced()
TRACER: ContextVar[Tracer | None] = ContextVar("ctxgw_tracer", default=None)


def stage(name: str) -> AbstractContextManager[Span]:
    """``with stage("ctxgw.recall") as span:`` a span around the block, when a tracer is set."""
    tracer = TRACER.get()
    return nullcontext(_UNTRACED) if tracer is None else tracer.stage(name)
