"""How far the signed checkpoints trail the receipt logs (an operator's gauge)."""

from __future__ import annotations

from gateway.store.database import Connection

__all__ = ["checkpoint_lag"]

# Receipts past their tenant's latest checkpoint, and the age of the oldest of them (0 when
# none): what an auditor fetching a proof now would wait for.
_LAG = """
SELECT count(*), COALESCE(EXTRACT(EPOCH FROM (now() - min(r.issued_at))), 0)::float8
  FROM receipts r
 WHERE r.seq > COALESCE((SELECT max(c.size) FROM checkpoints c WHERE c.tenant_id = r.tenant_id), 0)
"""


async def checkpoint_lag(conn: Connection) -> tuple[int, float]:
    """(receipts not yet in a checkpoint, seconds since the oldest of them was issued)."""
    cur = await conn.execute(_LAG)
    row = await cur.fetchone()
    assert row is not None  # an aggregate always answers one row
    behind, seconds = row
    assert isinstance(behind, int) and isinstance(seconds, float)
    return behind, max(0.0, seconds)
