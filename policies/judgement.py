"""The memory stages of one evaluation, in two steps: judge every candidate (admit and budget),
then redact only the texts the caller discloses.

Redaction weighs on neither admission nor caps (a cap reads the stored token count), so it can
wait until the caller knows what it will show. A context assembly shows a few memories in full
and the headings of its index, out of hundreds of candidates: redacting all of them would cost
more than the rest of the evaluation and record decisions about texts nobody was shown.
`evaluate` discloses every text, for the callers that deliver them all (search, timeline,
fetch, policy tests).

Works on columns (one list per outcome field, one item per memory) filled from the signatures,
then patched where a cap or redaction changed a memory's fate: most memories cost no
Python-level step of their own.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from itertools import chain, compress, repeat
from typing import NamedTuple

from policies.budget import run_budget
from policies.decisions import Decision, Evaluation, MemoryOutcome, Outcome, Redaction, Refusal
from policies.firing import fire_rules, values_of
from policies.model import Mode, Rule
from policies.plan import Plan
from policies.stages import Admission, admit_decisions, signatures
from policies.transform import Redacted, redact_all

__all__ = ["Judgement", "Verdicts"]

# A cap decision's (outcome, outcome_if_enforced, redactions, error), by whether the cap
# stopped the memory on each track (actual, if enforced).
_CAP_VERDICTS: dict[tuple[bool, bool], tuple[str, str, tuple[()], None]] = {
    (actual, as_if): ("cap" if actual else "admit", "cap" if as_if else "admit", (), None)
    for actual in (True, False)
    for as_if in (True, False)
}


class Judgement:
    """Every candidate judged; redaction waits for `disclose`, and `evaluation` gives the result.

    Positions are indexes into the memories as given. The redaction decisions and redactions of
    a memory speak of the texts disclosed; a text never disclosed is empty in its outcome (fail
    closed: the engine hands out no text it was not asked to redact).
    """

    def __init__(
        self,
        mode: Mode,
        plan: Plan | None,
        memories: Sequence[Mapping[str, object]],
        request_stage: tuple[Refusal | None, Rule | None, list[Decision]],
    ) -> None:
        """Judge `memories` under `plan` (the bundle's `mode`), after the request stage gave
        (its refusal, the rule that would refuse if enforced, its decisions); `plan` is None
        when the request was refused, and every memory is then denied."""
        self.refused, self._would_refuse, self._request_decisions = request_stage
        self._mode: Mode = mode
        self._plan = plan
        self._memories = memories
        count = len(memories)
        dicts = set(map(type, memories)) <= {dict}  # read column-wise in C (firing.values_of)
        self._ids = _memory_ids(values_of(memories, "memory_id", dicts=dicts))
        self._headings, bad_headings = _texts(values_of(memories, "heading", dicts=dicts))
        self._contents, bad_contents = _texts(values_of(memories, "content", dicts=dicts))
        self._full: dict[int, bool] = {}  # the disclosed positions: whether with their content
        self._redacted: dict[int, Redacted] = {}
        self._admit_decisions: dict[int, list[Decision]] = {}
        self._cap_decisions: dict[int, list[Decision]] = {}
        if plan is None:
            assert self.refused is not None
            rule_id = self.refused.rule_id
            self._verdicts = Verdicts(
                ["deny"] * count, ["deny"] * count, [rule_id] * count, [rule_id] * count
            )
            return
        self._signatures = sigs = signatures(
            plan,
            fire_rules(plan, memories, dicts=dicts),
            _either(bad_headings, bad_contents),
            count,
        )
        self._verdicts = _admitted(sigs.admissions, self._would_refuse)
        self._admit_decisions = admit_decisions(plan, sigs.admissions, self._ids, memories)
        self._cap_decisions = self._budget()

    def _budget(self) -> dict[int, list[Decision]]:
        """Walk the caps; patch the verdicts they change, and return their decisions by memory."""
        plan, sigs = self._plan, self._signatures
        assert plan is not None
        ids, memories, slots = self._ids, self._memories, plan.slots
        outcome, outcome_if, rule_id, rule_id_if = self._verdicts
        refused_if = self._would_refuse is not None
        found: dict[int, list[Decision]] = {}
        for m, i, in_actual, in_if in run_budget(plan, sigs.admissions, sigs.caps, memories):
            slot = slots[i]
            if in_actual:
                outcome[m], rule_id[m] = "cap", slot.rule.id
            if in_if and not refused_if:
                outcome_if[m], rule_id_if[m] = "cap", slot.rule.id
            # tuple.__new__ skips the NamedTuple's Python-level __new__: one per decision adds up.
            decision = tuple.__new__(
                Decision,
                (
                    *slot.prefix,
                    ids[m],
                    slot.evidence(memories[m]),
                    *_CAP_VERDICTS[in_actual, in_if],
                ),
            )
            known = found.get(m)
            if known is None:
                found[m] = [decision]
            else:
                known.append(decision)
        return found

    @property
    def ids(self) -> list[str]:
        """The memory ids, by position."""
        return self._ids

    @property
    def verdicts(self) -> Verdicts:
        """Per memory, the verdict and deciding rule on both tracks (redaction changes neither).
        Read-only."""
        return self._verdicts

    def disclose(
        self, *, headings: Iterable[int] = (), full: Iterable[int] = ()
    ) -> dict[int, tuple[str, str]]:
        """Redact the heading of the memory at each of `headings` and both texts of each at
        `full` (a position in both counts as `full`). Returns, by position, the (heading,
        content) to show where redaction rewrote a disclosed text, the content empty where only
        the heading is disclosed. A memory disclosed again with more of it is redacted afresh.
        Raises IndexError for a position out of range."""
        wanted: dict[int, bool] = dict.fromkeys(headings, False)
        wanted.update(dict.fromkeys(full, True))
        if not wanted:
            return {}
        if min(wanted) < 0 or max(wanted) >= len(self._ids):
            raise IndexError("a disclosed position is out of range")
        known = self._full
        if known:
            rising = [m for m in wanted if m not in known or (wanted[m] and not known[m])]
            known.update(zip(rising, map(wanted.__getitem__, rising), strict=True))
        else:  # the first disclosure, the common case: all of it is new
            rising = list(wanted)
            known.update(wanted)
        if rising and self._plan is not None:
            self._redact(sorted(rising))
        rewritten: dict[int, tuple[str, str]] = {}
        for m in sorted(self._redacted.keys() & wanted.keys()):
            actual = self._redacted[m].actual
            content = actual.content if wanted[m] else ""
            if actual.heading != self._headings[m] or content not in ("", self._contents[m]):
                rewritten[m] = (actual.heading, content)
        return rewritten

    def disclose_all(self) -> None:
        """Disclose every text of every memory (as `disclose`, without the texts returned)."""
        count = len(self._ids)
        if len(self._full) == count and all(self._full.values()):
            return
        self._full = dict.fromkeys(range(count), True)
        self._redacted.clear()
        if self._plan is not None:
            self._redact(None)

    def _redact(self, positions: list[int] | None) -> None:
        """Redact the memories at `positions` (all when None) as far as they are disclosed."""
        assert self._plan is not None
        contents = self._contents
        if positions is not None:
            full = list(compress(positions, map(self._full.__getitem__, positions)))
            if len(full) < len(positions):  # a heading alone: its content is not searched
                contents = [""] * len(contents)
                for m in full:
                    contents[m] = self._contents[m]
            if self._redacted:
                for m in positions:
                    self._redacted.pop(m, None)
        self._redacted.update(
            redact_all(
                self._plan,
                self._signatures,
                self._ids,
                self._memories,
                (self._headings, contents),
                positions,
            )
        )

    def evaluation(self) -> Evaluation:
        """What the evaluation found, with the redactions of the texts disclosed so far."""
        count = len(self._ids)
        if len(self._full) == count and all(self._full.values()):
            headings, contents = self._headings.copy(), self._contents.copy()
        else:
            headings, contents = [""] * count, [""] * count
            for m, with_content in self._full.items():
                headings[m] = self._headings[m]
                if with_content:
                    contents[m] = self._contents[m]
        redactions: list[tuple[Redaction, ...]] = [()] * count
        redactions_if: list[tuple[Redaction, ...]] = [()] * count
        redacting: dict[int, list[Decision]] = {}
        for m, (actual, as_if, made) in self._redacted.items():
            redacting[m] = made
            headings[m], contents[m] = actual.heading, actual.content
            redactions[m] = actual.redactions()
            if self._would_refuse is None:
                redactions_if[m] = redactions[m] if as_if is actual else as_if.redactions()

        caps = self._cap_decisions
        decisions = list(self._request_decisions)
        # In memory order; per memory: admit (and error) decisions, redactions, then caps.
        by_stage = (self._admit_decisions, redacting, caps)
        order = sorted({*self._admit_decisions, *redacting, *caps})
        lists = zip(*(map(found.get, order, repeat(())) for found in by_stage), strict=True)
        decisions.extend(chain.from_iterable(chain.from_iterable(lists)))
        columns = (
            self._ids,
            *self._verdicts,
            headings,
            contents,
            redactions,
            redactions_if,
        )
        # tuple.__new__ skips the NamedTuple's Python-level __new__: all in C, per memory.
        outcomes = tuple(map(tuple.__new__, repeat(MemoryOutcome), zip(*columns, strict=True)))
        return Evaluation(self._mode, self.refused, outcomes, tuple(decisions))


class Verdicts(NamedTuple):
    """Per memory, before redaction: the verdict and deciding rule on both tracks."""

    outcome: list[Outcome]
    outcome_if: list[Outcome]
    rule_id: list[str | None]
    rule_id_if: list[str | None]


def _admitted(admissions: list[Admission], would_refuse: Rule | None) -> Verdicts:
    """The verdicts of the admit stage, worked out once per combination (no step per memory)."""
    if not admissions:
        return Verdicts([], [], [], [])
    fates = {a: _fate(a, would_refuse) for a in dict.fromkeys(admissions)}
    columns = zip(*map(fates.__getitem__, admissions), strict=True)
    return Verdicts(*(list(column) for column in columns))


def _fate(
    admission: Admission, would_refuse: Rule | None
) -> tuple[Outcome, Outcome, str | None, str | None]:
    """(outcome, outcome if enforced, rule, rule if enforced) before redaction and budget."""
    (outcome, rule_id), (outcome_if, rule_id_if) = admission.admit, admission.admit_if
    if would_refuse is not None:
        outcome_if, rule_id_if = "deny", would_refuse.id
    return outcome, outcome_if, rule_id, rule_id_if


def _either(first: list[bool] | None, second: list[bool] | None) -> list[bool] | None:
    if first is None or second is None:
        return first or second
    return [a or b for a, b in zip(first, second, strict=True)]


def _memory_ids(ids: list[object]) -> list[str]:
    if not set(map(type, ids)) <= {str} and not all(isinstance(i, str) for i in ids):
        raise TypeError("every memory needs a string memory_id")
    return ids  # type: ignore[return-value]


def _texts(values: list[object]) -> tuple[list[str], list[bool] | None]:
    """A text field as delivered (missing or not a string: empty), and which are not strings
    (None when all are strings or missing)."""
    if set(map(type, values)) <= {str}:
        return values, None  # type: ignore[return-value]
    bad = [value is not None and not isinstance(value, str) for value in values]
    texts = [value if isinstance(value, str) else "" for value in values]
    return texts, bad if any(bad) else None
