"""How far the signed checkpoints trail the receipt logs (an operator's gauge)."""

from __future__ import annotations

from gateway.store.database import Connection

__all__ = ["checkpoint_lag"]

# ledger_lag() (migration 0010) reads every tenant's log, which the tenant wall hides from the
# app role: receipts past their tenant's latest checkpoint and the age of the oldest of them.
_LAG = "SELECT behind, seconds FROM ledger_lag()"


async def checkpoint_lag(conn: Connection) -> tuple[int, float]:
    """(receipts not yet in a checkpoint, seconds since the oldest of them was issued)."""
    cur = await conn.execute(_LAG)
    row = await cur.fetchone()
    assert row is not None  # an aggregate always answers one row
    behind, seconds = row
    assert isinstance(behind, int) and isinstance(seconds, float)
    return behind, max(0.0, seconds)
