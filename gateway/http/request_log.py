"""The request log (ARCHITECTURE §14): one line per HTTP request, its id in `X-Request-ID`, and
its count and latency in the metrics (`gateway.http.metrics.Metrics.served`): one observation of
each request, for both.

It wraps the whole app (routing included), so a request no route matched is logged, counted and
answered with its id too. The id is the client's own `X-Request-ID` when that is a sane token (so
a trace spans the caller and the gateway), else a fresh one. The line holds identifiers only: request id,
method, route template (never the path, whose ids and query a client chose), status, duration,
tenant and key id once the key authenticated, the receipt the request appended. Never a body, a
header value beside the request id, memory text, task text or a secret.
"""

from __future__ import annotations

import logging
import re
import time
import uuid
from typing import TYPE_CHECKING, Any

from litestar.enums import ScopeType
from litestar.types import ASGIApp, Message, Receive, Scope, Send

from gateway.usecases.access.request_record import recording

if TYPE_CHECKING:
    from gateway.http.metrics import Metrics

__all__ = ["REQUEST_ID_HEADER", "route_template", "with_request_log"]

REQUEST_ID_HEADER = "x-request-id"
# How far behind its primary the replica that served the request's reads was (seconds).
REPLICA_LAG_HEADER = "ctxgw-replica-lag-seconds"
# Room for a UUID, a ULID or a W3C trace id with a span; nothing that could break a log line.
_SANE_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")
_log = logging.getLogger("ctxgw.request")


def route_template(scope: Scope) -> str:
    """The template of the route that answered (`unmatched` when none did). Litestar gives a
    mounted app (`/mcp`) the root's empty template, so a mount is named by its own path."""
    if template := scope.get("path_template"):
        return str(template)
    handler = scope.get("route_handler")
    mounted = sorted(getattr(handler, "paths", ())) if handler is not None else []
    return mounted[0] if mounted else "unmatched"


def _request_id(scope: Scope) -> str:
    said = [v for k, v in scope["headers"] if k.lower() == REQUEST_ID_HEADER.encode()]
    if len(said) == 1:
        value = said[0].decode("latin-1")
        if _SANE_ID.fullmatch(value):
            return value
    return uuid.uuid4().hex


def with_request_log(app: ASGIApp, metrics: Metrics) -> ASGIApp:
    async def logged(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != ScopeType.HTTP:
            await app(scope, receive, send)
            return
        started = time.perf_counter()
        request_id = _request_id(scope)
        status = 500  # what the server answers if the app sent nothing

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                headers = [
                    (k, v)
                    for k, v in message.get("headers", [])
                    if k.lower() != REQUEST_ID_HEADER.encode()
                ]
                headers.append((REQUEST_ID_HEADER.encode(), request_id.encode()))
                if record.replica_lag_seconds is not None:
                    lag = f"{record.replica_lag_seconds:.3f}"
                    headers.append((REPLICA_LAG_HEADER.encode(), lag.encode()))
                message = {**message, "headers": headers}
            await send(message)

        with recording(request_id) as record, metrics.serving():
            try:
                await app(scope, receive, sending)
            finally:
                seconds = time.perf_counter() - started
                route = route_template(scope)
                metrics.served(scope, route, status, seconds)
                fields: dict[str, Any] = {
                    "request_id": request_id,
                    "method": scope.get("method", ""),
                    "route": route,
                    "status": status,
                    "duration_ms": round(seconds * 1000, 3),
                    "tenant": record.tenant_id,
                    "key_id": record.key_id,
                    # A receipt the request appended but whose transaction did not commit
                    # exists nowhere: name only what the answer says exists.
                    "receipt_id": record.receipt_id if status < 500 else None,
                }
                _log.info("request", extra=fields)

    return logged
