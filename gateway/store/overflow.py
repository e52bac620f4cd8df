"""Reading stored instants that Python cannot hold (ARCHITECTURE §14, inputs that cannot poison).

A timestamptz past year 9999, before year 1, or ±infinity (written by an older version, a repair
by hand, or another client of the database) makes psycopg raise on load, and so would fail every
query that returns the row, forever. Such a value reads as the nearest bound of
`gateway.domain.instants`: far in the future stays in the future (live), far in the past stays past
(expired), and the answer is the same on every read, so bundles stay deterministic.
"""

from __future__ import annotations

from datetime import datetime

import psycopg
from psycopg.abc import AdaptContext, Buffer
from psycopg.adapt import Loader
from psycopg.pq import Format

from gateway.domain.instants import EARLIEST, LATEST

__all__ = ["bound_instants"]

_TIMESTAMPTZ = psycopg.postgres.types["timestamptz"].oid


class _BoundedText(Loader):
    format = Format.TEXT

    def __init__(self, oid: int, context: AdaptContext | None = None) -> None:
        super().__init__(oid, context)
        # The driver's own loader (the C one when installed) does the work; this one only
        # catches what it cannot represent.
        base = psycopg.adapters.get_loader(oid, self.format)
        assert base is not None
        self._load = base(oid, context).load

    def load(self, data: Buffer) -> datetime:
        try:
            return self._load(data)  # type: ignore[no-any-return]
        except psycopg.DataError:
            return EARLIEST if _is_early(bytes(data)) else LATEST


class _BoundedBinary(_BoundedText):
    format = Format.BINARY


def _is_early(data: bytes) -> bool:
    # Text: "-infinity" or a year "… BC". Binary: microseconds since 2000, negative when early.
    if data.startswith(b"-") or data.endswith(b"BC"):
        return True
    return len(data) == 8 and data[0] & 0x80 != 0


def bound_instants(conn: psycopg.Connection[object] | psycopg.AsyncConnection[object]) -> None:
    """Register the bounded loaders on one connection (the pool's `configure`, CLI connections)."""
    conn.adapters.register_loader(_TIMESTAMPTZ, _BoundedText)
    conn.adapters.register_loader(_TIMESTAMPTZ, _BoundedBinary)
