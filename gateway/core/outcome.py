"""What an assembly returns. Its receipt records it as typed, float-free members
(`gateway.usecases.disclosure.records.bundle_members`), from the exact values kept here beside
the floats a response shows: micro-units (``score_micros``, ``signal_micros``) and basis points
(``utilization_bp``), :mod:`gateway.core.fixed`.
"""

from __future__ import annotations

from dataclasses import dataclass

from gateway.core.earlier_value import EarlierValue
from gateway.core.fixed import basis_points
from gateway.core.model import Exclusion, MemoryId
from gateway.core.ranking import PoolStatistics

__all__ = ["Assembly", "IncludedMemory", "IndexReport", "ProfileRef"]


@dataclass(frozen=True, slots=True)
class IndexReport:
    """Tier 1: the ids shown (in index order), how many, the live total and the section's tokens.

    ``count_withheld``: the "more" line (when the index is cut) states no count, because the
    policy could deny memories and ``total_live`` counts them too.
    """

    entries: tuple[MemoryId, ...]
    shown: int
    total_live: int
    tokens: int
    count_withheld: bool = False


@dataclass(frozen=True, slots=True)
class IncludedMemory:
    """A tier-2 memory as delivered.

    ``content_sha256`` is the stored version's hash (what replay loads by), even when the policy
    rewrote the rendered text (``rewritten``); ``tokens`` is the exact count of its rendered block
    on its own. ``score`` and ``signals`` are the micro-unit values as floats. ``ref`` is its
    per-bundle reference in the text (``m3``).
    """

    memory_id: MemoryId
    content_sha256: str
    tokens: int
    score: float
    signals: dict[str, float]
    score_micros: int
    signal_micros: dict[str, int]
    rewritten: bool
    ref: str


@dataclass(frozen=True, slots=True)
class ProfileRef:
    version: str
    digest: str


@dataclass(frozen=True, slots=True)
class Assembly:
    """A bundle and the account of how it was made.

    ``bundle[:prefix_chars]`` is the cache-stable prefix: header, index and, when memories follow,
    the blank line before them; its tokens are a prefix of the bundle's tokens. ``included`` is in
    delivered order; ``excluded`` is sorted by memory_id and names every candidate or index entry
    passed in that is not delivered in the role it was retrieved for (see
    :func:`gateway.core.assembly.assemble`). ``refs`` maps every per-bundle reference in the
    text (``m3``: index lines shown, then memories in full) to its memory, in that order.
    """

    bundle: str
    bundle_sha256: str
    tokens_used: int
    budget_tokens: int
    utilization: float
    tokenizer: str
    index: IndexReport
    included: tuple[IncludedMemory, ...]
    excluded: tuple[Exclusion, ...]
    ranking_profile: ProfileRef
    ranking_input: PoolStatistics  # the statistics of the candidates the profile ranked by
    prefix_chars: int
    refs: tuple[tuple[str, MemoryId], ...]
    # The admitted candidates left out as another states a newer value of their claim
    # (assemblers with `current_values`), by the earlier one's id.
    earlier: tuple[EarlierValue, ...] = ()

    @property
    def prefix(self) -> str:
        return self.bundle[: self.prefix_chars]

    @property
    def utilization_bp(self) -> int:
        """Utilization in basis points, rounded down (10 000 = the whole budget)."""
        return basis_points(self.tokens_used, self.budget_tokens)
