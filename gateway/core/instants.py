"""The one spelling of an instant: in receipts, responses and the texts of exclusion details."""

from __future__ import annotations

from datetime import UTC, datetime

__all__ = ["rfc3339"]


def rfc3339(at: datetime) -> str:
    """UTC with microseconds and a Z (RFC 3339): one spelling per instant, so that bodies are
    reproducible and an auditor compares instants as strings."""
    # isoformat, not strftime: glibc's %Y does not pad years before 1000 to four digits.
    return at.astimezone(UTC).replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"
