"""The memory stages of one evaluation, in two steps: judge every candidate (admit and budget),
then redact only the texts the caller shows.

Redaction weighs on neither admission nor caps (a cap reads the stored token count), so it can
wait until the caller knows what it will show. A context assembly shows a few memories in full
and the headings of its index, out of hundreds of candidates: redacting all of them would cost
more than the rest of the evaluation, and record decisions about texts nobody was shown. The
assembly asks for the redacted `texts` of what it may render (it needs them to measure the
bundle), then gives `evaluation` what it did show; `evaluate` shows every text, for the callers
that deliver them all (search, timeline, fetch, policy tests).

Works on columns (one list per outcome field, one item per memory) filled from the signatures,
then patched where a cap or redaction changed a memory's fate: most memories cost no
Python-level step of their own.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from itertools import chain, repeat
from typing import NamedTuple

from policies.budget import run_budget
from policies.decisions import Decision, Evaluation, MemoryOutcome, Outcome, Redaction, Refusal
from policies.explain import add_decisions
from policies.firing import Columns, fire_rules, values_of
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
    """Every candidate judged; redaction waits for `texts` or `evaluation`.

    Positions are indexes into the memories as given. Each text is redacted once, however often
    it is asked for; the redaction decisions and redactions an evaluation records speak of the
    texts it is told were shown.
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
        # Redaction done so far, by whether the content was searched too: the positions, and
        # the results where a rule redacted something.
        self._computed: dict[bool, set[int]] = {False: set(), True: set()}
        self._done: dict[bool, dict[int, Redacted]] = {False: {}, True: {}}
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
            fire_rules(plan, columns := Columns(memories, dicts=dicts)),
            _either(bad_headings, bad_contents),
            count,
        )
        self._verdicts = _admitted(sigs.admissions, self._would_refuse)
        self._admit_decisions = admit_decisions(plan, sigs.admissions, self._ids, columns)
        self._cap_decisions = self._budget(columns)

    def _budget(self, columns: Columns) -> dict[int, list[Decision]]:
        """Walk the caps; patch the verdicts they change, and return their decisions by memory."""
        plan, sigs = self._plan, self._signatures
        assert plan is not None
        outcome, outcome_if, rule_id, rule_id_if = self._verdicts
        refused_if = self._would_refuse is not None
        # The memories each cap stopped, by (cap slot, on the actual track, if enforced).
        stops: dict[tuple[int, bool, bool], list[int]] = {}
        for m, i, in_actual, in_if in run_budget(plan, sigs.admissions, sigs.caps, self._memories):
            cap_id = plan.slots[i].rule.id
            if in_actual:
                outcome[m], rule_id[m] = "cap", cap_id
            if in_if and not refused_if:
                outcome_if[m], rule_id_if[m] = "cap", cap_id
            stops.setdefault((i, in_actual, in_if), []).append(m)
        found: dict[int, list[Decision]] = {}
        # In slot order, so that a memory stopped by two caps (one per track) has its
        # decisions in rule order.
        for (i, in_actual, in_if), members in sorted(stops.items()):
            verdicts = _CAP_VERDICTS[in_actual, in_if]
            add_decisions(found, plan.slots[i], members, self._ids, columns, verdicts)
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

    @property
    def rewrites(self) -> bool:
        """Whether a rule in force may rewrite a text (an enforced redact rule): when not,
        `texts` is always empty, and asking for it redacts nothing."""
        return self._plan is not None and self._plan.rewrites

    def texts(
        self, *, headings: Iterable[int] = (), full: Iterable[int] = ()
    ) -> dict[int, tuple[str, str]]:
        """The texts to show, redacted: for the memory at each of `headings` its heading, and
        for each at `full` both texts (a position in both counts as `full`). Returns, by
        position, the (heading, content) of those whose texts redaction rewrote, the content
        empty where only the heading is asked for. Records nothing: what is finally shown is
        given to `evaluation`. Raises IndexError for a position out of range."""
        heads, fulls = self._sides(headings, full)
        if not self.rewrites:
            return {}  # shown as stored (the evaluation still redacts what it records)
        self._redact(heads, fulls)
        rewritten: dict[int, tuple[str, str]] = {}
        for positions, done in ((heads, self._done[False]), (fulls, self._done[True])):
            for m in done.keys() & positions:
                actual = done[m].actual
                content = actual.content if done is self._done[True] else ""
                if actual.heading != self._headings[m] or content not in ("", self._contents[m]):
                    rewritten[m] = (actual.heading, content)
        return dict(sorted(rewritten.items()))

    def _sides(self, headings: Iterable[int], full: Iterable[int]) -> tuple[set[int], set[int]]:
        """(positions shown by heading alone, positions shown in full)."""
        fulls = set(full)
        heads = set(headings) - fulls
        count = len(self._ids)
        for positions in (heads, fulls):
            if positions and (min(positions) < 0 or max(positions) >= count):
                raise IndexError("a shown position is out of range")
        return heads, fulls

    def _redact(self, heads: set[int], fulls: set[int]) -> None:
        """Redact what is not redacted yet of the headings at `heads` and the texts at `fulls`."""
        if self._plan is None:
            return  # refused: every memory is denied, nothing is redacted
        count = len(self._ids)
        for positions, with_content in ((heads, False), (fulls, True)):
            done = self._computed[with_content]
            todo = positions - done
            if not todo:
                continue
            done |= todo
            self._done[with_content].update(
                redact_all(
                    self._plan,
                    self._signatures,
                    self._ids,
                    self._memories,
                    # A heading alone: its content is not searched.
                    (self._headings, self._contents if with_content else [""] * count),
                    None if len(todo) == count else sorted(todo),
                )
            )

    def evaluation(self, *, headings: Iterable[int] = (), full: Iterable[int] = ()) -> Evaluation:
        """What the evaluation found, its redaction covering the texts shown: the heading of the
        memory at each of `headings`, both texts of each at `full` (a position in both counts
        as `full`). A text not shown is empty in its outcome (fail closed: the engine hands out
        no text it was not asked to redact). Raises IndexError for a position out of range."""
        heads, fulls = self._sides(headings, full)
        self._redact(heads, fulls)
        count = len(self._ids)
        if len(fulls) == count:
            headings_, contents = self._headings.copy(), self._contents.copy()
        else:
            shown = heads | fulls
            headings_ = [h if m in shown else "" for m, h in enumerate(self._headings)]
            contents = [c if m in fulls else "" for m, c in enumerate(self._contents)]
        redactions: list[tuple[Redaction, ...]] = [()] * count
        redactions_if: list[tuple[Redaction, ...]] = [()] * count
        redacting: dict[int, list[Decision]] = {}
        for positions, done in ((heads, self._done[False]), (fulls, self._done[True])):
            for m in done.keys() & positions:
                actual, as_if, made = done[m]
                redacting[m] = made
                headings_[m], contents[m] = actual.heading, actual.content
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
            headings_,
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
