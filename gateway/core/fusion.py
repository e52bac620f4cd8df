"""Reciprocal rank fusion of the vector and lexical retrievers.

RRF scores a document by ``Σ 1 / (k + rank)`` over the lists that returned it, with 1-based ranks
and ``k = 60`` (G. V. Cormack, C. L. A. Clarke, S. Büttcher, "Reciprocal Rank Fusion outperforms
Condorcet and individual Rank Learning Methods", SIGIR 2009). The score is kept as an exact
fraction so that equal fusions compare equal on every platform; ties are broken by memory_id.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from gateway.core.model import Candidate

__all__ = ["RRF_K", "Fused", "fuse", "rrf_max", "rrf_score"]

# Cormack et al. 2009: k = 60 was fixed in a pilot study and not tuned afterwards.
RRF_K = 60


@dataclass(frozen=True, slots=True)
class Fused:
    """A candidate with its exact RRF score and its 1-based position in the fused list."""

    candidate: Candidate
    score: Fraction
    rank: int


# Ranks are small integers, so the few scores a process meets are kept (a Fraction sum costs
# microseconds, and every candidate of every bundle needs one).
@functools.lru_cache(maxsize=8192)
def rrf_score(vector_rank: int | None, lexical_rank: int | None, k: int = RRF_K) -> Fraction:
    """``1/(k + vector_rank) + 1/(k + lexical_rank)``, a missing rank contributing nothing."""
    if k < 1:
        raise ValueError(f"RRF k must be at least 1, got {k}")
    total = Fraction(0)
    for rank in (vector_rank, lexical_rank):
        if rank is None:
            continue
        if rank < 1:
            raise ValueError(f"ranks are 1-based, got {rank}")
        total += Fraction(1, k + rank)
    return total


@functools.cache
def rrf_max(k: int = RRF_K) -> Fraction:
    """The best possible fused score: first in both lists."""
    return rrf_score(1, 1, k)


def fuse(candidates: Sequence[Candidate], k: int = RRF_K) -> tuple[Fused, ...]:
    """Candidates ordered by RRF score descending, then memory_id ascending."""
    scored = [(rrf_score(c.vector_rank, c.lexical_rank, k), c) for c in candidates]
    scored.sort(key=lambda pair: (-pair[0], pair[1].memory_id))
    return tuple(
        Fused(candidate=c, score=score, rank=position)
        for position, (score, c) in enumerate(scored, start=1)
    )
