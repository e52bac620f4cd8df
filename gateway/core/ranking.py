"""Versioned ranking profiles and the score they give each live candidate.

A score is the sum of weighted signals, each raw signal in [0, 1] with higher meaning better:

- ``similarity``: ``1 - cosine distance`` (pgvector ``<=>``), clamped to [0, 1]; 0 without a vector hit;
- ``lexical``: full-text score divided by the best score among the ranked candidates; a candidate
  with a lexical rank but no score gets ``1 / rank``; 0 without a lexical hit;
- ``rrf``: reciprocal rank fusion (:mod:`gateway.core.fusion`) divided by its maximum ``2/(k+1)``;
- ``type_priority``: the profile's priority for the memory type;
- ``confidence``: the memory's confidence, clamped to [0, 1];
- ``recency``: ``0.5 ** (age / half-life)``, age measured at the pinned ``now`` (never negative);
- ``validity``: 1 for memories without expiry; for expiring ones, the remaining lifetime over the
  validity horizon, capped at 1, so a memory about to expire is worth less;
- ``brevity``: ``0.5 ** (tokens / brevity_half_tokens)``: the bundle is a token budget, and of two
  memories about as relevant the shorter one leaves room for another, so it is worth more.

Each weighted signal is rounded to integer micro-units (:mod:`gateway.core.fixed`) and the score is
their exact integer sum, so the receipt's numbers add up and ordering never hinges on the last bit
of a float. Order: score descending, then memory_id ascending.

The profile digest is ``sha256:`` + hex SHA-256 of the RFC 8785 form of :meth:`canonical`, where
every non-integer number is a decimal string. Tuners build a new profile with
:meth:`RankingProfile.with_weights` (a new version string is required).
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from types import MappingProxyType

import rfc8785

from gateway.core.fixed import JSONValue, decimal_string, from_micros, parse_decimal, to_micros
from gateway.core.fusion import RRF_K, rrf_max, rrf_score
from gateway.core.model import MEMORY_TYPES, Candidate, MemoryType

__all__ = [
    "DEFAULT_PROFILE",
    "SIGNALS",
    "Ranked",
    "RankingProfile",
    "RankingProfileError",
    "RankingWeights",
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
)
_DAY = timedelta(days=1)


class RankingProfileError(ValueError):
    """A ranking profile is malformed; the message names the offending field."""


@dataclass(frozen=True, slots=True)
class RankingWeights:
    """One weight per signal, in :data:`SIGNALS` order. Finite; zero switches a signal off."""

    # Checked on LongMemEval_S (bench/RESULTS.md): once recall ranks lexically by BM25, the
    # relevance weights sit on a plateau; RRF-led variants moved the score by one question, not
    # reliably across halves. Type, confidence, recency and validity were constant on that set.
    # Brevity was tuned on half A (0.3 at a 256-token half size, the low end of a plateau from
    # 0.3 to 0.5) and confirmed on half B, with both embedders.
    similarity: float = 0.35
    lexical: float = 0.15
    rrf: float = 0.25
    type_priority: float = 0.05
    confidence: float = 0.10
    recency: float = 0.05
    validity: float = 0.05
    brevity: float = 0.30

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
        canonical = rfc8785.dumps(self.canonical())
        object.__setattr__(self, "digest", "sha256:" + hashlib.sha256(canonical).hexdigest())

    def __hash__(self) -> int:
        # The generated hash would hash the type_priority mapping, which is unhashable.
        return hash(self.digest)

    def canonical(self) -> dict[str, JSONValue]:
        """The float-free form the digest is computed over (and that :meth:`from_canonical` reads).

        Without brevity (weight 0) the form is the one profiles had before that signal existed,
        so their digests, recorded in old receipts, stay the same.
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
        if self.weights.brevity == 0:
            del weights["brevity"]
        else:
            form["brevity_half_tokens"] = self.brevity_half_tokens
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
                # A profile recorded before brevity existed has no such weight: it had none.
                weights=RankingWeights(
                    **{"brevity": 0.0, **{k: _number(v) for k, v in weights.items()}}
                ),
                type_priority={k: _number(v) for k, v in priorities.items()},
                recency_half_life_days=_number(data.get("recency_half_life_days", "30")),
                validity_horizon_days=_number(data.get("validity_horizon_days", "7")),
                rrf_k=int(str(data.get("rrf_k", RRF_K))),
                brevity_half_tokens=int(str(data.get("brevity_half_tokens", 256))),
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


def _number(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise RankingProfileError(f"expected a decimal string, got {value!r}")
    return parse_decimal(str(value)) if isinstance(value, str) else float(value)


DEFAULT_PROFILE = RankingProfile(version="rank/2026-11-30.1")


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


def _raw_signals(
    candidate: Candidate, profile: RankingProfile, now: datetime, best_lexical: float
) -> dict[str, float]:
    distance = candidate.vector_distance
    similarity = 0.0 if distance is None else _clamp(1.0 - distance)
    if candidate.lexical_score is not None and best_lexical > 0:
        lexical = _clamp(candidate.lexical_score / best_lexical)
    elif candidate.lexical_rank is not None and candidate.lexical_rank >= 1:
        lexical = 1.0 / candidate.lexical_rank
    else:
        lexical = 0.0
    fused = rrf_score(candidate.vector_rank, candidate.lexical_rank, profile.rrf_k)
    age_days = max(0.0, (now - candidate.created_at) / _DAY)
    if candidate.expires_at is None:
        validity = 1.0
    elif profile.validity_horizon_days == 0:
        validity = 1.0 if candidate.expires_at > now else 0.0
    else:
        validity = _clamp(((candidate.expires_at - now) / _DAY) / profile.validity_horizon_days)
    return {
        "similarity": similarity,
        "lexical": lexical,
        "rrf": float(fused / rrf_max(profile.rrf_k)),
        "type_priority": profile.type_priority[candidate.memory_type],
        "confidence": _clamp(candidate.confidence),
        "recency": 0.5 ** (age_days / profile.recency_half_life_days),
        "validity": validity,
        "brevity": 0.5 ** (max(0, candidate.tokens) / profile.brevity_half_tokens),
    }


def rank(
    candidates: Sequence[Candidate], profile: RankingProfile, now: datetime
) -> tuple[Ranked, ...]:
    """Score live ``candidates`` at ``now``; order by score descending, then memory_id."""
    scores = [
        c.lexical_score
        for c in candidates
        if c.lexical_score is not None and math.isfinite(c.lexical_score)
    ]
    best_lexical = max(scores, default=0.0)
    ranked: list[Ranked] = []
    for candidate in candidates:
        raw = _raw_signals(candidate, profile, now, best_lexical)
        micros = {name: to_micros(weight * raw[name]) for name, weight in profile.weights.items()}
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
