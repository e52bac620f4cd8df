"""The first stage of assembling a bundle (:mod:`gateway.core.assembly`): the inputs checked,
the live split from the dead at the pinned ``now``, and the live retrieval candidates ranked.

What the ranking reads (:func:`rank_admitted`): under an assembler that ranks what the policy
admits (:attr:`~gateway.core.versions.Assembler.rank_admitted`), the candidates the policy denies
(``hidden``) are left out of it altogether: no signal of a memory the policy shows depends on
one it denies (the best lexical score, the context a hit passes to its neighbours, the pool's
statistics, each retriever's ranks, renumbered among the others). They are still judged, after
the ranked ones (:attr:`Prepared.unranked`), so the receipt records their denial.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from types import MappingProxyType

from gateway.core.errors import CoreError
from gateway.core.liveness import split_live
from gateway.core.model import Candidate, ContextRequest, Exclusion, MemoryId, OpenConflict
from gateway.core.profile import RankingProfile
from gateway.core.ranking import PoolStatistics, Ranked, pool_statistics, rank, ranks_among

__all__ = ["AssemblyInputError", "Found", "Prepared", "prepare", "rank_admitted"]


class AssemblyInputError(CoreError, ValueError):
    """The inputs break the core's preconditions (naive datetimes, impossible budgets)."""


@dataclass(frozen=True, slots=True)
class Found:
    """What the store found for a request: retrieval candidates (live and dead near matches),
    index entries (confidence desc, then memory_id, cut to :func:`gateway.core.fill.index_reach`)
    and the count of live memories in scope."""

    candidates: tuple[Candidate, ...]
    index_entries: tuple[Candidate, ...]
    total_live: int
    conflicts: tuple[OpenConflict, ...] = ()  # open, with a side among the candidates


def _aware(value: datetime | None) -> bool:
    return value is None or (value.tzinfo is not None and value.utcoffset() is not None)


def _check_inputs(
    request: ContextRequest, members: Iterable[Candidate], total_live: int, now: datetime
) -> None:
    if not _aware(now):
        raise AssemblyInputError("now must be timezone-aware")
    if request.budget_tokens < 1:
        raise AssemblyInputError(f"budget_tokens must be at least 1, got {request.budget_tokens}")
    if request.top_k is not None and request.top_k < 0:
        raise AssemblyInputError(f"top_k must not be negative, got {request.top_k}")
    if request.index_budget_tokens is not None and request.index_budget_tokens < 0:
        raise AssemblyInputError("index_budget_tokens must not be negative")
    if total_live < 0:
        raise AssemblyInputError(f"total_live must not be negative, got {total_live}")
    for c in members:
        if not all(map(_aware, (c.created_at, c.expires_at, c.deleted_at, c.erased_at))):
            raise AssemblyInputError(f"memory {c.memory_id} has a naive datetime")


def _unique(candidates: Sequence[Candidate], seen: set[MemoryId]) -> list[Candidate]:
    """First occurrence of each memory_id not already in ``seen`` (which is updated)."""
    kept: list[Candidate] = []
    for candidate in candidates:
        if candidate.memory_id not in seen:
            seen.add(candidate.memory_id)
            kept.append(candidate)
    return kept


@dataclass(frozen=True, slots=True)
class Prepared:
    """Liveness and ranking done at the pinned ``now``: what the policy judges, in its order."""

    request: ContextRequest
    profile: RankingProfile
    total_live: int
    ranked: tuple[Ranked, ...]  # the live retrieval candidates, best first
    pool: PoolStatistics  # what the profile's adaptive priors read from them
    index_order: tuple[Candidate, ...]  # every index entry once, in index order
    index_only: tuple[Candidate, ...]  # the live index entries that were not retrieved
    retrieved: Mapping[MemoryId, Candidate]
    dead: tuple[Exclusion, ...]  # retrieved or index-only, dead at ``now``
    conflicts: tuple[OpenConflict, ...] = ()
    # The live retrieval candidates left out of the ranking as the policy denies them (only
    # under an assembler that ranks what the policy admits), in retrieval order.
    unranked: tuple[Candidate, ...] = ()

    @property
    def judged(self) -> tuple[Candidate, ...]:
        """Every live memory that could reach the bundle, as the policy judges them: the ranked
        tier-2 candidates in rank order, the unranked ones, then the index-only entries in index
        order (each once; the order matters to caps, which a denied memory never counts in)."""
        ranked = tuple(r.candidate for r in self.ranked) + self.unranked
        return ranked + self.index_only if self.request.include_index else ranked


def rank_admitted(
    retrieved: Sequence[Candidate],
    profile: RankingProfile,
    now: datetime,
    hidden: Collection[str] = frozenset(),
) -> tuple[tuple[Ranked, ...], PoolStatistics]:
    """The live candidates of ``retrieved`` (each once) that are not ``hidden``, ranked over
    themselves alone, with the statistics the ranking read: each retriever's ranks renumbered
    among the candidates left (:func:`~gateway.core.ranking.ranks_among`), the candidates
    themselves as retrieved. Without a hidden one among them: :func:`rank` of the live ones,
    unchanged."""
    kept = [c for c in retrieved if c.memory_id not in hidden]
    live = split_live(kept, now).live
    pool = pool_statistics(live)
    if len(kept) == len(retrieved):  # none of them hidden: the ranks as retrieved
        return rank(live, profile, now, pool), pool
    return rank(live, profile, now, pool, ranks_among(kept)), pool


def prepare(
    request: ContextRequest,
    found: Found,
    *,
    profile: RankingProfile,
    now: datetime,
    hidden: Collection[str] = frozenset(),
) -> Prepared:
    """Check the inputs, split the live from the dead and rank the live candidates; those in
    ``hidden`` (the ones the policy denies, under an assembler that ranks what it admits) are
    left out of the ranking (:func:`rank_admitted`) and judged after it."""
    seen: set[MemoryId] = set()
    retrieved = _unique(found.candidates, seen)
    index_only = _unique(found.index_entries, seen)
    _check_inputs(request, [*retrieved, *index_only], found.total_live, now)
    live_retrieved = split_live(retrieved, now)
    live_index_only = split_live(index_only, now)
    if any(c.memory_id in hidden for c in retrieved):
        ranked, pool = rank_admitted(retrieved, profile, now, hidden)
    else:
        pool = pool_statistics(live_retrieved.live)
        ranked = rank(live_retrieved.live, profile, now, pool)
    return Prepared(
        request=request,
        profile=profile,
        total_live=found.total_live,
        ranked=tuple(ranked),
        pool=pool,
        index_order=tuple(_unique(found.index_entries, set())),
        index_only=live_index_only.live,
        retrieved=MappingProxyType({c.memory_id: c for c in retrieved}),
        dead=(*live_retrieved.dead, *live_index_only.dead),
        conflicts=found.conflicts,
        unranked=tuple(c for c in live_retrieved.live if c.memory_id in hidden),
    )
