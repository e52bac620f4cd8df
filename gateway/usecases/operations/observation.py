"""What the operator's gauges read at scrape time: the pool, the checkpoint lag and the
compile jobs."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

from gateway.store.compiling import compile_backlog
from gateway.store.lag import checkpoint_lag
from gateway.store.pool import Pool
from gateway.store.transactions import transaction

__all__ = ["CompileJobs", "LedgerReadings", "PoolUsage", "observe_ledger", "pool_usage"]

JOB_STATUSES = ("pending", "running", "completed", "failed")


@dataclass(frozen=True, slots=True)
class PoolUsage:
    size: int
    in_use: int
    waiting: int


@dataclass(frozen=True, slots=True)
class CompileJobs:
    """Over every tenant: jobs by status (each status named, 0 when none), the age of the
    oldest open job (pending or running; 0 when none), running jobs whose heartbeat stopped,
    and what all jobs wrote, by outcome (only ever grows: jobs are never deleted)."""

    by_status: Mapping[str, int]
    oldest_open_seconds: float
    stalled: int
    written: Mapping[str, int]


@dataclass(frozen=True, slots=True)
class LedgerReadings:
    """What the database all workers share says now: one value, whoever is scraped."""

    checkpoint_lag_receipts: int
    checkpoint_lag_seconds: float
    compile: CompileJobs


def pool_usage(pool: Pool) -> PoolUsage:
    stats = pool.get_stats()  # a snapshot; get_stats (unlike pop_stats) resets no counter
    size = int(stats.get("pool_size", 0))
    return PoolUsage(
        size=size,
        in_use=size - int(stats.get("pool_available", 0)),
        waiting=int(stats.get("requests_waiting", 0)),
    )


async def observe_ledger(pool: Pool, now: datetime, reclaim_seconds: float) -> LedgerReadings:
    """One read-only transaction; a running job is stalled once its heartbeat is older than
    `reclaim_seconds` (the worker's own reclaim rule)."""
    async with transaction(pool) as conn:
        behind, seconds = await checkpoint_lag(conn)
        statuses = await compile_backlog(conn, now - timedelta(seconds=reclaim_seconds))
    found = {s.status: s for s in statuses}
    open_ages = [max(0.0, found[s].oldest_seconds) for s in ("pending", "running") if s in found]
    return LedgerReadings(
        checkpoint_lag_receipts=behind,
        checkpoint_lag_seconds=seconds,
        compile=CompileJobs(
            by_status={s: found[s].jobs if s in found else 0 for s in JOB_STATUSES},
            oldest_open_seconds=max(open_ages, default=0.0),
            stalled=sum(s.stalled for s in statuses),
            written={
                "created": sum(s.created for s in statuses),
                "superseded": sum(s.superseded for s in statuses),
                "conflicts": sum(s.conflicts for s in statuses),
                "skipped": sum(s.skipped for s in statuses),
            },
        ),
    )
