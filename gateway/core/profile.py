"""Versioned ranking profiles: everything that decides a ranking (:mod:`gateway.core.ranking`),
content-addressed by :attr:`RankingProfile.digest`.

The digest is ``sha256:`` + hex SHA-256 of the RFC 8785 form of :meth:`RankingProfile.canonical`,
where every non-integer number is a decimal string. Receipts record that form whole, so replay
rebuilds whatever profile a receipt names with :meth:`RankingProfile.from_canonical`. Tuners build
a new profile with :meth:`RankingProfile.with_weights` (a new version string is required); the
profile new requests rank by is :data:`gateway.core.versions.DEFAULT_PROFILE`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

import rfc8785

from gateway.core.errors import CoreError
from gateway.core.fixed import JSONValue, decimal_string, parse_decimal
from gateway.core.fusion import RRF_K
from gateway.core.model import MEMORY_TYPES, MemoryType

__all__ = [
    "SIGNALS",
    "RankingProfile",
    "RankingProfileError",
    "RankingWeights",
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


RecencyReference = Literal["now", "newest"]
RECENCY_REFERENCES: tuple[RecencyReference, ...] = ("now", "newest")


class RankingProfileError(CoreError, ValueError):
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
    # The full tier of a request that names no top_k admits a candidate while its relevance
    # (its weighted similarity, lexical, rrf and context signals) is at least this share of the
    # best admitted candidate's; None: every admitted candidate, as long as they fit.
    full_tier_cut: float | None = None
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
        cut = self.full_tier_cut
        if cut is not None and not (math.isfinite(cut) and 0 <= cut <= 1):
            raise RankingProfileError("full_tier_cut must be a number in [0, 1]")

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
        if self.full_tier_cut is not None:
            form["full_tier_cut"] = decimal_string(self.full_tier_cut)
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
            "full_tier_cut",
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
                full_tier_cut=(
                    None if data.get("full_tier_cut") is None else _number(data["full_tier_cut"])
                ),
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
