"""The budget stage: `cap` rules, walking memories in the given rank order.

An item stays if it fits every cap that matches it (max_items and max_tokens among the items
already kept by that cap); otherwise it is capped by the first cap it does not fit, and it
consumes nothing, so a later, smaller item may still fit ("skip", like the gateway's fill).
A memory without a valid token count never fits a cap with max_tokens (fail closed).
"""

from __future__ import annotations

from policies.fields import CHECKERS
from policies.model import Rule
from policies.stages import MemoryState, Plan

__all__ = ["run_budget"]

_CHECK_INT = CHECKERS["int"]


def run_budget(plan: Plan, states: list[MemoryState | None]) -> None:
    """Walk memories in rank order; an item stays if it fits every cap that matches it."""
    if not plan.cap:
        return
    capped: dict[tuple[int, int], list[bool]] = {}
    _cap_track(plan, states, capped, enforced_only=True)
    if not plan.uniform:
        # When every cap is enforced and both tracks admitted the same memories, the
        # if-enforced walk would repeat the actual one step for step: copy it instead.
        same = all(plan.slots[i].enforced for i in plan.cap) and all(
            state is None or state.if_enforced.outcome == state.actual.outcome for state in states
        )
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
    caps = set(plan.cap)
    track_index = 0 if enforced_only else 1
    used = {i: [0, 0] for i in plan.cap}
    for m, state in enumerate(states):
        if state is None:
            continue  # no rule fired, so no cap matches it
        track = state.actual if enforced_only else state.if_enforced
        if track.outcome != "admit":
            continue
        matching = [
            i for i in state.fired if i in caps and (plan.slots[i].enforced or not enforced_only)
        ]
        if not matching:
            continue
        tokens = _CHECK_INT(state.memory.get("tokens"))
        blocking = next(
            (i for i in matching if not _fits(plan.slots[i].rule, used[i], tokens)), None
        )
        if blocking is not None:
            track.outcome, track.rule_id = "cap", plan.slots[blocking].rule.id
            flags = capped.setdefault((m, blocking), [False, False])
            flags[track_index] = True
            if plan.uniform:
                flags[1] = True
            continue
        for i in matching:
            used[i][0] += 1
            used[i][1] += tokens if isinstance(tokens, int) else 0


def _fits(rule: Rule, used: list[int], tokens: object) -> bool:
    if rule.max_items is not None and used[0] + 1 > rule.max_items:
        return False
    if rule.max_tokens is None:
        return True
    return isinstance(tokens, int) and used[1] + tokens <= rule.max_tokens
