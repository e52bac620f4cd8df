"""Context assembly and progressive disclosure (search, timeline): the store finds candidates,
the pure core decides."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from gateway.core.fill import index_reach
from gateway.core.instants import rfc3339
from gateway.core.liveness import split_live
from gateway.core.model import (
    Candidate,
    ConflictSide,
    ContextRequest,
    Exclusion,
    MemoryId,
    MemoryType,
    OpenConflict,
)
from gateway.core.preparation import Found
from gateway.core.profile import RankingProfile
from gateway.core.ranking import Ranked, rank
from gateway.core.versions import DEFAULT_PROFILE
from gateway.domain.errors import FieldError, InvalidRequestError
from gateway.domain.memory import MemoryVersion
from gateway.domain.principal import ALL_NAMESPACES, Principal
from gateway.embedding import Embedder, HashEmbedder
from gateway.store import keys as key_store
from gateway.store import memories as memory_store
from gateway.store import retrieval
from gateway.store import supersessions as supersession_store
from gateway.store.database import Connection
from gateway.store.scope import Scope
from gateway.usecases.access.policy import reads_content, searchable
from policies import Bundle

__all__ = [
    "SearchOutcome",
    "TimelineOutcome",
    "check_as_of",
    "find",
    "readable_versions",
    "recall_depth",
    "recall_limit",
    "search",
    "timeline",
    "without_index_content",
]


async def check_as_of(conn: Connection, tenant_id: str, as_of: datetime, now: datetime) -> None:
    """`as_of` must name an instant the tenant's history covers: not ahead of now, not before the
    tenant existed (there is no state to show)."""
    if as_of > now:
        raise InvalidRequestError(
            "as_of is in the future", (FieldError("as_of", "must not be in the future"),)
        )
    created = await key_store.tenant_created_at(conn, tenant_id)
    if created is not None and as_of < created:
        raise InvalidRequestError(
            "as_of is before the tenant existed",
            (FieldError("as_of", f"must not be before {rfc3339(created)}"),),
        )


def _scope(
    principal: Principal,
    namespaces: tuple[str, ...],
    memory_types: tuple[MemoryType, ...] | None,
    now: datetime,
    historical: bool = False,
) -> Scope:
    selected = None if ALL_NAMESPACES in namespaces else namespaces
    return Scope(principal.tenant_id, selected, memory_types, now, historical)


def recall_limit(top_k: int) -> int:
    """How many memories each retriever returns: room for dead near matches and for the ranking
    to reorder beyond the fused top_k."""
    return max(4 * top_k, 40)


# The deepest recall a request asks for: that of the largest top_k the API takes.
DEEPEST_RECALL = recall_limit(50)


def recall_depth(request: ContextRequest) -> int:
    """How many memories each retriever returns for `request`: `recall_limit` of its top_k;
    with none, as deep as the largest top_k's recall, since a full tier sized by the budget
    shows as many memories as fit."""
    return DEEPEST_RECALL if request.top_k is None else recall_limit(request.top_k)


async def _embed(embedder: Embedder, text: str) -> list[float]:
    if isinstance(embedder, HashEmbedder):  # microseconds: not worth a thread hop
        return embedder.embed([text])[0]
    return (await asyncio.to_thread(embedder.embed, [text]))[0]


async def find(
    conn: Connection,
    embedder: Embedder,
    principal: Principal,
    request: ContextRequest,
    at: datetime,
    *,
    policy: Bundle,
    historical: bool = False,
    depth: int | None = None,
) -> Found:
    """The store's candidates, index entries and live count at `at` (`historical`: a past
    instant), recalled by the task as `policy` lets it search (`searchable`: no value it hides
    steers the recall). When no rule of `policy` reads content, index entries come without it
    (`without_index_content`). `depth`: how many memories each retriever returns, by default
    `recall_depth(request)`."""
    scope = _scope(principal, request.namespaces, request.memory_types, at, historical)
    task = searchable(policy, request.task)
    vector = await _embed(embedder, task)
    candidates, index, total_live = await retrieval.context_candidates(
        conn,
        scope,
        task=task,
        query_vector=vector,
        embedding_model=embedder.model,
        limit=recall_depth(request) if depth is None else depth,
        index_reach=index_reach(request),
        index_content=reads_content(policy),
    )
    conflicts = await open_conflicts(conn, principal.tenant_id, candidates, at)
    return Found(tuple(candidates), tuple(index), total_live, conflicts)


async def open_conflicts(
    conn: Connection, tenant_id: str, candidates: Sequence[Candidate], at: datetime
) -> tuple[OpenConflict, ...]:
    """The conflicts open at `at` that a candidate is a side of. Only a fact with a claim key
    can be one, so a request that retrieved none costs no round trip."""
    keyed = sorted(c.memory_id for c in candidates if c.claim_key is not None)
    if not keyed:
        return ()
    rows = await supersession_store.open_conflicts_among(conn, tenant_id, keyed, at)
    return tuple(
        OpenConflict(
            r.claim_key,
            (
                ConflictSide(MemoryId(r.first_id), r.first_agent_id, r.first_key_id, r.first_at),
                ConflictSide(
                    MemoryId(r.second_id), r.second_agent_id, r.second_key_id, r.second_at
                ),
            ),
        )
        for r in rows
    )


def without_index_content(found: Found) -> Found:
    """`found` with the index entries' contents empty, as `find` fetches them for a policy that
    reads no content (replay loads whole versions, and must evaluate the same). Only index lines
    come from index entries, and they show headings; a memory that is also a retrieval candidate
    is rendered from its candidate."""
    index = tuple(dataclasses.replace(entry, content="") for entry in found.index_entries)
    return dataclasses.replace(found, index_entries=index)


@dataclass(frozen=True, slots=True)
class SearchOutcome:
    hits: list[Ranked]  # best first
    excluded: list[Exclusion]  # every other candidate found, with its reason
    recalled: tuple[Candidate, ...] = ()  # every candidate found, live and dead, as found


async def search(
    conn: Connection,
    embedder: Embedder,
    principal: Principal,
    *,
    query: str,
    namespaces: tuple[str, ...],
    memory_types: tuple[MemoryType, ...] | None,
    limit: int | None,
    now: datetime,
    policy: Bundle,
    profile: RankingProfile = DEFAULT_PROFILE,
    recall_for: int = 8,
) -> SearchOutcome:
    """Stage 1: the best live matches, ranked as context assembly ranks them, recalled by the
    query as `policy` lets it search (`searchable`); every other candidate found is accounted
    for (dead near matches, ranks beyond the limit). With no `limit`, every live match is
    returned in rank order (recall sized for `recall_for`)."""
    scope = _scope(principal, namespaces, memory_types, now)
    query = searchable(policy, query)
    vector = await _embed(embedder, query)
    found = await retrieval.recall(
        conn,
        scope,
        task=query,
        query_vector=vector,
        embedding_model=embedder.model,
        limit=recall_limit(limit or recall_for),
    )
    split = split_live(found, now)
    ranked = list(rank(split.live, profile, now))
    if limit is None:  # the caller cuts (after policy), and accounts for what it cuts
        dead = sorted(split.dead, key=lambda e: e.memory_id)
        return SearchOutcome(ranked, dead, tuple(found))
    below = [
        Exclusion(r.candidate.memory_id, "below_top_k", f"ranked {position} of {len(ranked)}")
        for position, r in enumerate(ranked[limit:], start=limit + 1)
    ]
    excluded = sorted([*split.dead, *below], key=lambda e: e.memory_id)
    return SearchOutcome(ranked[:limit], excluded)


@dataclass(frozen=True, slots=True)
class TimelineOutcome:
    entries: list[MemoryVersion]  # newest first
    missing: list[str]


async def readable_versions(
    conn: Connection, principal: Principal, ids: Sequence[str]
) -> dict[str, MemoryVersion]:
    """The versions among `ids` the key may read. Another tenant's, another namespace's and
    absent ids all just go missing, so a key learns nothing about what it may not read."""
    return {
        v.memory_id: v
        for v in await memory_store.fetch_versions(conn, principal.tenant_id, list(set(ids)))
        if principal.may_use(v.namespace)
    }


async def timeline(conn: Connection, principal: Principal, ids: Sequence[str]) -> TimelineOutcome:
    """Stage 2: when each version was written, what it replaced, what replaced it, when it was
    retired. Metadata only: no heading or content, so dead versions may appear here."""
    unique = list(dict.fromkeys(ids))
    readable = await readable_versions(conn, principal, unique)
    found = sorted(readable.values(), key=lambda v: (v.created_at, v.memory_id), reverse=True)
    return TimelineOutcome(found, [i for i in unique if i not in readable])
