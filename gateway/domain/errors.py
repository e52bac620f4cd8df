"""Errors the use cases raise on purpose; `gateway.http.problems` maps each to RFC 9457.

GatewayError (code, detail)
├── InvalidRequestError      422 / 400: every bad field listed
├── UnauthenticatedError     401: missing, malformed, unknown or revoked key
├── ForbiddenError           403: wrong role, namespace or purpose the key may not use
│   └── PolicyRefusedError   403: an enforced `require` rule refused; names its refusal receipt
├── NotFoundError            404: absent, or another tenant's (never 403 across tenants)
├── ConflictError            409: the state does not allow it (retired memory, reused key)
├── PayloadTooLargeError     413
├── RequestTimeoutError      408 + Connection: close: the body arrived too slowly
├── UnsupportedMediaTypeError 415: the body is labelled as a type the route does not read
├── RateLimitedError         429 + Retry-After: the key spent its requests or writes per second
└── UnavailableError         503 + Retry-After: a dependency failed; fail closed, no content
    ├── EmbeddingError       503 embedder_unavailable (gateway.embedding.base)
    └── StoreError           the database (`gateway.store.errors`, translated at the connection)

A client is told what failed in our words (`summary`, else the detail). A dependency's own words
(driver messages, an upstream's error body) are logged, never sent.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "ConflictError",
    "FieldError",
    "ForbiddenError",
    "GatewayError",
    "InvalidRequestError",
    "NotFoundError",
    "PayloadTooLargeError",
    "PolicyRefusedError",
    "RateLimitedError",
    "RequestTimeoutError",
    "UnauthenticatedError",
    "UnavailableError",
    "UnsupportedMediaTypeError",
]


@dataclass(frozen=True, slots=True)
class FieldError:
    """One bad field: a JSON-pointer-like path (`items/3/heading`) and what is wrong with it."""

    field: str
    message: str


class GatewayError(Exception):
    code = "error"

    def __init__(self, detail: str, *, code: str | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        if code is not None:
            self.code = code


class InvalidRequestError(GatewayError):
    code = "invalid_request"

    def __init__(
        self, detail: str, fields: tuple[FieldError, ...] = (), *, code: str | None = None
    ) -> None:
        super().__init__(detail, code=code)
        self.fields = fields


class UnauthenticatedError(GatewayError):
    code = "unauthenticated"


class ForbiddenError(GatewayError):
    code = "forbidden"


class PolicyRefusedError(ForbiddenError):
    """The policy in force refused the request before anything was read.

    `receipt_id` is the refusal's receipt, written in the request's transaction: the unit of work
    commits it although the request fails. None only when it could not be written; the request
    is refused all the same."""

    code = "policy_refused"

    def __init__(self, rule_id: str, reason: str, *, receipt_id: str | None = None) -> None:
        super().__init__(f"refused by policy rule {rule_id}: {reason}")
        self.rule_id = rule_id
        self.reason = reason
        self.receipt_id = receipt_id


class NotFoundError(GatewayError):
    code = "not_found"


class ConflictError(GatewayError):
    code = "conflict"


class PayloadTooLargeError(GatewayError):
    code = "payload_too_large"


class RequestTimeoutError(GatewayError):
    code = "request_timeout"


class UnsupportedMediaTypeError(GatewayError):
    code = "unsupported_media_type"


class RateLimitedError(GatewayError):
    """The key's token bucket for `limit` (`requests` or `writes`) is empty; one more token
    is there after `retry_after_seconds` (whole seconds, at least 1: RFC 9110 §10.2.3)."""

    code = "rate_limited"

    def __init__(self, limit: str, per_second: float, retry_after_seconds: int) -> None:
        super().__init__(
            f"this key may make {per_second:g} {limit} per second; retry in {retry_after_seconds} s"
        )
        self.limit = limit
        self.retry_after_seconds = retry_after_seconds


class UnavailableError(GatewayError):
    code = "unavailable"
    # What a client is told when the detail carries a dependency's own words (None: the detail
    # is already in ours).
    summary: str | None = None
