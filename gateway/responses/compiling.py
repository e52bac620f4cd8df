"""What the compile and conflict endpoints answer (ARCHITECTURE §12)."""

from __future__ import annotations

import msgspec

from gateway.responses.timestamps import Timestamp

__all__ = [
    "CompileAccepted",
    "CompileCounts",
    "CompileJob",
    "CompileProgress",
    "CompileResult",
    "ConflictEntry",
    "ConflictPage",
    "ConflictSide",
]


class CompileCounts(msgspec.Struct, frozen=True):
    """Facts written, versions superseded, conflicts opened, facts already there (skipped)."""

    created: int
    superseded: int
    conflicts: int
    skipped: int


class CompileProgress(msgspec.Struct, frozen=True):
    """How far a job is: the episodes it has read, of those its scope held past what earlier
    compiles read when it started (null while it waits for a worker; a scope that grows while
    the job runs is read to its end, past that total)."""

    episodes_read: int
    episodes_total: int | None


class CompileResult(msgspec.Struct, frozen=True):
    """POST /v1/compile (synchronous): the finished job and its counts."""

    job_id: str
    status: str
    created: int
    superseded: int
    conflicts: int
    skipped: int
    error: str | None = None


class CompileAccepted(msgspec.Struct, frozen=True):
    """POST /v1/compile with `async: true` (202): poll GET /v1/compile/{job_id}."""

    job_id: str
    status: str


class CompileJob(msgspec.Struct, frozen=True):
    """GET /v1/compile/{job_id}."""

    job_id: str
    status: str  # pending | running | completed | failed
    namespace: str
    session_id: str | None
    extractor: str
    counts: CompileCounts
    progress: CompileProgress
    error: str | None
    attempts: int
    requested_at: Timestamp
    heartbeat_at: Timestamp | None
    finished_at: Timestamp | None


class ConflictSide(msgspec.Struct, frozen=True):
    """One of two facts in conflict: what it says, who wrote it, since when it holds."""

    memory_id: str
    heading: str
    agent_id: str | None
    written_by_key: str | None
    valid_from: Timestamp | None
    created_at: Timestamp


class ConflictEntry(msgspec.Struct, frozen=True):
    conflict_id: str
    namespace: str
    claim_key: str
    sides: list[ConflictSide]
    opened_at: Timestamp
    job_id: str | None
    resolved_at: Timestamp | None
    winner: str | None
    reason: str | None
    decision_id: str | None


class ConflictPage(msgspec.Struct, frozen=True):
    """GET /v1/conflicts: conflicts in id order; `next_after` pages on (None: the last page)."""

    conflicts: list[ConflictEntry]
    next_after: str | None
