"""Compile jobs and the watermarks they advance (ARCHITECTURE §12): the job queue any replica
claims from, and how far each scope was compiled. What a compile reads is
`gateway.store.compile_inputs`'s."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from psycopg.rows import class_row

from gateway.domain.principal import Role
from gateway.store.database import Connection

__all__ = [
    "JobCounts",
    "JobRow",
    "JobsInStatus",
    "Watermark",
    "advance_watermark",
    "claim_job",
    "compile_backlog",
    "find_job",
    "finish_job",
    "heartbeat",
    "insert_job",
    "lock_watermark",
    "read_watermark",
    "set_total",
    "tenants_with_open_jobs",
]


@dataclass(frozen=True, slots=True)
class JobCounts:
    created: int = 0
    superseded: int = 0
    conflicts: int = 0
    skipped: int = 0
    read: int = 0  # the episodes read so far

    def __add__(self, other: JobCounts) -> JobCounts:
        return JobCounts(
            self.created + other.created,
            self.superseded + other.superseded,
            self.conflicts + other.conflicts,
            self.skipped + other.skipped,
            self.read + other.read,
        )


@dataclass(frozen=True, slots=True)
class JobRow:
    tenant_id: str
    job_id: str
    namespace: str
    session_id: str | None
    extractor: str
    status: str
    created: int
    superseded: int
    conflicts: int
    skipped: int
    error: str | None
    attempts: int
    agent_id: str | None
    requested_by_key: str
    requested_role: Role  # the role of the key that asked: the job acts as that key
    requested_at: datetime
    heartbeat_at: datetime | None
    finished_at: datetime | None
    episodes_read: int = 0
    episodes_total: int | None = None  # past the watermark when it started; None before

    @property
    def counts(self) -> JobCounts:
        return JobCounts(
            self.created, self.superseded, self.conflicts, self.skipped, self.episodes_read
        )


_INSERT_JOB = """
INSERT INTO compile_jobs (tenant_id, job_id, namespace, session_id, extractor, status, attempts,
                          agent_id, requested_by_key, requested_role, requested_at, heartbeat_at)
VALUES (%(tenant_id)s, %(job_id)s, %(namespace)s, %(session_id)s, %(extractor)s, %(status)s,
        %(attempts)s, %(agent_id)s, %(requested_by_key)s, %(requested_role)s, %(requested_at)s,
        %(heartbeat_at)s)
RETURNING tenant_id, job_id, namespace, session_id, extractor, status, created, superseded,
          conflicts, skipped, error, attempts, agent_id, requested_by_key, requested_role,
          requested_at, heartbeat_at, finished_at, episodes_read, episodes_total
"""


async def insert_job(conn: Connection, job: JobRow) -> JobRow:
    params = {
        "tenant_id": job.tenant_id,
        "job_id": job.job_id,
        "namespace": job.namespace,
        "session_id": job.session_id,
        "extractor": job.extractor,
        "status": job.status,
        "attempts": job.attempts,
        "agent_id": job.agent_id,
        "requested_by_key": job.requested_by_key,
        "requested_role": job.requested_role,
        "requested_at": job.requested_at,
        "heartbeat_at": job.heartbeat_at,
    }
    async with conn.cursor(row_factory=class_row(JobRow)) as cur:
        await cur.execute(_INSERT_JOB, params)
        row = await cur.fetchone()
    assert row is not None
    return row


_FIND_JOB = """
SELECT tenant_id, job_id, namespace, session_id, extractor, status, created, superseded,
       conflicts, skipped, error, attempts, agent_id, requested_by_key, requested_role,
       requested_at, heartbeat_at, finished_at, episodes_read, episodes_total
  FROM compile_jobs
 WHERE tenant_id = %(tenant_id)s AND job_id = %(job_id)s
