"""The second stage of assembling a bundle (:mod:`gateway.core.assembly`): the policy's
verdict applied to what was prepared, then top_k (with the partners of the open conflicts in
them, as the assembler says) and the index lines that may be shown.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from gateway.core.model import Candidate, Exclusion, MemoryId, OpenConflict
from gateway.core.preparation import Prepared
from gateway.core.ranking import Ranked
from gateway.core.verdict import ADMIT_ALL, Verdict, VerdictError, check_verdict
from gateway.core.versions import ASSEMBLER, Assembler

__all__ = ["Selection", "select"]


@dataclass(frozen=True, slots=True)
class Selection:
    """What may be shown once the verdict is applied: the index lines (live, not denied, in index
    order) and the top_k admitted candidates, with the exclusions decided so far."""

    prepared: Prepared
    verdict: Verdict
    top: tuple[Ranked, ...]
    index_members: tuple[Candidate, ...]
    excluded: Mapping[MemoryId, Exclusion]

    @property
    def headings(self) -> tuple[MemoryId, ...]:
        """The memories whose heading may be shown as an index line."""
        return tuple(m.memory_id for m in self.index_members)

    @property
    def full(self) -> tuple[MemoryId, ...]:
        """The memories that may be shown in full."""
        return tuple(r.candidate.memory_id for r in self.top)


def select(
    prepared: Prepared, verdict: Verdict = ADMIT_ALL, assembler: Assembler = ASSEMBLER
) -> Selection:
    """Apply the policy's verdict on :attr:`Prepared.judged`, then top_k (with the partners of
    the conflicts in them, as ``assembler`` says)."""
    request = prepared.request
    check_verdict(verdict, {c.memory_id for c in prepared.judged})
    _check_unranked(prepared, verdict)
    excluded: dict[MemoryId, Exclusion] = {e.memory_id: e for e in prepared.dead}
    dead_ids = set(excluded)
    for candidate in prepared.judged:
        denial = verdict.denied.get(candidate.memory_id)
        if denial is not None:
            excluded[candidate.memory_id] = denial
    admitted: list[Ranked] = []
    for r in prepared.ranked:
        memory_id = r.candidate.memory_id
        cap = verdict.capped.get(memory_id)
        if memory_id in excluded:
            continue
        if cap is not None:
            excluded[memory_id] = cap
        else:
            admitted.append(r)
    top = admitted[: request.top_k]
    if assembler.conflict_partners:
        top += _partners(top, admitted[request.top_k :], prepared.conflicts)
    chosen = {r.candidate.memory_id for r in top}
    for position, r in enumerate(admitted, start=1):
        if position <= request.top_k or r.candidate.memory_id in chosen:
            continue
        excluded[r.candidate.memory_id] = Exclusion(
            r.candidate.memory_id,
            "below_top_k",
            f"ranked {position} among admitted candidates; top_k is {request.top_k}",
        )
    # Index lines: live and not denied, in index order; a retrieved memory shows that version.
    index_members = tuple(
        prepared.retrieved.get(entry.memory_id, entry)
        for entry in (prepared.index_order if request.include_index else ())
        if entry.memory_id not in dead_ids and entry.memory_id not in verdict.denied
    )
    return Selection(prepared, verdict, tuple(top), index_members, MappingProxyType(excluded))


def _check_unranked(prepared: Prepared, verdict: Verdict) -> None:
    """A memory left out of the ranking as the policy denies it must be denied by the verdict
    applied (fail closed: it would otherwise leave the bundle unaccounted for)."""
    for candidate in prepared.unranked:
        if candidate.memory_id not in verdict.denied:
            raise VerdictError("an unranked memory is not denied", candidate.memory_id)


def _partners(
    top: Sequence[Ranked], rest: Sequence[Ranked], conflicts: Sequence[OpenConflict]
) -> list[Ranked]:
    """The admitted candidates below the top_k that are the other side of an open conflict
    with a side in ``top``, in rank order. One side is all that can be shown of a conflict whose
    other side the recall did not reach or the policy did not admit."""
    in_top = {r.candidate.memory_id for r in top}
    wanted = {
        other.memory_id
        for conflict in conflicts
        if any(s.memory_id in in_top for s in conflict.sides)
        for other in conflict.sides
        if other.memory_id not in in_top
    }
    return [r for r in rest if r.candidate.memory_id in wanted]
