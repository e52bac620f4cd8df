"""One mapping from errors to RFC 9457 problem details, at the edge.

Every problem carries a stable `code` (clients switch on it, never on `detail`) and, for
validation failures, `errors`: every bad field with its message. A policy refusal
(`policy_refused`) carries `receipt_id`, the refusal's receipt (null if it could not be written).
"""

from __future__ import annotations

import logging
from typing import Any

from litestar import Request, Response
from litestar.exceptions import HTTPException

from gateway.domain.errors import (
    ConflictError,
    ForbiddenError,
    GatewayError,
    InvalidRequestError,
    NotFoundError,
    PayloadTooLargeError,
    PolicyRefusedError,
    RateLimitedError,
    RequestTimeoutError,
    UnauthenticatedError,
    UnavailableError,
    UnsupportedMediaTypeError,
)
from gateway.responses.problems import FieldProblem, Problem

__all__ = ["EXCEPTION_HANDLERS", "MEDIA_TYPE", "TITLES", "problem"]

_log = logging.getLogger(__name__)
MEDIA_TYPE = "application/problem+json"

_STATUS: dict[type[GatewayError], int] = {
    InvalidRequestError: 422,
    UnauthenticatedError: 401,
    ForbiddenError: 403,
    NotFoundError: 404,
    ConflictError: 409,
    RequestTimeoutError: 408,
    PayloadTooLargeError: 413,
    UnsupportedMediaTypeError: 415,
    RateLimitedError: 429,
    UnavailableError: 503,
}
TITLES = {
    400: "Bad request",
    401: "Unauthenticated",
    403: "Forbidden",
    404: "Not found",
    405: "Method not allowed",
    408: "Request timeout",
    409: "Conflict",
    413: "Payload too large",
    415: "Unsupported media type",
    422: "Invalid request",
    429: "Too many requests",
    500: "Internal error",
    503: "Service unavailable",
}
# Syntax errors (the body is not JSON at all) are 400; well-formed but invalid content is 422.
_BAD_REQUEST_CODES = {"malformed_json", "empty_body", "too_deep", "bad_path"}
# A 503 says when to try again (RFC 9110 §10.2.3): long enough for a database failover or an
# embedding server restart, short enough that an agent does not give up on the turn.
RETRY_AFTER_SECONDS = 5


def problem(
    status: int,
    code: str,
    detail: str,
    *,
    retry_after: int | None = None,
    allow: str | None = None,
    **members: Any,
) -> Response[Problem]:
    """The problem response; `members` are the optional members of `Problem`."""
    body = Problem(
        type=f"/problems/{code}",
        title=TITLES.get(status, "Error"),
        status=status,
        code=code,
        detail=detail,
        **members,
    )
    headers: dict[str, str] = {}
    if status == 401:
        headers["WWW-Authenticate"] = 'Bearer realm="ctxgw"'
    elif status in (429, 503):
        headers["Retry-After"] = str(retry_after or RETRY_AFTER_SECONDS)
    elif status == 405 and allow:
        headers["Allow"] = allow  # required with a 405 (RFC 9110 §15.5.6)
    elif status == 408:
        headers["Connection"] = "close"  # the rest of a late body is not worth reading
    return Response(body, status_code=status, media_type=MEDIA_TYPE, headers=headers or None)


def _gateway_error(request: Request[Any, Any, Any], exc: Exception) -> Response[Problem]:
    assert isinstance(exc, GatewayError)
    status = next((s for t, s in _STATUS.items() if isinstance(exc, t)), 500)
    if isinstance(exc, UnavailableError):
        # The detail may carry a dependency's own words: logged for the operator, not sent.
        _log.error("%s on %s: %s", exc.code, request.url.path, exc.detail)
        said = exc.summary or exc.detail
        return problem(503, exc.code, f"{said}; nothing was disclosed (fail closed)")
    members: dict[str, Any] = {"instance": request.url.path}
    if isinstance(exc, InvalidRequestError):
        if exc.code in _BAD_REQUEST_CODES:
            status = 400
        members["errors"] = [FieldProblem(e.field, e.message) for e in exc.fields]
    if isinstance(exc, PolicyRefusedError):
        members["receipt_id"] = exc.receipt_id  # the refusal's receipt; null if it failed to write
    if isinstance(exc, RateLimitedError):
        members["retry_after"] = exc.retry_after_seconds
    return problem(status, exc.code, exc.detail, **members)


def _http_exception(request: Request[Any, Any, Any], exc: Exception) -> Response[Problem]:
    assert isinstance(exc, HTTPException)
    status = exc.status_code
    code = {
        404: "route_not_found",
        405: "method_not_allowed",
        413: "payload_too_large",
        415: "unsupported_media_type",
    }.get(status, "http_error")
    detail = exc.detail
    if status == 413:
        detail = "the request body is larger than the limit (GATEWAY_MAX_BODY_BYTES)"
    allow = (exc.headers or {}).get("allow")
    return problem(status, code, detail, allow=allow, instance=request.url.path)


def _unexpected(request: Request[Any, Any, Any], exc: Exception) -> Response[Problem]:
    _log.exception("unexpected error on %s", request.url.path, exc_info=exc)
    return problem(500, "internal_error", "an unexpected error occurred; it was logged")


EXCEPTION_HANDLERS: dict[type[Exception] | int, Any] = {
    GatewayError: _gateway_error,
    HTTPException: _http_exception,
    Exception: _unexpected,
}
