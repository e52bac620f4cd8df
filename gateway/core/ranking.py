"""Versioned ranking profiles and the score they give each live candidate.

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

The profile digest is ``sha256:`` + hex SHA-256 of the RFC 8785 form of :meth:`canonical`, where
every non-integer number is a decimal string. Tuners build a new profile with
:meth:`RankingProfile.with_weights` (a new version string is required).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from types import MappingProxyType
from typing import Literal

import rfc8785

from gateway.core.fixed import JSONValue, decimal_string, from_micros, parse_decimal, to_micros
from gateway.core.fusion import RRF_K, rrf_max, rrf_score
from gateway.core.instants import rfc3339
from gateway.core.model import MEMORY_TYPES, Candidate, MemoryType

__all__ = [
    "DEFAULT_PROFILE",
    "SIGNALS",
    "PoolStatistics",
    "Ranked",
    "RankingProfile",
    "RankingProfileError",
    "RankingWeights",
    "pool_statistics",
    "rank",
]

SIGNALS: tuple[str, ...] = (
    "similarity",
    "lexical",
    "rrf",
    "type_priority",
    "confidence",
    "recency",
    "validity",
    "brevity",
    "context",
)
# The signals a hit's relevance is made of, which the context signal passes to its neighbours.
_RELEVANCE: tuple[str, ...] = ("similarity", "lexical", "rrf")
_DAY = timedelta(days=1)


RecencyReference = Literal["now", "newest"]
RECENCY_REFERENCES: tuple[RecencyReference, ...] = ("now", "newest")


class RankingProfileError(ValueError):
    """A ranking profile is malformed; the message names the offending field."""


@dataclass(frozen=True, slots=True)
class RankingWeights:
    """One weight per signal, in :data:`SIGNALS` order. Finite; zero switches a signal off."""

    # Cross-validated on LoCoMo and LongMemEval_S (bench/RESULTS.md, `python -m bench tune`):
    # relevance enters by BM25 (lexical) and by reciprocal rank fusion, not by the raw cosine. A
    # cosine's scale is the embedder's (the hash embedder's are compressed and noisy on short
    # turns, MiniLM's are not), while ranks mean the same under every embedder; with the cosine
    # weighted, `hash` lost 8 points on LoCoMo and MiniLM gained at most one. Brevity keeps an
    # absolute 256-token half size: one relative to the candidates' median length lost a point
    # or more on LoCoMo at every weight tried, since there the evidence turns are longer than
    # the median, not shorter. Context (the neighbours in write order of the strongest hits)
    # and brevity 0.5 were chosen together (rank/2026-12-02.2): the plateau point that came
    # second on each fold, each fold's winner within a point of it.
    similarity: float = 0.0
    lexical: float = 0.30
    rrf: float = 0.25
    type_priority: float = 0.05
    confidence: float = 0.10
    recency: float = 0.05
    validity: float = 0.05
    brevity: float = 0.50
    context: float = 0.25

    def __post_init__(self) -> None:
        for name, weight in self.items():
            if not math.isfinite(weight):
                raise RankingProfileError(f"weights.{name} must be finite, got {weight!r}")

    def items(self) -> tuple[tuple[str, float], ...]:
        return tuple((name, float(getattr(self, name))) for name in SIGNALS)


def _default_type_priority() -> Mapping[MemoryType, float]:
    # Procedures and facts usually answer a task better than raw episodes or scratch state.
    return {"semantic": 0.9, "episodic": 0.7, "procedural": 1.0, "working": 0.5}


@dataclass(frozen=True, slots=True)
class RankingProfile:
    """Everything that decides a ranking, versioned and content-addressed by :attr:`digest`."""

    version: str
    weights: RankingWeights = field(default_factory=RankingWeights)
    type_priority: Mapping[MemoryType, float] = field(default_factory=_default_type_priority)
    recency_half_life_days: float = 30.0
    validity_horizon_days: float = 7.0
    rrf_k: int = RRF_K
    brevity_half_tokens: int = 256
    # When set, brevity's half size is this many times the candidates' median length instead.
    brevity_half_medians: float | None = None
    recency_reference: RecencyReference = "now"
    digest: str = field(init=False)

    def __post_init__(self) -> None:
        if not isinstance(self.version, str) or not self.version.strip():
            raise RankingProfileError("version must be a non-empty string")
        if set(self.type_priority) != set(MEMORY_TYPES):
            raise RankingProfileError(f"type_priority must give exactly the types {MEMORY_TYPES}")
        priorities: dict[MemoryType, float] = {}
        for memory_type in MEMORY_TYPES:
            value = float(self.type_priority[memory_type])
            if not 0.0 <= value <= 1.0:
                raise RankingProfileError(f"type_priority.{memory_type} must be in [0, 1]")
            priorities[memory_type] = value
        object.__setattr__(self, "type_priority", MappingProxyType(priorities))
        if not (math.isfinite(self.recency_half_life_days) and self.recency_half_life_days > 0):
            raise RankingProfileError("recency_half_life_days must be a positive number")
        if not (math.isfinite(self.validity_horizon_days) and self.validity_horizon_days >= 0):
            raise RankingProfileError("validity_horizon_days must be zero or positive")
        if isinstance(self.rrf_k, bool) or not isinstance(self.rrf_k, int) or self.rrf_k < 1:
            raise RankingProfileError("rrf_k must be a positive integer")
        half = self.brevity_half_tokens
        if isinstance(half, bool) or not isinstance(half, int) or half < 1:
            raise RankingProfileError("brevity_half_tokens must be a positive integer")
        self._check_adaptive()
        canonical = rfc8785.dumps(self.canonical())
        object.__setattr__(self, "digest", "sha256:" + hashlib.sha256(canonical).hexdigest())

    def _check_adaptive(self) -> None:
        medians = self.brevity_half_medians
        if medians is not None and not (math.isfinite(medians) and medians > 0):
            raise RankingProfileError("brevity_half_medians must be a positive number")
        if self.recency_reference not in RECENCY_REFERENCES:
            raise RankingProfileError(f"recency_reference must be one of {RECENCY_REFERENCES}")

    def __hash__(self) -> int:
        # The generated hash would hash the type_priority mapping, which is unhashable.
        return hash(self.digest)

    def canonical(self) -> dict[str, JSONValue]:
        """The float-free form the digest is computed over (and that :meth:`from_canonical` reads).

        Without brevity or context (weight 0) the form is the one profiles had before that
        signal existed, and the adaptive fields appear only when set, so the digests of older
        profiles, recorded in old receipts, stay the same.
        """
        weights: dict[str, JSONValue] = {n: decimal_string(w) for n, w in self.weights.items()}
        form: dict[str, JSONValue] = {
            "version": self.version,
            "weights": weights,
            "type_priority": {t: decimal_string(self.type_priority[t]) for t in MEMORY_TYPES},
            "recency_half_life_days": decimal_string(self.recency_half_life_days),
            "validity_horizon_days": decimal_string(self.validity_horizon_days),
            "rrf_k": self.rrf_k,
        }
        if self.weights.context == 0:
            del weights["context"]
        if self.weights.brevity == 0:
            del weights["brevity"]
        elif self.brevity_half_medians is not None:
            form["brevity_half_medians"] = decimal_string(self.brevity_half_medians)
        else:
            form["brevity_half_tokens"] = self.brevity_half_tokens
        if self.recency_reference != "now":
            form["recency_reference"] = self.recency_reference
        return form

    @classmethod
    def from_canonical(cls, data: Mapping[str, object]) -> RankingProfile:
        """Rebuild a profile from :meth:`canonical` output (e.g. a tuned profile saved as JSON)."""
        known = {
            "version",
            "weights",
            "type_priority",
            "recency_half_life_days",
            "validity_horizon_days",
            "rrf_k",
            "brevity_half_tokens",
            "brevity_half_medians",
            "recency_reference",
        }
        unknown = sorted(set(data) - known)
        if unknown:
            raise RankingProfileError(f"unknown profile fields: {unknown}")
        try:
            weights = data.get("weights", {})
            priorities = data.get("type_priority", _default_type_priority())
            if not isinstance(weights, Mapping) or not isinstance(priorities, Mapping):
                raise RankingProfileError("weights and type_priority must be objects")
            return cls(
                version=str(data["version"]),
                # A profile recorded before brevity or context existed has no such weight: it
                # had none.
                weights=RankingWeights(
                    **{
                        "brevity": 0.0,
                        "context": 0.0,
                        **{k: _number(v) for k, v in weights.items()},
                    }
                ),
                type_priority={k: _number(v) for k, v in priorities.items()},
                recency_half_life_days=_number(data.get("recency_half_life_days", "30")),
                validity_horizon_days=_number(data.get("validity_horizon_days", "7")),
                rrf_k=int(str(data.get("rrf_k", RRF_K))),
                brevity_half_tokens=int(str(data.get("brevity_half_tokens", 256))),
                brevity_half_medians=(
                    None
                    if data.get("brevity_half_medians") is None
                    else _number(data["brevity_half_medians"])
                ),
                recency_reference=_recency_reference(data.get("recency_reference", "now")),
            )
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, RankingProfileError):
                raise
            raise RankingProfileError(f"malformed ranking profile: {exc}") from exc

    def with_weights(self, version: str, **weights: float) -> RankingProfile:
        """A copy under a new version with some weights changed, e.g. ``similarity=0.5``."""
        return dataclasses.replace(
            self, version=version, weights=dataclasses.replace(self.weights, **weights)
        )


def _recency_reference(value: object) -> RecencyReference:
    for known in RECENCY_REFERENCES:
        if value == known:
            return known
    raise RankingProfileError(f"recency_reference must be one of {RECENCY_REFERENCES}")


def _number(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise RankingProfileError(f"expected a decimal string, got {value!r}")
    return parse_decimal(str(value)) if isinstance(value, str) else float(value)


# 2026-12-01.1: relevance by BM25 and RRF (no raw cosine), recency from the newest candidate.
# 2026-12-02.2: the same, and the context signal (the neighbours in write order of strong hits).
DEFAULT_PROFILE = RankingProfile(version="rank/2026-12-02.2", recency_reference="newest")


@dataclass(frozen=True, slots=True)
class PoolStatistics:
    """What the adaptive priors read from the live candidates being ranked: their median length
    in tokens (the lower median, an integer; 0 without candidates) and the newest one's creation
    instant (None without candidates)."""

    median_tokens: int
    newest_created_at: datetime | None

    def to_record(self) -> dict[str, JSONValue]:
        newest = self.newest_created_at
        return {
            "median_tokens": self.median_tokens,
            "newest_created_at": None if newest is None else rfc3339(newest),
        }


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
    candidate: Candidate, profile: RankingProfile, now: datetime, scale: _PoolScale
) -> dict[str, float]:
    distance = candidate.vector_distance
    similarity = 0.0 if distance is None else _clamp(1.0 - distance)
    if candidate.lexical_score is not None and scale.best_lexical > 0:
        lexical = _clamp(candidate.lexical_score / scale.best_lexical)
    elif candidate.lexical_rank is not None and candidate.lexical_rank >= 1:
        lexical = 1.0 / candidate.lexical_rank
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
        "rrf": _rrf_signal(candidate.vector_rank, candidate.lexical_rank, profile.rrf_k),
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


def rank(
    candidates: Sequence[Candidate],
    profile: RankingProfile,
    now: datetime,
    pool: PoolStatistics | None = None,
) -> tuple[Ranked, ...]:
    """Score live ``candidates`` at ``now``; order by score descending, then memory_id.
    ``pool`` is :func:`pool_statistics` of ``candidates`` (computed here when not given)."""
    if pool is None:
        pool = pool_statistics(candidates)
    scale = _pool_scale(candidates, profile, now, pool)
    raws = [_raw_signals(c, profile, now, scale) for c in candidates]
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
