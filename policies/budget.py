"""The budget stage: `cap` rules, walking memories in the given rank order.

An item stays if it fits every cap that matches it (max_items and max_tokens among the items
already kept by that cap); otherwise it is capped by the first cap it does not fit, and it
consumes nothing, so a later, smaller item may still fit ("skip", like the gateway's fill).
A memory without a valid token count never fits a cap with max_tokens (fail closed).
"""

from __future__ import annotations

from policies.fields import CHECKERS
from policies.stages import MemoryState, Plan

__all__ = ["run_budget"]

_CHECK_INT = CHECKERS["int"]


def run_budget(plan: Plan, states: list[MemoryState | None]) -> None:
    """Walk memories in rank order; an item stays if it fits every cap that matches it."""
    if not plan.cap:
        return
    capped: dict[tuple[int, int], list[bool]] = {}
    # When every cap is enforced and both tracks admitted the same memories, the if-enforced
    # walk would repeat the actual one step for step: copy it instead. (Asked before the
    # actual walk, which marks capped memories on the actual track only.)
    same = all(plan.slots[i].enforced for i in plan.cap) and all(
        state is None or state.if_enforced.outcome == state.actual.outcome for state in states
    )
    _cap_track(plan, states, capped, enforced_only=True)
    if not plan.uniform:
        if same:
            for (m, i), flags in capped.items():
                state = states[m]
                assert state is not None
                state.if_enforced.outcome, state.if_enforced.rule_id = "cap", plan.slots[i].rule.id
                flags[1] = True
        else:
            _cap_track(plan, states, capped, enforced_only=False)
    for (m, i), (in_actual, in_if) in sorted(capped.items()):
        state = states[m]
        assert state is not None
        outcome, outcome_if = ("cap" if in_actual else "admit"), ("cap" if in_if else "admit")
        state.decisions.append(plan.decision(i, state, outcome, outcome_if))


def _cap_track(
    plan: Plan,
    states: list[MemoryState | None],
    capped: dict[tuple[int, int], list[bool]],
    *,
    enforced_only: bool,
) -> None:
    track_index = 0 if enforced_only else 1
    limits = {i: (plan.slots[i].rule.max_items, plan.slots[i].rule.max_tokens) for i in plan.cap}
    used = {i: [0, 0] for i in plan.cap}
    for m, state in enumerate(states):
        if state is None:
            continue  # no rule fired, so no cap matches it
        matching = state.enforced_caps if enforced_only else state.caps
        if not matching:
            continue
        track = state.actual if enforced_only else state.if_enforced
        if track.outcome != "admit":
            continue
        tokens = _CHECK_INT(state.memory.get("tokens"))
        counted = tokens if isinstance(tokens, int) else None
        blocking = None
        for i in matching:
            max_items, max_tokens = limits[i]
            items_used, tokens_used = used[i]
            if (max_items is not None and items_used + 1 > max_items) or (
                max_tokens is not None and (counted is None or tokens_used + counted > max_tokens)
            ):
                blocking = i
                break
        if blocking is not None:
            track.outcome, track.rule_id = "cap", plan.slots[blocking].rule.id
            flags = capped.setdefault((m, blocking), [False, False])
            flags[track_index] = True
            if plan.uniform:
                flags[1] = True
            continue
        for i in matching:
            counts = used[i]
            counts[0] += 1
            counts[1] += counted or 0
