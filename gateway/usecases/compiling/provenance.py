"""What a compile derives obeys what it derives from (ARCHITECTURE §12, §14).

1. **It reads only what its requester may see.** A job acts for the key that asked, as that key
   (its role is recorded with the job). Each chunk's episodes are judged as anything outside a
   disclosure is (`gateway.usecases.access.sight`): by the admission rules of the policy in
   force at the chunk, each episode by the view a disclosure judges it by (a memory by
   `memory_view`; a session's turn by `turn_view`, its remembered copy by `memory_view`, both
   with the session's fields). An episode the policy denies the requester is not read: the
   extractor never sees it, no fact and no digest line comes from it, and it counts as skipped.
   Auditors and admins see whatever their namespaces hold, so an admin's compile reads it all.
2. **Policy follows provenance.** Every memory a compile writes carries the union of its
   sources' labels (a turn's are its session's, a memory's its own; a digest's also those of
   the digest it folds), set in the draft the chunk's transaction writes, so every rule keyed on
   labels judges it as it judges its sources, whoever compiled it.
3. **Nothing derived outlives an erasure of its source.** After extracting, the chunk takes its
   namespace's write lock and asks which of its sources were erased meanwhile; a fact naming one
   is not written, a digest does not retell one (`gateway.store.erasures` says why the lock
   makes this complete).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime

from gateway.domain.principal import Principal
from gateway.store import compile_inputs
from gateway.store import memories as memory_store
from gateway.store import sessions as session_store
from gateway.store import supersessions as supersession_store
from gateway.store import turns as turn_store
from gateway.store.compile_inputs import EpisodeRow
from gateway.store.compiling import JobRow
from gateway.store.database import Connection
from gateway.usecases.access.policy import PolicyRegistry, memory_view
from gateway.usecases.access.sight import sight_of
from gateway.usecases.sessions.conversation import session_scope, turn_view

__all__ = ["acting_principal", "erased_sources", "inherited", "labels_by_source", "readable"]


def acting_principal(job: JobRow) -> Principal:
    """Whom a job acts for: the key that asked, with its role, in the scope's namespace only."""
    return Principal(
        job.tenant_id,
        job.requested_by_key,
        job.requested_role,
        job.agent_id,
        (job.namespace,),
        None,
    )


async def readable(
    conn: Connection,
    policies: PolicyRegistry,
    job: JobRow,
    rows: Sequence[EpisodeRow],
    at: datetime,
) -> list[EpisodeRow]:
    """Of a chunk's episodes, those the job's requester may see under the policy in force at
    `at` (all of them when the policy can deny it nothing)."""
    principal = acting_principal(job)
    sight = await sight_of(conn, policies, principal, at, namespaces=(job.namespace,))
    if not sight.judges or not rows:
        return list(rows)
    denied = sight.denied(await _views(conn, job, rows))
    return [r for r in rows if r.turn_id not in denied and r.memory_id not in denied]


async def _views(
    conn: Connection, job: JobRow, rows: Sequence[EpisodeRow]
) -> list[dict[str, object]]:
    """Each episode as a disclosure judges it: memories by their versions, a session's turns as
    its context shows them, and in a session every item with the session's fields."""
    tenant_id = job.tenant_id
    ids = [r.memory_id for r in rows if r.memory_id is not None]
    versions = await memory_store.fetch_versions(conn, tenant_id, ids) if ids else []
    if job.session_id is None:
        return [memory_view(v) for v in versions]
    session = await session_store.find_session(conn, tenant_id, job.session_id)
    assert session is not None  # a session's turns are read only once it was found
    # The chunk's turns are consecutive (seq after the watermark, in order).
    turns = await turn_store.turns_page(conn, tenant_id, job.session_id, rows[0].seq - 1, len(rows))
    scope = session_scope(session)
    return [{**memory_view(v), **scope} for v in versions] + [turn_view(t, session) for t in turns]


def labels_by_source(rows: Iterable[EpisodeRow]) -> dict[str, tuple[str, ...]]:
    """Each source id an episode gives a fact (its turn, its memory), with the episode's labels."""
    return {
        source: tuple(row.labels)
        for row in rows
        for source in (row.turn_id, row.memory_id)
        if source is not None
    }


def inherited(sources: Iterable[str], labels: Mapping[str, Sequence[str]]) -> tuple[str, ...]:
    """The labels a memory derived from `sources` carries: the union of theirs, sorted."""
    return tuple(sorted({label for source in sources for label in labels[source]}))


async def erased_sources(
    conn: Connection, tenant_id: str, namespace: str, rows: Sequence[EpisodeRow]
) -> set[str]:
    """Take the namespace's write lock, held to the commit (the lock an erasure takes first),
    then answer which of the episodes' ids were erased by then: nothing may be derived from
    them. An erasure that comes later waits for this chunk's commit and finds what it wrote."""
    await supersession_store.lock_namespaces(conn, tenant_id, [namespace])
    ids = [i for r in rows for i in (r.turn_id, r.memory_id) if i is not None]
    return await compile_inputs.erased_among(conn, tenant_id, ids)
