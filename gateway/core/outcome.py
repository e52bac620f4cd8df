"""What an assembly returns, and its float-free record for receipts.

Records follow :mod:`gateway.core.fixed`: every number is an integer and carries its unit in its
name (``score_micros``, ``signals_micros`` in millionths; ``utilization_bp`` in basis points), so
that RFC 8785 gives the same bytes on every platform. Lengths of text are UTF-8 byte counts
(``bundle_bytes``, ``prefix_bytes``). Empty ``extra`` maps of exclusions are left
out of records.
"""

from __future__ import annotations

from dataclasses import dataclass

from gateway.core.earlier_value import EarlierValue
from gateway.core.fixed import JSONValue, basis_points
from gateway.core.model import Exclusion, MemoryId
from gateway.core.ranking import PoolStatistics

__all__ = ["Assembly", "IncludedMemory", "IndexReport", "ProfileRef", "exclusion_record"]


def exclusion_record(exclusion: Exclusion) -> dict[str, JSONValue]:
    record: dict[str, JSONValue] = {
        "memory_id": exclusion.memory_id,
        "reason": exclusion.reason,
        "detail": exclusion.detail,
    }
    if exclusion.extra:
        record["extra"] = {key: exclusion.extra[key] for key in sorted(exclusion.extra)}
    return record


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

    def to_record(self) -> dict[str, JSONValue]:
        return {
            "entries": list(self.entries),
            "shown": self.shown,
            "total_live": self.total_live,
            "tokens": self.tokens,
            "count_withheld": self.count_withheld,
        }


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

    def to_record(self) -> dict[str, JSONValue]:
        return {
            "memory_id": self.memory_id,
            "content_sha256": self.content_sha256,
            "tokens": self.tokens,
            "score_micros": self.score_micros,
            "signals_micros": {k: self.signal_micros[k] for k in sorted(self.signal_micros)},
            "rewritten": self.rewritten,
            "ref": self.ref,
        }


@dataclass(frozen=True, slots=True)
class ProfileRef:
    version: str
    digest: str

    def to_record(self) -> dict[str, JSONValue]:
        return {"version": self.version, "digest": self.digest}


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

    def to_record(self) -> dict[str, JSONValue]:
        """A JSON-safe dict without floats, ready for RFC 8785 canonicalization (a decision's
        score as its decimal text; no member for decisions when there are none)."""
        record: dict[str, JSONValue] = {
            "bundle_sha256": self.bundle_sha256,
            "bundle_bytes": len(self.bundle.encode("utf-8")),
            "prefix_bytes": len(self.prefix.encode("utf-8")),
            "tokens_used": self.tokens_used,
            "budget_tokens": self.budget_tokens,
            "utilization_bp": self.utilization_bp,
            "tokenizer": self.tokenizer,
            "index": self.index.to_record(),
            "included": [item.to_record() for item in self.included],
            "excluded": [exclusion_record(e) for e in self.excluded],
            "ranking_profile": self.ranking_profile.to_record(),
            "ranking_input": self.ranking_input.to_record(),
            "refs": dict(self.refs),
        }
        if self.earlier:
            record["earlier_values"] = [
                {
                    "rule": d.rule,
                    "current": d.current,
                    "earlier": d.earlier,
                    "claim_key": d.claim_key,
                    "score": repr(d.score),
                }
                for d in self.earlier
            ]
        return record
