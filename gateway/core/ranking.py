"""The score a ranking profile (:mod:`gateway.core.profile`) gives each live candidate.

A score is the sum of weighted signals, each raw signal in [0, 1] with higher meaning better:

- ``similarity``: ``1 - cosine distance`` (pgvector ``<=>``), clamped to [0, 1]; 0 without a vector hit;
- ``lexical``: full-text score divided by the best score among the ranked candidates; a candidate
  with a lexical rank but no score gets ``1 / rank``; 0 without a lexical hit;
- ``rrf``: reciprocal rank fusion (:mod:`gateway.core.fusion`) divided by its maximum ``2/(k+1)``;
- ``type_priority``: the profile's priority for the memory type;
- ``confidence``: the memory's confidence, clamped to [0, 1];
- ``recency``: ``0.5 ** (age / half-life)``, age measured at the pinned ``now`` (never negative),
  or, when the profile's ``recency_reference`` is ``newest``, from the newest live candidate: then
  recency separates memories only where their dates differ, and a store whose memories are all
  old ranks as one whose memories are all new;
- ``validity``: 1 for memories without expiry; for expiring ones, the remaining lifetime over the
  validity horizon, capped at 1, so a memory about to expire is worth less;
- ``brevity``: ``0.5 ** (tokens / half)``: the bundle is a token budget, and of two memories about
  as relevant the shorter one leaves room for another, so it is worth more. ``half`` is the
  profile's ``brevity_half_tokens``, or, when ``brevity_half_medians`` is set, that many times the
  median length of the live candidates (so brevity scales with the store's own memories);
- ``context``: how relevant the best hit is that this memory was written next to: the maximum,
  over the live candidates whose :attr:`~gateway.core.model.Candidate.neighbours` name it, of
  that hit's relevance (its weighted similarity, lexical and rrf signals) over the best
  relevance among the candidates; 0 when no hit names it. Memories written one after the other
  in a namespace are the turns of one conversation, and the turn that answers a question often
  shares no word with it while the turn before it does (bench/RESULTS.md, issue 15).

The statistics the adaptive priors read (:class:`PoolStatistics`) are a pure function of the live
candidates ranked; receipts record them beside the candidates, so an exact replay can show that it
ranked from the same ones.

Each weighted signal is rounded to integer micro-units (:mod:`gateway.core.fixed`) and the score is
their exact integer sum, so the receipt's numbers add up and ordering never hinges on the last bit
of a float. Order: score descending, then memory_id ascending.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from gateway.core.fixed import from_micros, to_micros
from gateway.core.fusion import rrf_max, rrf_score
from gateway.core.model import Candidate
from gateway.core.profile import RankingProfile

__all__ = [
    "RELEVANCE_SIGNALS",
    "PoolStatistics",
    "Ranked",
    "Ranks",
    "pool_statistics",
    "rank",
    "ranks_among",
]

# The signals a hit's relevance is made of, which the context signal passes to its neighbours.
_RELEVANCE: tuple[str, ...] = ("similarity", "lexical", "rrf")
# And what a full tier's relevance cut reads: those and the context passed on.
RELEVANCE_SIGNALS: tuple[str, ...] = (*_RELEVANCE, "context")
_DAY = timedelta(days=1)


@dataclass(frozen=True, slots=True)
class PoolStatistics:
    """What the adaptive priors read from the live candidates being ranked: their median length
    in tokens (the lower median, an integer; 0 without candidates) and the newest one's creation
    instant (None without candidates)."""

    median_tokens: int
    newest_created_at: datetime | None


def pool_statistics(candidates: Sequence[Candidate]) -> PoolStatistics:
    """The statistics of ``candidates`` (the live ones a ranking is over)."""
    if not candidates:
        return PoolStatistics(median_tokens=0, newest_created_at=None)
    lengths = sorted(max(0, c.tokens) for c in candidates)
    return PoolStatistics(
        median_tokens=lengths[(len(lengths) - 1) // 2],
        newest_created_at=max(c.created_at for c in candidates),
    )


@dataclass(frozen=True, slots=True)
class Ranked:
    """A live candidate with its score and weighted signals (floats, and exact micro-units)."""

    candidate: Candidate
    score: float
    signals: dict[str, float]
    score_micros: int
    signal_micros: dict[str, int]

    @property
    def relevance_micros(self) -> int:
        """How much of the score says the memory is about the task: its weighted similarity,
        lexical, rrf and context signals (the rest are priors that hold whatever the task)."""
        return sum(self.signal_micros.get(name, 0) for name in RELEVANCE_SIGNALS)


def _clamp(value: float) -> float:
    if math.isnan(value):
        return 0.0
    return min(1.0, max(0.0, value))


def _brevity_half(profile: RankingProfile, pool: PoolStatistics) -> float:
    if profile.brevity_half_medians is None:
        return float(profile.brevity_half_tokens)
    # A pool of empty memories has no length to scale by: one token keeps the half size positive.
    return profile.brevity_half_medians * max(1, pool.median_tokens)


@dataclass(frozen=True, slots=True)
class _PoolScale:
    """What every candidate's signals are scaled by, computed once per ranking."""

    best_lexical: float
    recency_reference: datetime
    brevity_half: float


@functools.lru_cache(maxsize=4096)
def _rrf_signal(vector_rank: int | None, lexical_rank: int | None, k: int) -> float:
    """The rrf signal, exact (in fractions) then rounded once; a pool repeats few rank pairs."""
    return float(rrf_score(vector_rank, lexical_rank, k) / rrf_max(k))


