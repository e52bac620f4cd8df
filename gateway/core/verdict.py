"""The policy's verdict, as the core applies it: which memories are denied, which capped.

The engine lives in ``policies``; the use case translates its judgement into a :class:`Verdict`
value before the core selects what may be shown (:func:`gateway.core.selection.select`). Nothing in
the core calls back out to the policy: the texts to render (redacted where a rule says so) are
asked for by the use case for exactly the memories the selection may show, and passed to
:func:`gateway.core.bundle.lay_out` as a value.

- ``denied``: the memory reaches neither the index nor tier 2 (reason ``policy_denied``);
- ``capped``: the memory stays out of tier 2 but keeps its index line (reason ``policy_capped``).

A verdict that names a memory the policy was not shown, or carries the wrong reason, is a bug in
the caller: :func:`check_verdict` raises rather than guessing (fail closed).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from gateway.core.errors import CoreError
from gateway.core.model import Exclusion, ExclusionReason, MemoryId

__all__ = ["ADMIT_ALL", "Texts", "Verdict", "VerdictError", "check_texts", "check_verdict"]

# (heading, content) to render instead of the stored texts, by memory.
Texts = Mapping[MemoryId, tuple[str, str]]


def _empty() -> Mapping[MemoryId, Exclusion]:
    return MappingProxyType({})


@dataclass(frozen=True, slots=True)
class Verdict:
    denied: Mapping[MemoryId, Exclusion] = field(default_factory=_empty)
    capped: Mapping[MemoryId, Exclusion] = field(default_factory=_empty)


ADMIT_ALL = Verdict()


class VerdictError(CoreError, ValueError):
    """A verdict or texts the core cannot apply; ``memory_id`` names the offending entry."""

    def __init__(self, message: str, memory_id: str) -> None:
        super().__init__(f"{message}: {memory_id}")
        self.memory_id = memory_id


def _check_exclusions(
    entries: Mapping[MemoryId, Exclusion], reason: ExclusionReason, shown: Collection[MemoryId]
) -> None:
    # Sorted so that the first error reported does not depend on mapping order.
    for memory_id in sorted(entries):
        exclusion = entries[memory_id]
        if memory_id not in shown:
            raise VerdictError("verdict names a memory the policy was not shown", memory_id)
        if exclusion.memory_id != memory_id:
            raise VerdictError("exclusion is filed under another memory_id", memory_id)
        if exclusion.reason != reason:
            raise VerdictError(f"exclusion reason must be {reason!r}", memory_id)


def check_verdict(verdict: Verdict, judged: Collection[MemoryId]) -> None:
    """Raise :class:`VerdictError` unless ``verdict`` only speaks about ``judged`` memories."""
    _check_exclusions(verdict.denied, "policy_denied", judged)
    _check_exclusions(verdict.capped, "policy_capped", judged)


def check_texts(texts: Texts, shown: Collection[MemoryId]) -> None:
    """Raise :class:`VerdictError` if ``texts`` rewrites a memory that is not to be shown."""
    for memory_id in sorted(texts):
        if memory_id not in shown:
            raise VerdictError("texts rewrite a memory that is not shown", memory_id)
