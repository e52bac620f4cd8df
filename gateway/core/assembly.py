"""Assembling a context bundle, in stages that each take the previous one's value:

    prepare (liveness, ranking) -> the policy judges `Prepared.judged` -> select (verdict,
    earlier values, top_k, index lines) -> the policy redacts `Selection.headings` / `Selection.full` -> lay_out (fill,
    render) -> Assembly

each stage in its module (:mod:`gateway.core.preparation`, :mod:`gateway.core.selection`,
:mod:`gateway.core.bundle`), and :func:`assemble` here runs them in one call. The core never
calls out: the use case runs the policy between the stages, on values. The rules the bundle is
rendered and filled by are a versioned :class:`~gateway.core.versions.Assembler`.

Accounting rule. Every memory passed in (``candidates`` ∪ ``index_entries``, by memory_id, each
once) ends up in exactly one of:

- ``included``: a retrieval candidate delivered in full (tier 2);
- ``index.entries`` only: an index-only entry whose line is shown (tier 1 is its whole role);
- ``excluded``, with the first reason that applies, in this order:
  ``superseded`` / ``deleted`` / ``expired`` (dead at ``now``), ``policy_denied``, then for
  retrieval candidates ``policy_capped``, ``superseded_in_bundle`` (another admitted candidate
  states a newer value of its claim: :mod:`gateway.core.current_values`, assemblers with
  ``current_values``), ``below_top_k``, ``over_budget``, and for index-only entries
  ``index_truncated`` (also when the request turned the index off).

A retrieval candidate is judged by its tier-2 role: if it is not delivered in full it is excluded
with its reason even when its line is shown in the index (``index.entries`` still lists it). A
memory in both lists is a retrieval candidate; its index line keeps the index position.

The bundle never contains the task. With no live memory at all (``total_live == 0`` and nothing
live passed in) it says so; below the smallest header's cost it is the empty string.

The count in the index's "…N more" line is ``total_live`` minus the lines shown, and
``total_live`` counts every live memory in scope, denied ones too. So when the policy can deny
(``withhold_count``, which the caller decides from the policy's shape, never from the data),
nothing in the bundle may depend on the denied memories:

- the line states no count, and appears only when the index leaves out a memory the policy let
  through, or when the store's index fetch was cut (more may be listable);
- the empty notice (:data:`gateway.core.render.EMPTY_VISIBLE`) appears when nothing passed in
  is visible and the fetch was not cut, whether nothing is stored or everything is denied.

One trace is left: whether the fetch was cut depends on ``total_live``, denied memories
included; it only matters when the scope holds more memories than the budget's index reach.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from types import MappingProxyType

from gateway.core.bundle import lay_out
from gateway.core.model import Candidate, ContextRequest, OpenConflict
from gateway.core.outcome import Assembly
from gateway.core.preparation import Found, prepare
from gateway.core.profile import RankingProfile
from gateway.core.selection import select
from gateway.core.tokens import Tokenizer
from gateway.core.verdict import ADMIT_ALL, Texts, Verdict, check_texts
from gateway.core.versions import ASSEMBLER, Assembler

__all__ = ["assemble"]


def assemble(
    request: ContextRequest,
    candidates: Sequence[Candidate],
    index_entries: Sequence[Candidate],
    total_live: int,
    *,
    profile: RankingProfile,
    tokenizer: Tokenizer,
    now: datetime,
    verdict: Verdict = ADMIT_ALL,
    rewritten: Texts = MappingProxyType({}),
    withhold_count: bool = False,
    conflicts: Sequence[OpenConflict] = (),
    assembler: Assembler = ASSEMBLER,
) -> Assembly:
    """The stages in one call, for a verdict and rewritten texts known beforehand (tests,
    benchmarks, a policy that rewrites nothing): ``rewritten`` may name any judged memory; only
    the texts of memories the selection may show are rendered, and the defence of
    :mod:`gateway.core.current_values` reads the admitted ones as rewritten, as the use case's
    `compose` has it read them."""
    found = Found(tuple(candidates), tuple(index_entries), total_live, tuple(conflicts))
    hidden = frozenset(verdict.denied) if assembler.rank_admitted else frozenset()
    prepared = prepare(request, found, profile=profile, now=now, hidden=hidden)
    selection = select(
        prepared, verdict, assembler, lambda ids: {m: rewritten[m] for m in ids if m in rewritten}
    )
    shown = {*selection.headings, *selection.full}
    check_texts(rewritten, {c.memory_id for c in selection.prepared.judged})
    texts = {m: t for m, t in rewritten.items() if m in shown}
    return lay_out(
        selection, texts, tokenizer=tokenizer, withhold_count=withhold_count, assembler=assembler
    )
