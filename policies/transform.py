"""The transform stage: `redact` rules, on both tracks, for the memories a detector can hit.

A cheap pre-check (detectors.detectable) runs over every candidate at once; only the memories
it does not clear get `Track`s and the detectors' patterns, and the detectors it found possible
are all that are run on them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import compress
from operator import and_, attrgetter
from typing import NamedTuple

from policies.decisions import Decision, Outcome, Redaction
from policies.detectors import redact_fields
from policies.plan import Plan
from policies.stages import Admission, Signatures

__all__ = ["Redacted", "Track", "redact_all"]

_REDACTABLE = attrgetter("redactable")


@dataclass(slots=True)
class Track:
    """One redacted memory's fate on one track (actual, or as if every rule were enforced)."""

    outcome: Outcome
    rule_id: str | None
    heading: str
    content: str
    counts: dict[tuple[str, str], int]
    # The detectors already run over this track's texts: running one again finds nothing.
    scanned: set[str]

    def redactions(self) -> tuple[Redaction, ...]:
        if not self.counts:
            return ()
        items = sorted(self.counts.items())
        return tuple(tuple.__new__(Redaction, (f, d, n)) for (f, d), n in items)


class Redacted(NamedTuple):
    """One redacted memory: its two tracks (one object when every rule is enforced), and the
    decisions of the redact rules that redacted something."""

    actual: Track
    if_enforced: Track
    decisions: list[Decision]


def redact_all(
    plan: Plan,
    signatures: Signatures,
    ids: list[str],
    memories: Sequence[Mapping[str, object]],
    texts: tuple[list[str], list[str]],
    positions: Sequence[int] | None = None,
) -> dict[int, Redacted]:
    """Redaction for the memories at `positions` (ascending; all of them when None): by
    memory, those on which a redact rule redacted something. `texts` are the headings and
    contents as disclosed."""
    admissions, redact_sets = signatures.admissions, signatures.redacts
    headings, contents = texts
    picked_admissions, picked_sets = admissions, redact_sets
    if positions is not None:
        picked_admissions = list(map(admissions.__getitem__, positions))
        picked_sets = list(map(redact_sets.__getitem__, positions))
    # The memories with redact rules on a track that admits them (in C, no step per memory).
    wanted = list(
        compress(
            range(len(ids)) if positions is None else positions,
            map(and_, map(bool, picked_sets), map(_REDACTABLE, picked_admissions)),
        )
    )
    # The cheap pre-check first, on all of them at once per set of redact rules: most texts
    # have nothing any detector can hit.
    by_set: dict[tuple[int, ...], list[int]] = {}
    for m in wanted:
        by_set.setdefault(redact_sets[m], []).append(m)
    present: dict[int, frozenset[str]] = {}
    for redacts, group in by_set.items():
        possible = plan.detectable(redacts)(
            list(map(headings.__getitem__, group)), list(map(contents.__getitem__, group))
        )
        present.update(compress(zip(group, possible, strict=True), possible))
    found: dict[int, Redacted] = {}
    steps: dict[tuple[tuple[int, ...], frozenset[str]], _Steps] = {}
    for m, detectors in sorted(present.items()):
        key = (redact_sets[m], detectors)
        todo = steps.get(key)
        if todo is None:
            todo = steps[key] = _steps(plan, *key)
        memory = (ids[m], memories[m])
        done = _redact_memory(plan, admissions[m], todo, memory, (headings[m], contents[m]))
        if done.decisions:
            found[m] = done
    return found


# Per redact slot that can hit a memory: its index, whether it is enforced, and the detectors
# it names that can hit (in the rule's order).
_Steps = list[tuple[int, bool, list[str]]]


def _steps(plan: Plan, redacts: tuple[int, ...], present: frozenset[str]) -> _Steps:
    """The `redacts` slots that name a detector in `present`, with those detectors: the same
    for every memory with those slots and detectors (worked out once per evaluation)."""
    found: _Steps = []
    for i in redacts:
        slot = plan.slots[i]
        detectors = [name for name in slot.rule.detectors if name in present]
        if detectors:
            found.append((i, slot.enforced, detectors))
    return found


def _redact_memory(
    plan: Plan,
    admission: Admission,
    steps: _Steps,
    memory: tuple[str, Mapping[str, object]],
    texts: tuple[str, str],
) -> Redacted:
    """Apply the redact `steps` to one memory's heading and content on both tracks. (Redaction
    only ever replaces what a detector looks for with a marker, so no detector can hit more
    after it.)"""
    memory_id, values = memory
    actual = Track(*admission.admit, *texts, {}, set())
    # One track when every rule is enforced; otherwise the other track as if they all were.
    if_enforced = actual if plan.uniform else Track(*admission.admit_if, *texts, {}, set())
    actual_admits = actual.outcome == "admit"
    decisions: list[Decision] = []
    for i, enforced, detectors in steps:
        hits_actual: tuple[Redaction, ...] = ()
        hits_if: tuple[Redaction, ...] = ()
        # (Identical texts are the common case: the tracks share their strings until one is
        # redacted and the other is not.)
        same_text = (
            actual.heading is if_enforced.heading and actual.content is if_enforced.content
        ) or (actual.heading, actual.content) == (if_enforced.heading, if_enforced.content)
        if enforced and actual_admits:
            hits_actual = _redact(actual, detectors)
        if if_enforced is actual:
            hits_if = hits_actual
        elif if_enforced.outcome == "admit":
            if same_text and hits_actual:
                hits_if = _copy_redaction(actual, if_enforced, hits_actual)
            elif not (same_text and enforced and actual_admits):
                hits_if = _redact(if_enforced, detectors)  # else: nothing was found above
        if hits_actual or hits_if:
            outcome = "redact" if hits_actual else "unchanged"
            outcome_if = "redact" if hits_if else "unchanged"
            shown = hits_actual if enforced else hits_if
            decisions.append(plan.decision(i, memory_id, values, outcome, outcome_if, shown))
    return Redacted(actual, if_enforced, decisions)


def _redact(track: Track, detectors: list[str]) -> tuple[Redaction, ...]:
    scanned = track.scanned
    detectors = [name for name in detectors if name not in scanned]
    if not detectors:
        return ()
    scanned.update(detectors)
    # Both texts at once: a secret split between them is a secret too (detectors.redact_fields).
    heading, content = redact_fields(track.heading, track.content, detectors, scanned=True)
    if not (heading.counts or content.counts):
        return ()
    hits: list[Redaction] = []
    counts = track.counts
    for field, done in (("content", content), ("heading", heading)):  # sorted by field
        if done.counts:
            if field == "heading":
                track.heading = done.text
            else:
                track.content = done.text
            for detector, count in done.counts:
                hits.append(tuple.__new__(Redaction, (field, detector, count)))
                key = (field, detector)
                counts[key] = counts.get(key, 0) + count
    hits.sort()
    return tuple(hits)


def _copy_redaction(
    source: Track, target: Track, hits: tuple[Redaction, ...]
) -> tuple[Redaction, ...]:
    # Both tracks held the same text, so redacting again would find the same: reuse it. The
    # target's text is now clear of whatever the source's is clear of.
    target.heading, target.content = source.heading, source.content
    target.scanned.update(source.scanned)
    for hit in hits:
        key = (hit.field, hit.detector)
        target.counts[key] = target.counts.get(key, 0) + hit.count
    return hits