"""


async def find_job(conn: Connection, tenant_id: str, job_id: str) -> JobRow | None:
    async with conn.cursor(row_factory=class_row(JobRow)) as cur:
        await cur.execute(_FIND_JOB, {"tenant_id": tenant_id, "job_id": job_id})
        return await cur.fetchone()


# Any replica may run any job: the oldest pending one, or a running one whose worker stopped
# beating (crashed, killed). SKIP LOCKED lets claimers pass each other instead of queueing.
_CLAIM = """
UPDATE compile_jobs j
   SET status = 'running', heartbeat_at = %(now)s, attempts = j.attempts + 1
  FROM (SELECT tenant_id, job_id FROM compile_jobs
         WHERE status = 'pending' OR (status = 'running' AND heartbeat_at < %(stale_before)s)
         ORDER BY requested_at, job_id
         LIMIT 1
           FOR UPDATE SKIP LOCKED) claimed
 WHERE j.tenant_id = claimed.tenant_id AND j.job_id = claimed.job_id
RETURNING j.tenant_id, j.job_id, j.namespace, j.session_id, j.extractor, j.status, j.created,
          j.superseded, j.conflicts, j.skipped, j.error, j.attempts, j.agent_id,
          j.requested_by_key, j.requested_role, j.requested_at, j.heartbeat_at, j.finished_at,
          j.episodes_read, j.episodes_total
"""


async def tenants_with_open_jobs(conn: Connection, stale_before: datetime) -> list[str]:
    """The tenants with a job to claim now, through compile_tenants() (migration 0013): the
    one path of the compile worker past the tenant wall."""
    cur = await conn.execute("SELECT tenant_id FROM compile_tenants(%s)", (stale_before,))
    return [str(row[0]) for row in await cur.fetchall()]


@dataclass(frozen=True, slots=True)
class JobsInStatus:
    """The jobs of every tenant in one status: how many, the age of the oldest, the running
    ones whose heartbeat is silent, and what they wrote."""

    status: str
    jobs: int
    oldest_seconds: float
    stalled: int
    created: int
    superseded: int
    conflicts: int
    skipped: int


async def compile_backlog(conn: Connection, stale_before: datetime) -> list[JobsInStatus]:
    """Through compile_backlog() (migration 0018): an operator's view past the tenant wall."""
    async with conn.cursor(row_factory=class_row(JobsInStatus)) as cur:
        await cur.execute("SELECT * FROM compile_backlog(%s)", (stale_before,))
        return await cur.fetchall()


async def claim_job(conn: Connection, now: datetime, stale_before: datetime) -> JobRow | None:
    async with conn.cursor(row_factory=class_row(JobRow)) as cur:
        await cur.execute(_CLAIM, {"now": now, "stale_before": stale_before})
        return await cur.fetchone()


_HEARTBEAT = """
UPDATE compile_jobs
   SET heartbeat_at = %(now)s, created = %(created)s, superseded = %(superseded)s,
       conflicts = %(conflicts)s, skipped = %(skipped)s, episodes_read = %(read)s
 WHERE tenant_id = %(tenant_id)s AND job_id = %(job_id)s AND status = 'running'
"""


async def heartbeat(
    conn: Connection, tenant_id: str, job_id: str, now: datetime, counts: JobCounts
) -> None:
    await conn.execute(
        _HEARTBEAT,
        {
            "tenant_id": tenant_id,
            "job_id": job_id,
            "now": now,
            "created": counts.created,
            "superseded": counts.superseded,
            "conflicts": counts.conflicts,
            "skipped": counts.skipped,
            "read": counts.read,
        },
    )


_FINISH = """
UPDATE compile_jobs
   SET status = %(status)s, finished_at = %(now)s, heartbeat_at = %(now)s, error = %(error)s,
       created = %(created)s, superseded = %(superseded)s, conflicts = %(conflicts)s,
       skipped = %(skipped)s, episodes_read = %(read)s
 WHERE tenant_id = %(tenant_id)s AND job_id = %(job_id)s
RETURNING tenant_id, job_id, namespace, session_id, extractor, status, created, superseded,
          conflicts, skipped, error, attempts, agent_id, requested_by_key, requested_role,
          requested_at, heartbeat_at, finished_at, episodes_read, episodes_total
"""


