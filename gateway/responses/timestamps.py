"""The one spelling of an instant in a response body."""

from __future__ import annotations

from typing import Annotated

from msgspec import Meta

__all__ = ["Timestamp"]

# A string, not a `datetime`: msgspec drops zero microseconds and would spell some instants
# differently from the receipts that record them.
Timestamp = Annotated[
    str,
    Meta(
        description="RFC 3339, UTC, microseconds, Z (2026-11-30T09:15:00.000000Z)",
        pattern=r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$",
    ),
]
