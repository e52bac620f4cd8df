"""The second stage of assembling a bundle (:mod:`gateway.core.assembly`): the policy's
verdict applied to what was prepared, then, as the assembler says, the admitted candidates that
state an earlier value of a claim another admitted one states newer left out
(:mod:`gateway.core.current_values`), top_k (with the partners of the open conflicts in them)
and the index lines that may be shown.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType

from gateway.core.asked_values import asked
from gateway.core.current_values import READ_DEPTH, earlier_values
from gateway.core.earlier_value import EarlierValue
from gateway.core.errors import CoreError
from gateway.core.model import Candidate, Exclusion, MemoryId, OpenConflict
from gateway.core.preparation import Prepared
from gateway.core.ranking import Ranked
from gateway.core.retold import retold_last
from gateway.core.verdict import ADMIT_ALL, Verdict, VerdictError, check_verdict
from gateway.core.versions import ASSEMBLER, Assembler

__all__ = ["Selection", "SelectionError", "Shown", "select"]

# The texts the policy shows of these memories in full, by id, for those it rewrites
# (`gateway.usecases.access.policy.shown_texts`): what an assembly may read of a memory is what
# the agent would be shown of it.
Shown = Callable[[Sequence[MemoryId]], Mapping[MemoryId, tuple[str, str]]]


def _as_stored(memory_ids: Sequence[MemoryId]) -> Mapping[MemoryId, tuple[str, str]]:
    return {}


class SelectionError(CoreError, ValueError):
    """A request the assembler cannot select for (no top_k before budget-sized full tiers)."""


@dataclass(frozen=True, slots=True)
class Selection:
    """What may be shown once the verdict is applied: the index lines (live, not denied, in index
    order) and the top_k admitted candidates, with the exclusions decided so far."""

    prepared: Prepared
    verdict: Verdict
    top: tuple[Ranked, ...]
    index_members: tuple[Candidate, ...]
    excluded: Mapping[MemoryId, Exclusion]
    # The lines of an index that points where the full tier stops (under an assembler with
    # `pointing_index`): the admitted candidates in rank order, then the index members not
    # among them in index order; the layout leaves out those it shows in full.
    pointers: tuple[Candidate, ...] = ()
    # The admitted candidates left out as another admitted one states a newer value of their
    # claim (under an assembler with `current_values`), by the earlier one's id.
    earlier: tuple[EarlierValue, ...] = ()

    @property
    def headings(self) -> tuple[MemoryId, ...]:
        """The memories whose heading may be shown as an index line."""
        members = (*self.index_members, *self.pointers)
        return tuple(dict.fromkeys(m.memory_id for m in members))

    @property
    def full(self) -> tuple[MemoryId, ...]:
        """The memories that may be shown in full."""
        return tuple(r.candidate.memory_id for r in self.top)


def select(
    prepared: Prepared,
    verdict: Verdict = ADMIT_ALL,
    assembler: Assembler = ASSEMBLER,
    shown: Shown = _as_stored,
) -> Selection:
    """Apply the policy's verdict on :attr:`Prepared.judged`, then (as ``assembler`` says)
    leave out the admitted candidates stating an earlier value of a claim another admitted one
    states newer (read as the policy shows them: ``shown``), then top_k (with the newer in the
    place of an earlier one it replaces, and the partners of the conflicts in them)."""
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
    earlier = _earlier(prepared, admitted, assembler, shown)
    excluded.update((d.earlier, _left_out(d)) for d in earlier)
    left_out = {d.earlier for d in earlier}
    admitted, top, rest, why = _current_tier(prepared, admitted, left_out, earlier, assembler)
    top = _in_full(top, rest, prepared.conflicts, assembler, shown)
    chosen = {r.candidate.memory_id for r in top}
    for position, r in enumerate(admitted, start=1):
        if r.candidate.memory_id not in chosen:
            excluded[r.candidate.memory_id] = Exclusion(
                r.candidate.memory_id,
                "below_top_k",
                f"ranked {position} among admitted candidates; {why}",
            )
    # Index lines: live and not denied, in index order; a retrieved memory shows that version.
    index_members = tuple(
        prepared.retrieved.get(entry.memory_id, entry)
        for entry in (prepared.index_order if request.include_index else ())
        if entry.memory_id not in dead_ids
        and entry.memory_id not in verdict.denied
        and entry.memory_id not in left_out
    )
    pointers: tuple[Candidate, ...] = ()
    if assembler.pointing_index and request.include_index:
        ranked = {r.candidate.memory_id: r.candidate for r in admitted}
        pointers = (*ranked.values(), *(m for m in index_members if m.memory_id not in ranked))
    return Selection(
        prepared, verdict, tuple(top), index_members, MappingProxyType(excluded), pointers, earlier
    )


def _in_full(
    top: list[Ranked],
    rest: Sequence[Ranked],
    conflicts: Sequence[OpenConflict],
    assembler: Assembler,
    shown: Shown,
) -> list[Ranked]:
    """The memories in full in the order they are packed, as ``assembler`` says: the other sides
    of the open conflicts among them joining them, and a digest retelling only turns among them
    packed last (`gateway.core.retold`)."""
    if assembler.conflict_partners:
        top = top + _partners(top, rest, conflicts)
    if assembler.retold_last:
        top = retold_last(top, shown)
    return top


def _earlier(
    prepared: Prepared, admitted: Sequence[Ranked], assembler: Assembler, shown: Shown
) -> tuple[EarlierValue, ...]:
    """The admitted candidates that state an earlier value of a claim another admitted one
    states newer, under an assembler with `current_values` (none otherwise): read from the
    admitted alone, and as the policy would show them, so nothing of a memory the policy
    withholds, nor a value its redaction hides, moves or names them; the sides of an open
    conflict are never decided between."""
    if not assembler.current_values:
        return ()
    apart = [(c.sides[0].memory_id, c.sides[1].memory_id) for c in prepared.conflicts]
    unsettled = {c.claim_key for c in prepared.conflicts}
    read = [r.candidate for r in admitted[:READ_DEPTH]]
    rewritten = shown([c.memory_id for c in read])
    as_shown = [
        replace(c, heading=rewritten[c.memory_id][0], content=rewritten[c.memory_id][1])
        if c.memory_id in rewritten
        else c
        for c in read
    ]
    question = (
        asked(
            prepared.request.task,
            names=assembler.asked_names,
            statements=assembler.asked_statements,
            updates=assembler.asked_updates,
            weighed=assembler.weighing is not None,
        )
        if assembler.asked_values
        else None
    )
    return earlier_values(as_shown, apart, unsettled, question, assembler.weighing)


def _current_tier(
    prepared: Prepared,
    admitted: list[Ranked],
    left_out: set[MemoryId],
    earlier: Sequence[EarlierValue],
    assembler: Assembler,
) -> tuple[list[Ranked], list[Ranked], list[Ranked], str]:
    """The admitted candidates without those `left_out`, then `_full_tier` of them, where the
    newer value takes the place of an earlier one it replaces among the memories in full: the
    agent is shown the current value where it would have read the stale one."""
    if not left_out:
        return (admitted, *_full_tier(prepared, admitted, assembler))
    shown_before = {r.candidate.memory_id for r in _full_tier(prepared, admitted, assembler)[0]}
    kept = [r for r in admitted if r.candidate.memory_id not in left_out]
    top, rest, why = _full_tier(prepared, kept, assembler)
    wanted = {d.current for d in earlier if d.earlier in shown_before}
    top += [r for r in rest if r.candidate.memory_id in wanted]
    return kept, top, [r for r in rest if r.candidate.memory_id not in wanted], why


def _left_out(decision: EarlierValue) -> Exclusion:
    return Exclusion(
        decision.earlier,
        "superseded_in_bundle",
        f"{decision.current}, newer, states another value of what it states (rule {decision.rule})",
    )


def _full_tier(
    prepared: Prepared, admitted: list[Ranked], assembler: Assembler
) -> tuple[list[Ranked], list[Ranked], str]:
    """The admitted candidates the full tier may show (best first), the others, and why those
    are left out: the request's top_k, or with none the profile's relevance cut."""
    top_k = prepared.request.top_k
    if top_k is not None:
        return admitted[:top_k], admitted[top_k:], f"top_k is {top_k}"
    if not assembler.budget_sized:
        raise SelectionError(f"{assembler.version} needs a top_k")
    cut = prepared.profile.full_tier_cut
    top, rest = _relevant(admitted, cut)
    return top, rest, f"its relevance is below {cut} of the best admitted candidate's"


def _relevant(admitted: Sequence[Ranked], cut: float | None) -> tuple[list[Ranked], list[Ranked]]:
    """`admitted` (in rank order) split into those whose relevance is at least `cut` of the best
    one's, and the rest: where the ranking no longer finds the task in a memory, its room goes
    to index lines pointing at more of them. Without a cut, all of them."""
    if cut is None:
        return list(admitted), []
    floor = cut * max((r.relevance_micros for r in admitted), default=0)
    top = [r for r in admitted if r.relevance_micros >= floor]
    return top, [r for r in admitted if r.relevance_micros < floor]


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