async def finish_job(
    conn: Connection,
    tenant_id: str,
    job_id: str,
    *,
    status: str,
    now: datetime,
    counts: JobCounts,
    error: str | None = None,
) -> JobRow:
    params = {
        "tenant_id": tenant_id,
        "job_id": job_id,
        "status": status,
        "now": now,
        "error": error,
        "created": counts.created,
        "superseded": counts.superseded,
        "conflicts": counts.conflicts,
        "skipped": counts.skipped,
        "read": counts.read,
    }
    async with conn.cursor(row_factory=class_row(JobRow)) as cur:
        await cur.execute(_FINISH, params)
        row = await cur.fetchone()
    assert row is not None
    return row


@dataclass(frozen=True, slots=True)
class Watermark:
    through_seq: int
    through_memory: str


_TOTAL = """
UPDATE compile_jobs SET episodes_total = %(total)s
 WHERE tenant_id = %(tenant_id)s AND job_id = %(job_id)s
"""


async def set_total(conn: Connection, tenant_id: str, job_id: str, total: int) -> None:
    """The episodes the job's scope holds past its watermark as the job starts running."""
    await conn.execute(_TOTAL, {"tenant_id": tenant_id, "job_id": job_id, "total": total})


_READ_WATERMARK = """
SELECT through_seq, through_memory FROM compile_watermarks
 WHERE tenant_id = %(tenant_id)s AND scope = %(scope)s AND extractor = %(extractor)s
"""


async def read_watermark(conn: Connection, tenant_id: str, scope: str, extractor: str) -> Watermark:
    """How far `scope` was compiled by `extractor` (from the start when never), unlocked."""
    params = {"tenant_id": tenant_id, "scope": scope, "extractor": extractor}
    async with conn.cursor(row_factory=class_row(Watermark)) as cur:
        await cur.execute(_READ_WATERMARK, params)
        row = await cur.fetchone()
    return row if row is not None else Watermark(0, "")


_ENSURE_WATERMARK = """
INSERT INTO compile_watermarks (tenant_id, scope, extractor, updated_at)
VALUES (%(tenant_id)s, %(scope)s, %(extractor)s, %(now)s)
ON CONFLICT (tenant_id, scope, extractor) DO NOTHING
"""
_LOCK_WATERMARK = """
SELECT through_seq, through_memory FROM compile_watermarks
 WHERE tenant_id = %(tenant_id)s AND scope = %(scope)s AND extractor = %(extractor)s
   FOR UPDATE
"""


async def lock_watermark(
    conn: Connection, tenant_id: str, scope: str, extractor: str, now: datetime
) -> Watermark:
    """How far `scope` was compiled by `extractor`, locked until the transaction ends: a second
    compile of the scope waits here, then starts where this one stopped."""
    params = {"tenant_id": tenant_id, "scope": scope, "extractor": extractor, "now": now}
    await conn.execute(_ENSURE_WATERMARK, params)
    async with conn.cursor(row_factory=class_row(Watermark)) as cur:
        await cur.execute(_LOCK_WATERMARK, params)
        row = await cur.fetchone()
    assert row is not None
    return row


_ADVANCE = """
UPDATE compile_watermarks
   SET through_seq = %(through_seq)s, through_memory = %(through_memory)s, updated_at = %(now)s
 WHERE tenant_id = %(tenant_id)s AND scope = %(scope)s AND extractor = %(extractor)s
"""


async def advance_watermark(
    conn: Connection, tenant_id: str, scope: str, extractor: str, mark: Watermark, now: datetime
) -> None:
    await conn.execute(
        _ADVANCE,
        {
            "tenant_id": tenant_id,
            "scope": scope,
            "extractor": extractor,
            "through_seq": mark.through_seq,
            "through_memory": mark.through_memory,
            "now": now,
        },
    )
