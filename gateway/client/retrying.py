"""When to send a call again, and after how long: pure decisions the clients act on.

A 429 or a 503 means the gateway did not do the work (a 503 is fail closed: nothing disclosed,
nothing written), so every call may be sent again after the `Retry-After` the gateway gave
(RFC 9110 §10.2.3: seconds, or an HTTP date). A request that never left (no connection) may be
sent again too. A request whose answer was lost may have been done: only a `resendable` call
(a read of the log, a write carrying its idempotency key) is sent again then.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

import httpx

__all__ = [
    "DEFAULT_RETRIES",
    "RETRIED_STATUSES",
    "Retries",
    "retry_after",
    "wait_after_error",
    "wait_after_status",
]

RETRIED_STATUSES = frozenset({429, 503})


@dataclass(frozen=True, slots=True)
class Retries:
    """`attempts` in all (1 = never retry). Without a Retry-After, waits double from
    `backoff_seconds`; a Retry-After longer than `max_wait_seconds` is not waited for: the error
    is raised at once, so no call blocks for longer than the caller agreed to."""

    attempts: int = 4
    backoff_seconds: float = 0.5
    max_wait_seconds: float = 30.0


DEFAULT_RETRIES = Retries()


def retry_after(value: str | None, now: datetime) -> float | None:
    """Seconds to wait as a Retry-After header says (None when absent or unreadable)."""
    if value is None:
        return None
    text = value.strip()
    if text.isdigit():
        return float(text)
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)  # RFC 9110 dates are GMT
    return max(0.0, (when - now).total_seconds())


def _backoff(retries: Retries, attempt: int) -> float:
    return float(min(retries.max_wait_seconds, retries.backoff_seconds * 2 ** (attempt - 1)))


def wait_after_status(
    retries: Retries, attempt: int, status: int, header: str | None, now: datetime
) -> float | None:
    """How long to wait before attempt `attempt + 1`, or None to answer with this response."""
    if status not in RETRIED_STATUSES or attempt >= retries.attempts:
        return None
    asked = retry_after(header, now)
    wait = _backoff(retries, attempt) if asked is None else asked
    return None if wait > retries.max_wait_seconds else wait


def wait_after_error(
    retries: Retries, attempt: int, error: httpx.TransportError, resendable: bool
) -> float | None:
    """How long to wait after a transport error, or None to raise it."""
    never_sent = isinstance(error, httpx.ConnectError | httpx.ConnectTimeout)
    if attempt >= retries.attempts or not (never_sent or resendable):
        return None
    return _backoff(retries, attempt)
