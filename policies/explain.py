"""Decisions for many memories at once: their evidence by column, their records built in C.

A decision's evidence depends only on the values its rule's condition reads (plan.Slot), so
among the memories one rule decides alike it is worked out once per distinct value. Where each
field the condition reads holds values of one class (or missing), the values themselves are
safe keys (1, 1.0 and True are equal but render differently, so classes must not mix) and the
whole column is looked up in C; otherwise each memory goes through `Slot.evidence`. The
records themselves are then assembled from columns without a Python-level step per decision.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from decimal import Decimal
from itertools import repeat
from operator import add

from policies.conditions import Evidence
from policies.decisions import Decision
from policies.firing import Columns
from policies.plan import Slot

__all__ = ["add_decisions", "decisions_for"]

_NONE = type(None)
# Classes whose equal values render alike: one of them per column makes the values safe keys.
_SCALARS = frozenset({str, int, float, bool, Decimal, datetime})
_SEQUENCES = frozenset({list, tuple})


def decisions_for(
    slot: Slot,
    positions: Sequence[int],
    ids: Sequence[str],
    columns: Columns,
    verdicts: tuple[str, str, tuple[()], str | None],
) -> list[Decision]:
    """The decisions of `slot` for the memories at `positions`, all with the same `verdicts`
    (outcome, outcome_if_enforced, redactions, error)."""
    heads = zip(
        map(ids.__getitem__, positions), evidence_column(slot, positions, columns), strict=True
    )
    # prefix + (memory_id, evidence) + verdicts, and the NamedTuple made without its Python
    # __new__: all in C.
    fields = map(add, map(add, repeat(slot.prefix), heads), repeat(verdicts))
    return list(map(tuple.__new__, repeat(Decision), fields))


def add_decisions(
    found: dict[int, list[Decision]],
    slot: Slot,
    positions: Sequence[int],
    ids: Sequence[str],
    columns: Columns,
    verdicts: tuple[str, str, tuple[()], str | None],
) -> None:
    """Append the decisions of `slot` for the memories at `positions` (decisions_for) to
    `found`, by memory: called in slot order, each memory's come in rule order."""
    made = decisions_for(slot, positions, ids, columns, verdicts)
    for m, decision in zip(positions, made, strict=True):
        known = found.get(m)
        if known is None:
            found[m] = [decision]
        else:
            known.append(decision)


def evidence_column(
    slot: Slot, positions: Sequence[int], columns: Columns
) -> list[tuple[Evidence, ...]]:
    """The evidence of `slot` for each memory at `positions`."""
    if slot.bound is None:
        return [()] * len(positions)
    keys = _keys(slot, positions, columns)
    try:
        # One memory per distinct key, to explain it on.
        distinct = None if keys is None else dict(zip(keys, positions, strict=True))
    except TypeError:  # an item of a list is itself unhashable (a value of the wrong kind)
        distinct = None
    if keys is None or distinct is None:
        memories = columns.memories
        return [slot.evidence(memories[m]) for m in positions]
    known = slot.by_value
    for key, m in distinct.items():
        if key not in known:
            known[key] = slot.explain(columns.memories[m])
    return list(map(known.__getitem__, keys))


def _keys(slot: Slot, positions: Sequence[int], columns: Columns) -> list[object] | None:
    """Per memory, the values the condition reads as one hashable key, or None where a field's
    values are of several classes (or of a kind that is not hashable)."""
    if not slot.keys:
        return [()] * len(positions)  # reads no memory field: one evidence for all
    parts: list[list[object]] = []
    for name in slot.keys:
        column = columns(name)
        classes = column.classes
        picked = map(column.values.__getitem__, positions)
        if classes <= _SEQUENCES and len(classes) == 1:
            parts.append(list(map(tuple, picked)))  # type: ignore[arg-type]  # lists, tuples
        elif len(classes - {_NONE}) <= 1 and classes <= _SCALARS | {_NONE}:
            parts.append(list(picked))
        else:
            return None
    if len(parts) == 1:
        return parts[0]
    return list(zip(*parts, strict=True))
