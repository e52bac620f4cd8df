"""Compile (ARCHITECTURE §12): a session's turns, or a namespace's episodic memories, become
typed facts written through the one memory writer, which applies supersession.

A compile is a `compile_jobs` row. Synchronous: the request inserts it running and runs it,
unless its scope holds more than `SYNC_EPISODES` episodes to read: then, as an asynchronous one,
it is inserted pending (the request is answered 202 with the job to poll) and any replica's
worker (`run_worker`) claims it with `FOR UPDATE SKIP LOCKED`; a running job whose heartbeat
stops (its process died) is claimed again after `reclaim_seconds` and resumes from its scope's
watermark. A job's view says how far it is: the episodes read, of those its scope held past the
watermark when it started.

Work is done in chunks, one transaction each: lock the scope's watermark (a concurrent compile of
the same scope waits here, then finds nothing new), read the next episodes, keep those the
requester may see, extract, take the namespace's write lock and drop what names a source erased
meanwhile, write (each memory labelled as its sources are), move the watermark, beat the heart
with the counts so far (`gateway.usecases.compiling.provenance`). A failing chunk leaves nothing
of itself. Fact memories are idempotent by a digest of their extractor version, sources and
text, so even a compile that re-reads episodes (a reclaimed job racing its slow original) writes
nothing twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta

from gateway.core.extraction import Episode, Fact, Known
from gateway.domain.clock import Clock, IdFactory
from gateway.domain.errors import (
    FieldError,
    GatewayError,
    InvalidRequestError,
    NotFoundError,
)
from gateway.domain.memory import MemoryDraft
from gateway.requests import CompileIn
from gateway.responses.compiling import CompileCounts, CompileJob, CompileProgress
from gateway.store import compile_inputs
from gateway.store import compiling as store
from gateway.store.database import Connection
from gateway.store.errors import DatabaseUnavailableError
from gateway.store.pool import Pool, connection
from gateway.store.transactions import transaction
from gateway.usecases.access.work import unit_of_work
from gateway.usecases.compiling import provenance
from gateway.usecases.compiling.digests import write_digest
from gateway.usecases.compiling.extractors import Extractor, ExtractorError
from gateway.usecases.memories.writer import Writer
from gateway.usecases.receiptlog.recorder import rfc3339
from gateway.usecases.sessions.seeing import seen_session

__all__ = ["CHUNK_EPISODES", "SYNC_EPISODES", "Compiler", "ExtractorError"]

_log = logging.getLogger(__name__)
CHUNK_EPISODES = 500
# The most episodes a compile reads within the request that asked for it: a few seconds at the
# measured ~1,400 a second on two cores. A larger scope would hold the request for minutes, cut
# by whichever proxy or client times out first (its answer lost, the job running on unseen);
# it is queued instead, and its progress polled.
SYNC_EPISODES = 5_000


def _job_view(job: store.JobRow) -> CompileJob:
    return CompileJob(
        job_id=job.job_id,
        status=job.status,
        namespace=job.namespace,
        session_id=job.session_id,
        extractor=job.extractor,
        counts=CompileCounts(job.created, job.superseded, job.conflicts, job.skipped),
        progress=CompileProgress(job.episodes_read, job.episodes_total),
        error=job.error,
        attempts=job.attempts,
        requested_at=rfc3339(job.requested_at),
        heartbeat_at=rfc3339(job.heartbeat_at) if job.heartbeat_at else None,
        finished_at=rfc3339(job.finished_at) if job.finished_at else None,
    )


def _scope(session_id: str | None, namespace: str) -> str:
    return f"session:{session_id}" if session_id else f"namespace:{namespace}"


async def _episodes_to_read(
    conn: Connection, tenant_id: str, session_id: str | None, namespace: str, extractor: str
) -> int:
    """How many episodes of the scope its extractor version has not read yet."""
    mark = await store.read_watermark(conn, tenant_id, _scope(session_id, namespace), extractor)
    return await compile_inputs.episodes_after(
        conn,
        tenant_id,
        session_id=session_id,
        namespace=namespace,
        after_seq=mark.through_seq,
        after_memory=mark.through_memory,
    )


def _draft(fact: Fact, namespace: str, extractor: str, labels: tuple[str, ...]) -> MemoryDraft:
    # The same sources compiled by the same extractor version give the same key: a second
    # compile (or a concurrent one) finds the first one's memory instead of writing a copy.
    # (Their labels are theirs: a version's, and its session's, never change.)
    identity = json.dumps(
        [extractor, namespace, list(fact.sources), fact.claim_key, fact.heading, fact.content],
        ensure_ascii=False,
    )
    return MemoryDraft(
        namespace=namespace,
        memory_type=fact.memory_type,
        heading=fact.heading,
        content=fact.content,
        confidence=fact.confidence,
        labels=labels,
        source_type="compile",
        source_ref=fact.sources[0] if fact.sources else None,
        claim_key=fact.claim_key,
        idempotency_key="compile:" + hashlib.sha256(identity.encode("utf-8")).hexdigest(),
        sources=fact.sources,
        extractor=extractor,
        valid_from=fact.valid_from,
        claim_value=fact.value,
        claim_previous=fact.previous,
    )


@dataclass(frozen=True, slots=True)
class Compiler:
    pool: Pool
    writer: Writer
    extractors: Mapping[str, Extractor]  # by name; the first is the default
    clock: Clock
    new_id: IdFactory
    reclaim_seconds: float

    def _extractor(self, name: str | None) -> Extractor:
        chosen = name or next(iter(self.extractors))
        extractor = self.extractors.get(chosen)
        if extractor is None:
            raise InvalidRequestError(
                f"extractor {chosen!r} is not configured",
                (FieldError("extractor", f"expected one of {', '.join(self.extractors)}"),),
                code="extractor_unknown",
            )
        return extractor

    async def start(self, authorization: str | None, ask: CompileIn) -> CompileJob:
        """Open a job for the scope and, unless asked to run it later, run it to the end."""
        if (ask.session_id is None) == (ask.namespace is None):
            raise InvalidRequestError(
                "name exactly one scope: session_id or namespace",
                tuple(
                    FieldError(name, "give exactly one of session_id and namespace")
                    for name in ("session_id", "namespace")
                ),
            )
        extractor = self._extractor(ask.extractor)
        async with unit_of_work(self.pool, authorization) as (conn, principal):
            principal.require_role("agent", "admin")
            now = self.clock()
            if ask.session_id is not None:
                # A session the policy denies the caller is 404, as an unknown one.
                session = await seen_session(
                    conn,
                    principal,
                    ask.session_id,
                    policies=self.writer.policies,
                    tokenizer=self.writer.tokenizer,
                    at=now,
                )
                namespace = session.row.namespace
            else:
                assert ask.namespace is not None  # exactly one scope, checked above
                namespace = ask.namespace
                principal.require_namespace(namespace)
            name = f"{extractor.name}/{extractor.version}"
            queued = ask.run_async or (
                await _episodes_to_read(conn, principal.tenant_id, ask.session_id, namespace, name)
                > SYNC_EPISODES
            )
            job = await store.insert_job(
                conn,
                store.JobRow(
                    tenant_id=principal.tenant_id,
                    job_id=self.new_id(now),
                    namespace=namespace,
                    session_id=ask.session_id,
                    extractor=name,
                    status="pending" if queued else "running",
                    created=0,
                    superseded=0,
                    conflicts=0,
                    skipped=0,
                    error=None,
                    attempts=0 if queued else 1,
                    agent_id=principal.agent_id,
                    requested_by_key=principal.key_id,
                    requested_role=principal.role,
                    requested_at=now,
                    heartbeat_at=None if queued else now,
                    finished_at=None,
                ),
            )
        if not queued:
            job = await self.run(job)
        return _job_view(job)

    async def status(self, authorization: str | None, job_id: str) -> CompileJob:
        """A job of the caller's tenant in a namespace its key may use; else 404."""
        async with unit_of_work(self.pool, authorization) as (conn, principal):
            job = await store.find_job(conn, principal.tenant_id, job_id)
        if job is None or not principal.may_use(job.namespace):
            raise NotFoundError(f"compile job {job_id} not found", code="job_not_found")
        return _job_view(job)

    async def run(self, job: store.JobRow) -> store.JobRow:
        """Run a claimed job to its end: completed, or failed with the error (the chunk that
        failed left nothing; chunks before it stay, and a new compile resumes after them)."""
        name, _, version = job.extractor.partition("/")
        # The version the job was opened with (`rules/<version>`), else the name's current one.
        extractor = self.extractors.get(job.extractor) or self.extractors.get(name)
        counts = store.JobCounts(job.created, job.superseded, job.conflicts, job.skipped)
        try:
            if extractor is None or extractor.version != version:
                raise ExtractorError(f"extractor {job.extractor} is not configured here")
            async with transaction(self.pool, job.tenant_id) as conn:
                total = await _episodes_to_read(
                    conn, job.tenant_id, job.session_id, job.namespace, job.extractor
                )
                await store.set_total(conn, job.tenant_id, job.job_id, counts.read + total)
            more = True
            while more:
                counts, more = await self._chunk(job, extractor, counts)
        except GatewayError as error:
            if isinstance(error, DatabaseUnavailableError):
                raise  # the job stays running; its heartbeat stops and a worker reclaims it
            _log.warning("compile job %s failed: %s", job.job_id, error.detail)
            async with transaction(self.pool, job.tenant_id) as conn:
                return await store.finish_job(
                    conn,
                    job.tenant_id,
                    job.job_id,
                    status="failed",
                    now=self.clock(),
                    counts=counts,
                    error=f"{error.code}: {error.detail}",
                )
        async with transaction(self.pool, job.tenant_id) as conn:
            return await store.finish_job(
                conn, job.tenant_id, job.job_id, status="completed", now=self.clock(), counts=counts
            )

    async def _chunk(
        self, job: store.JobRow, extractor: Extractor, counts: store.JobCounts
    ) -> tuple[store.JobCounts, bool]:
        scope = _scope(job.session_id, job.namespace)
        # The job acts for the key that asked: its tenant, role and agent, the scope's namespace.
        principal = provenance.acting_principal(job)
        writer = dataclasses.replace(self.writer, job_id=job.job_id)
        async with transaction(self.pool, job.tenant_id) as conn:
            now = self.clock()
            mark = await store.lock_watermark(conn, job.tenant_id, scope, job.extractor, now)
            if job.session_id is not None:
                rows = await compile_inputs.session_episodes(
                    conn, job.tenant_id, job.session_id, mark.through_seq, CHUNK_EPISODES
                )
            else:
                rows = await compile_inputs.namespace_episodes(
                    conn, job.tenant_id, job.namespace, mark.through_memory, CHUNK_EPISODES
                )
            if not rows:
                return counts, False
            # What the requester may not see is not read: no fact or digest line comes of it.
            readable = await provenance.readable(conn, self.writer.policies, job, rows, now)
            episodes = [
                Episode(
                    sources=tuple(i for i in (r.turn_id, r.memory_id) if i is not None),
                    role=r.role,
                    text=r.content,
                    occurred_at=r.occurred_at,
                )
                for r in readable
            ]
            known = [
                Known(c.claim_key, c.value)
                for c in await compile_inputs.live_claims(conn, job.tenant_id, job.namespace)
            ]
            facts = await extractor.extract(episodes, known)
            # From here to the commit no erasure in the namespace interleaves: nothing is
            # written from a source erased since it was read.
            erased = await provenance.erased_sources(conn, job.tenant_id, job.namespace, readable)
            kept = [f for f in facts if erased.isdisjoint(f.sources)]
            tellable = [r for r in readable if erased.isdisjoint((r.turn_id, r.memory_id))]
            labels = provenance.labels_by_source(tellable)
            drafts = [
                _draft(f, job.namespace, job.extractor, provenance.inherited(f.sources, labels))
                for f in kept
            ]
            results = await writer.write(conn, principal, drafts)
            if job.session_id is not None:
                await write_digest(conn, writer, principal, job, rows, tellable)
            # Skipped: the episodes the requester may not see, the facts of erased sources, and
            # the facts written before (idempotent) or refused.
            added = store.JobCounts(
                skipped=len(rows) - len(readable) + len(facts) - len(kept), read=len(rows)
            )
            for result in results:
                if isinstance(result, Exception) or not result.created:
                    added += store.JobCounts(skipped=1)
                else:
                    settled = result.settled
                    added += store.JobCounts(1, settled.superseded, settled.conflicts, 0)
            counts += added
            last = rows[-1]
            moved = (
                store.Watermark(last.seq, mark.through_memory)
                if job.session_id is not None
                else store.Watermark(mark.through_seq, last.memory_id or mark.through_memory)
            )
            await store.advance_watermark(conn, job.tenant_id, scope, job.extractor, moved, now)
            await store.heartbeat(conn, job.tenant_id, job.job_id, now, counts)
        return counts, len(rows) == CHUNK_EPISODES

    async def work_once(self) -> bool:
        """Claim one open job (pending, or running with a silent heartbeat) and run it; False
        when there was none."""
        now = self.clock()
        stale_before = now - timedelta(seconds=self.reclaim_seconds)
        # Which tenants have one is the only thing read across the tenant wall; the claim
        # itself runs inside the tenant's.
        async with connection(self.pool) as conn:
            tenants = await store.tenants_with_open_jobs(conn, stale_before)
        for tenant_id in tenants:
            async with transaction(self.pool, tenant_id) as conn:
                job = await store.claim_job(conn, now, stale_before)
            if job is not None:
                await self.run(job)
                return True
        return False

    async def run_worker(self, stop: asyncio.Event, idle_seconds: float = 0.5) -> None:
        """The gateway process's worker loop: asynchronous compiles of any replica's requests,
        until `stop` is set. It is stopped, not cancelled: a cancel landing inside a database
        round trip can leave the connection waiting for an answer that never comes, and a job
        is better finished than abandoned (an abandoned one is reclaimed by its heartbeat)."""
        while not stop.is_set():
            try:
                ran = await self.work_once()
            except Exception:  # noqa: BLE001  the loop outlives any one failure; logged in full
                _log.exception("compile worker failed; retrying in %.1fs", idle_seconds)
                ran = False
            if not ran:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), idle_seconds)
