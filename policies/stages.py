"""Signatures and the admit stage: what follows for each memory from the results of its rules.

`evaluate.py` drives the stages; they live apart to keep each module to one concern.
`firing.py` gives each rule's results, one per memory. What a memory's admit stage decides
(the verdict on both tracks, the decisions to record) follows from the results of the admit
rules alone (and any rule that failed), which redact rules apply from those of the redact
rules, and which caps match from those of the caps. So each is worked out once per distinct
combination of those results (`signatures`), a few dozen per evaluation whatever the number of
memories, and shared by the memories with it. The admit decisions are then built per
combination for all its memories at once; transform.py redacts and budget.py walks the caps.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import compress
from operator import attrgetter, itemgetter
from typing import Any, NamedTuple, TypeVar

from policies.conditions import Result
from policies.decisions import Decision, Outcome
from policies.explain import add_decisions
from policies.fields import ConditionError
from policies.firing import Columns, Fired
from policies.plan import Plan

__all__ = ["Admission", "Signatures", "admit_decisions", "signatures"]

_RECORDS = attrgetter("records")
_SLOT = itemgetter(0)
_TEXT_ERROR = ConditionError("E001", "memory.heading or memory.content is not a string")
_T = TypeVar("_T")


class Admission:
    """The admit stage for one combination of rule results: the verdict on both tracks and the
    admit and error decisions to record. Shared by every memory with that combination."""

    __slots__ = ("admit", "admit_if", "admitted", "admitted_if", "records", "redactable")

    def __init__(self, plan: Plan, fired: list[int], errors: dict[int, ConditionError]) -> None:
        self.admit = _admit(plan, fired, errors, enforced_only=True)
        self.admit_if = (
            self.admit if plan.uniform else _admit(plan, fired, errors, enforced_only=False)
        )
        self.admitted = self.admit[0] == "admit"
        self.admitted_if = self.admit_if[0] == "admit"
        # Redaction only concerns a track on which the memory is admitted.
        self.redactable = self.admitted or self.admitted_if
        # Per decision to record, in rule order: the rule's slot, and (outcome,
        # outcome_if_enforced, redactions, error code).
        self.records = [
            (i, (outcome, outcome_if, (), error))
            for i, outcome, outcome_if, error in _records(plan, fired, errors)
        ]


class Signatures(NamedTuple):
    """Per memory: its admission, the redact slots and the cap slots that apply to it."""

    admissions: list[Admission]
    redacts: list[tuple[int, ...]]
    caps: list[tuple[int, ...]]


def signatures(
    plan: Plan, fired: list[Fired], bad_text: list[bool] | None, count: int
) -> Signatures:
    """What follows for each memory from the results of the rules (`fired`, the result columns
    of the slots that fire or fail on some memory); `bad_text` flags memories whose heading or
    content is not a string (redaction then fails)."""
    redact_columns = [column for column in fired if plan.redacts[column.slot]]
    cap_columns = [column for column in fired if plan.caps[column.slot]]
    if not redact_columns:
        bad_text = None  # only redaction reads the texts
    # Errors of any rule weigh on the admit verdict, and so does a redact rule that cannot
    # read the text.
    admit_columns = [
        column
        for column in fired
        if plan.slots[column.slot].rule.effect in ("deny", "allow")
        or column.errors
        or (bad_text is not None and plan.redacts[column.slot])
    ]

    def admission(fired: list[int], errors: dict[int, ConditionError]) -> Admission:
        return Admission(plan, fired, errors)

    def applying(fired: list[int], errors: dict[int, ConditionError]) -> tuple[int, ...]:
        return tuple(fired)

    return Signatures(
        _per_memory(plan, admit_columns, bad_text, count, admission),
        _per_memory(plan, redact_columns, bad_text, count, applying),
        _per_memory(plan, cap_columns, None, count, applying),
    )


def _per_memory(
    plan: Plan,
    columns: list[Fired],
    bad_text: list[bool] | None,
    count: int,
    make: Callable[[list[int], dict[int, ConditionError]], _T],
) -> list[_T]:
    """`make(fired, errors)` for each memory, computed once per distinct combination of its
    results in `columns`.

    A memory's key has one item per list of results, and one per field read by slots that
    give their results per value (the value itself, which stands for all their results); zip
    builds the keys in C, and a lone list needs no tuples at all."""
    lists: list[Sequence[object]] = []
    parts: list[_Part] = []  # per item of the key, how to read it back
    by_field: dict[int, _Part] = {}  # by id of a field's list of values
    for column in columns:
        if column.values is None:
            lists.append(column.results)  # type: ignore[arg-type]
            parts.append(_Part(plan, column.slot, None))
        elif id(column.values) in by_field:
            by_field[id(column.values)].add(column.slot, column.by_value)
        else:
            lists.append(column.values)
            parts.append(
                by_field.setdefault(id(column.values), _Part(plan, column.slot, column.by_value))
            )
    if bad_text is not None:
        lists.append(bad_text)
    if not lists:
        return [make([], {})] * count
    keys: Sequence[Any] = lists[0] if len(lists) == 1 else list(zip(*lists, strict=True))
    table: dict[Any, Any] = dict.fromkeys(keys)
    made: dict[tuple[tuple[int, ...], tuple[tuple[int, ConditionError], ...]], _T] = {}
    for key in table:
        items = key if len(lists) > 1 else (key,)
        found: list[tuple[int, Result]] = []
        for part, item in zip(parts, items, strict=False):  # the bad-text flag has no part
            found += part.applying(item)
        found.sort(key=_SLOT)
        fired, errors = _fired(plan, found, bad_text is not None and items[-1] is True)
        # Keys that differ only in results that change nothing share one object.
        same = (tuple(fired), tuple(errors.items()))
        value = made.get(same)
        if value is None:
            value = made[same] = make(fired, errors)
        table[key] = value
    return list(map(table.__getitem__, keys))


class _Part:
    """One item of a memory's key: a slot's result, or a value of the field some slots read."""

    __slots__ = ("by_value", "known", "plan", "slots")

    def __init__(self, plan: Plan, slot: int, by_value: dict[object, Result] | None) -> None:
        self.plan = plan
        self.slots = [slot]
        self.by_value = [by_value]
        self.known: dict[object, list[tuple[int, Result]]] = {}

    def add(self, slot: int, by_value: dict[object, Result] | None) -> None:
        self.slots.append(slot)
        self.by_value.append(by_value)

    def applying(self, item: object) -> list[tuple[int, Result]]:
        """The (slot, result) pairs of this item that apply or fail (False ones don't count)."""
        found = self.known.get(item)
        if found is None:
            results = [
                (slot, item if by_value is None else by_value[item])
                for slot, by_value in zip(self.slots, self.by_value, strict=True)
            ]
            found = self.known[item] = [pair for pair in results if pair[1] is not False]  # type: ignore[misc]
        return found


def _fired(
    plan: Plan, results: list[tuple[int, Result]], bad_text: bool
) -> tuple[list[int], dict[int, ConditionError]]:
    """The slots that apply (in rule order) and those that failed, from (slot, result) pairs
    in rule order."""
    fired: list[int] = []
    errors: dict[int, ConditionError] = {}
    for i, result in results:
        if result is True or (result is None and plan.slots[i].unknown_applies):
            if bad_text and plan.redacts[i]:
                errors[i] = _TEXT_ERROR  # redaction needs text: the rule fails
            else:
                fired.append(i)
        elif isinstance(result, ConditionError):
            errors[i] = result
    return fired, errors


def _admit(
    plan: Plan, fired: list[int], errors: dict[int, ConditionError], *, enforced_only: bool
) -> tuple[Outcome, str | None]:
    slots = plan.slots
    if errors and plan.deny_on_error:
        for i in sorted(errors):
            if slots[i].enforced or not enforced_only:
                return "deny", slots[i].rule.id  # an error denies, whatever the combining says
    first_allow: str | None = None
    for i in fired:
        slot = slots[i]
        effect = slot.rule.effect
        if effect not in ("deny", "allow") or (enforced_only and not slot.enforced):
            continue
        if effect == "deny":
            return "deny", slot.rule.id  # the first deny decides under both combining algorithms
        if plan.first_applicable:
            return "admit", slot.rule.id
        if first_allow is None:
            first_allow = slot.rule.id
    if first_allow is not None:
        return "admit", first_allow
    return plan.default, None


def _records(
    plan: Plan, fired: list[int], errors: dict[int, ConditionError]
) -> list[tuple[int, str, str, str | None]]:
    records: list[tuple[int, str, str, str | None]] = []
    for i in sorted([*fired, *errors]):
        slot = plan.slots[i]
        effect = slot.rule.effect
        error = errors.get(i)
        if error is not None:
            no_effect = "unchanged" if effect == "redact" else "admit"
            if_enforced = "deny" if plan.deny_on_error else no_effect
            outcome = if_enforced if slot.enforced else no_effect
            records.append((i, outcome, if_enforced, error.code))
        elif effect in ("deny", "allow"):
            verdict = "admit" if slot.is_allow else "deny"
            records.append((i, verdict if slot.enforced else "admit", verdict, None))
    return records


def admit_decisions(
    plan: Plan, admissions: list[Admission], ids: list[str], columns: Columns
) -> dict[int, list[Decision]]:
    """The admit and error decisions, by memory: built per rule and verdict, for all the
    memories that share them at once (explain.py)."""
    groups: dict[Admission, list[int]] = {}
    for m in compress(range(len(admissions)), map(_RECORDS, admissions)):
        groups.setdefault(admissions[m], []).append(m)
    by_record: dict[tuple[int, tuple[str, str, tuple[()], str | None]], list[int]] = {}
    for admission, members in groups.items():
        for record in admission.records:
            known = by_record.get(record)
            if known is None:
                by_record[record] = members.copy()
            else:
                known += members
    found: dict[int, list[Decision]] = {}
    # In slot order, so that each memory's decisions come in rule order.
    for (i, verdicts), members in sorted(by_record.items(), key=_record_slot):
        add_decisions(found, plan.slots[i], members, ids, columns, verdicts)
    return found


def _record_slot(item: tuple[tuple[int, object], list[int]]) -> int:
    """The slot of a (record, memories) item: records of one slot never meet in one memory."""
    return item[0][0]