def _pool_scale(
    candidates: Sequence[Candidate], profile: RankingProfile, now: datetime, pool: PoolStatistics
) -> _PoolScale:
    scores = [
        c.lexical_score
        for c in candidates
        if c.lexical_score is not None and math.isfinite(c.lexical_score)
    ]
    reference = now
    if profile.recency_reference == "newest" and pool.newest_created_at is not None:
        reference = min(now, pool.newest_created_at)
    return _PoolScale(
        best_lexical=max(scores, default=0.0),
        recency_reference=reference,
        brevity_half=_brevity_half(profile, pool),
    )


def _raw_signals(
    candidate: Candidate,
    profile: RankingProfile,
    now: datetime,
    scale: _PoolScale,
    ranks: Ranks | None,
) -> dict[str, float]:
    if ranks is None:
        vector_rank, lexical_rank = candidate.vector_rank, candidate.lexical_rank
    else:
        vector_rank, lexical_rank = ranks[candidate.memory_id]
    distance = candidate.vector_distance
    similarity = 0.0 if distance is None else _clamp(1.0 - distance)
    if candidate.lexical_score is not None and scale.best_lexical > 0:
        lexical = _clamp(candidate.lexical_score / scale.best_lexical)
    elif lexical_rank is not None and lexical_rank >= 1:
        lexical = 1.0 / lexical_rank
    else:
        lexical = 0.0
    age_days = max(0.0, (scale.recency_reference - candidate.created_at) / _DAY)
    if candidate.expires_at is None:
        validity = 1.0
    elif profile.validity_horizon_days == 0:
        validity = 1.0 if candidate.expires_at > now else 0.0
    else:
        validity = _clamp(((candidate.expires_at - now) / _DAY) / profile.validity_horizon_days)
    return {
        "similarity": similarity,
        "lexical": lexical,
        "rrf": _rrf_signal(vector_rank, lexical_rank, profile.rrf_k),
        "type_priority": profile.type_priority[candidate.memory_type],
        "confidence": _clamp(candidate.confidence),
        "recency": 0.5 ** (age_days / profile.recency_half_life_days),
        "validity": validity,
        "context": 0.0,  # relative to the other candidates: filled in by `rank`
        "brevity": 0.5 ** (max(0, candidate.tokens) / scale.brevity_half),
    }


def _context(
    candidates: Sequence[Candidate], raws: Sequence[dict[str, float]], profile: RankingProfile
) -> list[float]:
    """Each candidate's context signal: the best relevance, over the pool's best, of a hit that
    names it among its neighbours (see the module doc)."""
    weights = dict(profile.weights.items())
    relevance = [sum(weights[name] * raw[name] for name in _RELEVANCE) for raw in raws]
    best = max(relevance, default=0.0)
    if best <= 0:
        return [0.0] * len(candidates)
    passed: dict[str, float] = {}
    for hit, value in zip(candidates, relevance, strict=True):
        for neighbour in hit.neighbours:
            if neighbour != hit.memory_id:
                passed[neighbour] = max(passed.get(neighbour, 0.0), value / best)
    return [_clamp(passed.get(c.memory_id, 0.0)) for c in candidates]


# Each retriever's 1-based rank of a candidate (vector, lexical), by memory id.
Ranks = Mapping[str, tuple[int | None, int | None]]


def ranks_among(candidates: Sequence[Candidate]) -> dict[str, tuple[int | None, int | None]]:
    """Each retriever's ranks of ``candidates`` (each once) renumbered among them alone, 1-based
    in the order they had: ranked by these, a memory's ``rrf`` signal counts only the memories
    above it that are among ``candidates`` (those a ranking may read). Among every candidate a
    retriever returned, the ranks it gave."""

    def positions(rank_of: Callable[[Candidate], int | None]) -> dict[str, int]:
        ranks = sorted((r, c.memory_id) for c in candidates if (r := rank_of(c)) is not None)
        return {memory_id: n for n, (_, memory_id) in enumerate(ranks, start=1)}

    vector = positions(lambda c: c.vector_rank)
    lexical = positions(lambda c: c.lexical_rank)
    return {c.memory_id: (vector.get(c.memory_id), lexical.get(c.memory_id)) for c in candidates}


def rank(
    candidates: Sequence[Candidate],
    profile: RankingProfile,
    now: datetime,
    pool: PoolStatistics | None = None,
    ranks: Ranks | None = None,
) -> tuple[Ranked, ...]:
    """Score live ``candidates`` at ``now``; order by score descending, then memory_id.
    ``pool`` is :func:`pool_statistics` of ``candidates`` (computed here when not given);
    ``ranks``, each retriever's ranks to read in place of the candidates' own (every
    candidate's, :func:`ranks_among`)."""
    if pool is None:
        pool = pool_statistics(candidates)
    scale = _pool_scale(candidates, profile, now, pool)
    raws = [_raw_signals(c, profile, now, scale, ranks) for c in candidates]
    if profile.weights.context:
        for raw, context in zip(raws, _context(candidates, raws, profile), strict=True):
            raw["context"] = context
    weights = profile.weights.items()
    ranked: list[Ranked] = []
    for candidate, raw in zip(candidates, raws, strict=True):
        # A switched-off signal is worth exactly 0 (every raw signal is finite).
        micros = {name: to_micros(weight * raw[name]) if weight else 0 for name, weight in weights}
        total = sum(micros.values())
        ranked.append(
            Ranked(
                candidate=candidate,
                score=from_micros(total),
                signals={name: from_micros(m) for name, m in micros.items()},
                score_micros=total,
                signal_micros=micros,
            )
        )
    ranked.sort(key=lambda r: (-r.score_micros, r.candidate.memory_id))
    return tuple(ranked)
