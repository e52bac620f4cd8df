"""The clock and the id generator, injected so that the pure core never reads either itself."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from ulid import ULID

__all__ = ["Clock", "IdFactory", "new_ulid", "system_clock"]

Clock = Callable[[], datetime]
IdFactory = Callable[[datetime], str]


def system_clock() -> datetime:
    # Microsecond precision is what PostgreSQL timestamptz stores; truncating here keeps the value
    # a request computes with equal to the value it later reads back.
    return datetime.now(UTC)


def new_ulid(at: datetime) -> str:
    """A ULID whose time part is `at` (its random part is the only randomness in the shell)."""
    return str(ULID.from_datetime(at))
