"""The real clock and id generator the shell injects (`gateway.domain.clock` names their types)."""

from __future__ import annotations

from datetime import UTC, datetime

from ulid import ULID

__all__ = ["new_ulid", "system_clock"]


def system_clock() -> datetime:
    # Microsecond precision is what PostgreSQL timestamptz stores; truncating here keeps the value
    # a request computes with equal to the value it later reads back.
    return datetime.now(UTC)


def new_ulid(at: datetime) -> str:
    """A ULID whose time part is `at` (its random part is the only randomness in the shell)."""
    return str(ULID.from_datetime(at))
