"""What the operator's gauges read at scrape time: the pool and the checkpoint lag."""

from __future__ import annotations

from dataclasses import dataclass

from gateway.store.database import Pool, transaction
from gateway.store.lag import checkpoint_lag

__all__ = ["CheckpointLag", "PoolUsage", "measure_checkpoint_lag", "pool_usage"]


@dataclass(frozen=True, slots=True)
class PoolUsage:
    size: int
    in_use: int
    waiting: int


@dataclass(frozen=True, slots=True)
class CheckpointLag:
    receipts: int
    seconds: float


def pool_usage(pool: Pool) -> PoolUsage:
    stats = pool.get_stats()  # a snapshot; get_stats (unlike pop_stats) resets no counter
    size = int(stats.get("pool_size", 0))
    return PoolUsage(
        size=size,
        in_use=size - int(stats.get("pool_available", 0)),
        waiting=int(stats.get("requests_waiting", 0)),
    )


async def measure_checkpoint_lag(pool: Pool) -> CheckpointLag:
    async with transaction(pool) as conn:
        receipts, seconds = await checkpoint_lag(conn)
    return CheckpointLag(receipts, seconds)
