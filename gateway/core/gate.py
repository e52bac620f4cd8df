"""The policy gate: how the core accepts the policy engine's verdict without importing it.

The engine lives in ``policies``; the use case wraps it in a :data:`Gate` callback. The core calls
the gate once per assembly with every live candidate that could reach the bundle (the ranked
tier-2 candidates in rank order, then the index-only entries in index order, each memory once) and
applies the verdict:

- ``denied``: the memory reaches neither the index nor tier 2 (reason ``policy_denied``);
- ``capped``: the memory stays out of tier 2 but keeps its index line (reason ``policy_capped``);
- ``rewritten``: the (heading, content) to render instead of the stored ones, e.g. after
  redaction; it applies to the index line and to the tier-2 block.
- ``rewrite``: when set, the texts are rewritten on demand instead: the core calls it once, with
  the memories whose heading it may render as an index line and those it may render in full
  (before the layout decides what fits, since a rewritten text has its own length), and renders
  what it returns (``rewritten`` is then not read). A policy then redacts only what the bundle
  may show, and records what it did show (``gateway.usecases.disclosure.shown_evaluation``).

A verdict that names a memory the gate was not shown, or carries the wrong reason, is a bug in the
caller: :func:`check_verdict` raises rather than guessing (fail closed).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from gateway.core.model import Candidate, Exclusion, ExclusionReason, MemoryId

__all__ = [
    "ADMIT_ALL",
    "Gate",
    "GateVerdict",
    "GateVerdictError",
    "Rewrite",
    "check_verdict",
]


def _empty() -> Mapping[MemoryId, Exclusion]:
    return MappingProxyType({})


def _empty_rewrites() -> Mapping[MemoryId, tuple[str, str]]:
    return MappingProxyType({})


# (memories shown by heading only, memories shown in full) -> the texts to render for those whose
# shown texts are rewritten (the content is not read for a heading-only one).
Rewrite = Callable[[Sequence[MemoryId], Sequence[MemoryId]], Mapping[MemoryId, tuple[str, str]]]


@dataclass(frozen=True, slots=True)
class GateVerdict:
    denied: Mapping[MemoryId, Exclusion] = field(default_factory=_empty)
    capped: Mapping[MemoryId, Exclusion] = field(default_factory=_empty)
    rewritten: Mapping[MemoryId, tuple[str, str]] = field(default_factory=_empty_rewrites)
    rewrite: Rewrite | None = None

    def texts_for(
        self, headings: Sequence[MemoryId], full: Sequence[MemoryId]
    ) -> Mapping[MemoryId, tuple[str, str]]:
        """The texts to render instead of the stored ones, for the memories about to be shown
        (`headings` as index lines, `full` as blocks); raises GateVerdictError if the gate
        rewrites a memory it was not asked about."""
        if self.rewrite is None:
            return self.rewritten
        found = self.rewrite(headings, full)
        asked = {*headings, *full}
        for memory_id in sorted(found):
            if memory_id not in asked:
                raise GateVerdictError("gate rewrote a memory that is not shown", memory_id)
        return found


Gate = Callable[[Sequence[Candidate]], GateVerdict]

ADMIT_ALL = GateVerdict()


class GateVerdictError(ValueError):
    """A gate returned a verdict the core cannot apply; ``memory_id`` names the offending entry."""

    def __init__(self, message: str, memory_id: str) -> None:
        super().__init__(f"{message}: {memory_id}")
        self.memory_id = memory_id


def _check_exclusions(
    entries: Mapping[MemoryId, Exclusion], reason: ExclusionReason, shown: set[MemoryId]
) -> None:
    # Sorted so that the first error reported does not depend on mapping order.
    for memory_id in sorted(entries):
        exclusion = entries[memory_id]
        if memory_id not in shown:
            raise GateVerdictError("verdict names a memory the gate was not shown", memory_id)
        if exclusion.memory_id != memory_id:
            raise GateVerdictError("exclusion is filed under another memory_id", memory_id)
        if exclusion.reason != reason:
            raise GateVerdictError(f"exclusion reason must be {reason!r}", memory_id)


def check_verdict(verdict: GateVerdict, shown: Sequence[Candidate]) -> None:
    """Raise :class:`GateVerdictError` unless ``verdict`` only speaks about ``shown`` candidates."""
    shown_ids = {c.memory_id for c in shown}
    _check_exclusions(verdict.denied, "policy_denied", shown_ids)
    _check_exclusions(verdict.capped, "policy_capped", shown_ids)
    for memory_id in sorted(verdict.rewritten):
        if memory_id not in shown_ids:
            raise GateVerdictError("verdict rewrites a memory the gate was not shown", memory_id)
