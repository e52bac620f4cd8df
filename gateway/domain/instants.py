"""The instants the gateway accepts and stores: the calendar both PostgreSQL and Python can hold.

PostgreSQL's timestamptz spans 4713 BC to 294276 AD (and ±infinity); Python's `datetime`, and so
psycopg, only years 1 to 9999. An instant outside Python's span can be written but never read
back, and one such row would fail every read of its namespace. So client instants are bounded
here, and a stored row outside the span reads as the nearest bound (`gateway.store.overflow`).
The bounds keep one day from each end of Python's calendar: PostgreSQL renders an instant in the
session's time zone (offsets up to ±15:59), and that rendering must still be a valid year.
"""

from __future__ import annotations

from datetime import UTC, datetime

__all__ = ["EARLIEST", "LATEST", "outside_calendar"]

EARLIEST = datetime(1, 1, 2, tzinfo=UTC)
LATEST = datetime(9999, 12, 30, 23, 59, 59, 999999, tzinfo=UTC)


def outside_calendar(at: datetime) -> str | None:
    """Why an aware instant cannot be accepted, or None. Compared, never converted: converting
    `9999-12-31T23:59:59-00:01` to UTC overflows, and comparing aware instants does not."""
    if EARLIEST <= at <= LATEST:
        return None
    return f"must be between {EARLIEST.isoformat()} and {LATEST.isoformat()}"
