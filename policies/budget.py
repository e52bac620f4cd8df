"""The budget stage: `cap` rules, walking memories in the given rank order.

An item stays if it fits every cap that matches it (max_items and max_tokens among the items
already kept by that cap); otherwise it is capped by the first cap it does not fit, and it
consumes nothing, so a later, smaller item may still fit ("skip", like the gateway's fill).
A memory without a valid token count never fits a cap with max_tokens (fail closed).

Which caps match a memory on each track comes from its signature (stages.py). A cap that all
its matching items fit together (at most max_items of them, and tokens, all valid, adding up to
at most max_tokens) can never stop one, so it is left out of the walk; the walk itself visits
only memories that some remaining cap matches.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from itertools import compress, repeat
from operator import attrgetter, contains, mul

from policies.fields import CHECKERS
from policies.plan import Plan
from policies.stages import Admission

__all__ = ["run_budget"]

_CHECK_INT = CHECKERS["int"]
_ADMITTED = attrgetter("admitted")
_ADMITTED_IF = attrgetter("admitted_if")


def run_budget(
    plan: Plan,
    admissions: list[Admission],
    caps: list[tuple[int, ...]],
    memories: Sequence[Mapping[str, object]],
) -> list[tuple[int, int, bool, bool]]:
    """Walk memories in rank order on both tracks: `(memory, cap slot, actual, if-enforced)`
    in memory order, for each cap that stopped a memory, with whether it did on each track.
    `caps` are the cap slots that apply to each memory; a cap only counts on a track on which
    the memory is admitted."""
    if not plan.has_cap:
        return []
    enforced = {group: tuple(i for i in group if plan.slots[i].enforced) for group in set(caps)}
    # Per memory, the caps that count on each track, in C: a tuple times False is empty.
    on_actual = list(map(mul, map(enforced.__getitem__, caps), map(_ADMITTED, admissions)))
    on_if = list(map(mul, caps, map(_ADMITTED_IF, admissions)))
    stopped = _walk(plan, on_actual, memories)
    # When the caps match alike on both tracks (every cap enforced, both tracks admit alike),
    # the if-enforced walk would repeat the actual one step for step: walk once for both.
    if on_actual == on_if:
        return [(m, i, True, True) for m, i in stopped]
    tracks: dict[tuple[int, int], list[bool]] = {stop: [True, False] for stop in stopped}
    for stop in _walk(plan, on_if, memories):
        tracks.setdefault(stop, [False, False])[1] = True
    return [(m, i, actual, as_if) for (m, i), (actual, as_if) in sorted(tracks.items())]


def _walk(  # noqa: C901  the cap walk, the engine's inner loop, in one frame
    plan: Plan, matching: list[tuple[int, ...]], memories: Sequence[Mapping[str, object]]
) -> list[tuple[int, int]]:
    """One track's walk, `matching` being the caps that count for each memory on it: the
    `(memory, cap)` pairs where a cap stopped a memory, in memory order."""
    stopped: list[tuple[int, int]] = []
    counts = Counter(matching)
    binding = _binding(plan, matching, counts, memories)
    if not binding:
        return stopped
    walked = {group: tuple(i for i in group if i in binding) for group in counts}
    rules = [slot.rule for slot in plan.slots]
    # Room left per cap slot; a cap without max_items never runs out of items.
    items_left = [len(memories) + 1 if rule.max_items is None else rule.max_items for rule in rules]
    tokens_left = [rule.max_tokens for rule in rules]
    with_tokens = {
        caps for caps in walked.values() if any(tokens_left[i] is not None for i in caps)
    }
    # Most memories meet one cap that counts items only: its slot, for the shortest step.
    lone: dict[tuple[int, ...], int] = {
        caps: caps[0] for caps in walked.values() if len(caps) == 1 and caps not in with_tokens
    }
    per_memory = list(map(walked.__getitem__, matching))
    for m in compress(range(len(memories)), per_memory):
        caps = per_memory[m]
        i = lone.get(caps)
        if i is not None:
            if items_left[i] > 0:
                items_left[i] -= 1
            else:
                stopped.append((m, i))
            continue
        blocking = None
        if caps in with_tokens:
            tokens = _CHECK_INT(memories[m].get("tokens"))
            counted = tokens if isinstance(tokens, int) else None
            for i in caps:
                limit = tokens_left[i]
                if items_left[i] <= 0 or (
                    limit is not None and (counted is None or counted > limit)
                ):
                    blocking = i
                    break
            else:
                for i in caps:
                    items_left[i] -= 1
                    limit = tokens_left[i]
                    if limit is not None:
                        tokens_left[i] = limit - counted  # type: ignore[operator]
        else:
            for i in caps:
                if items_left[i] <= 0:
                    blocking = i
                    break
            else:
                for i in caps:
                    items_left[i] -= 1
        if blocking is not None:
            stopped.append((m, blocking))
    return stopped


def _binding(
    plan: Plan,
    matching: list[tuple[int, ...]],
    counts: Counter[tuple[int, ...]],
    memories: Sequence[Mapping[str, object]],
) -> set[int]:
    """The cap slots that may stop a memory on this track: those whose matching items do not
    all fit together. (Items only ever consume, so a cap all of them fit never runs out.)"""
    binding: set[int] = set()
    for i in {i for caps in counts for i in caps}:
        rule = plan.slots[i].rule
        matched = sum(count for caps, count in counts.items() if i in caps)
        if rule.max_items is not None and matched > rule.max_items:
            binding.add(i)
            continue
        if rule.max_tokens is not None:
            selected = compress(memories, map(contains, matching, repeat(i)))
            if not _tokens_fit(rule.max_tokens, selected):
                binding.add(i)
    return binding


def _tokens_fit(max_tokens: int, memories: Iterable[Mapping[str, object]]) -> bool:
    # Negative counts are valid integers: only the positive ones bound what any subset adds up to.
    total = 0
    for memory in memories:
        tokens = _CHECK_INT(memory.get("tokens"))
        if not isinstance(tokens, int):
            return False
        if tokens > 0:
            total += tokens
    return total <= max_tokens
