"""Assembling a context bundle: liveness, ranking, the policy gate, fill and render, accounted for.

Accounting rule. Every memory passed in (``candidates`` ∪ ``index_entries``, by memory_id, each
once) ends up in exactly one of:

- ``included``: a retrieval candidate delivered in full (tier 2);
- ``index.entries`` only: an index-only entry whose line is shown (tier 1 is its whole role);
- ``excluded``, with the first reason that applies, in this order:
  ``superseded`` / ``deleted`` / ``expired`` (dead at ``now``), ``policy_denied``, then for
  retrieval candidates ``policy_capped``, ``below_top_k``, ``over_budget``, and for index-only
  entries ``index_truncated`` (also when the request turned the index off).

A retrieval candidate is judged by its tier-2 role: if it is not delivered in full it is excluded
with its reason even when its line is shown in the index (``index.entries`` still lists it). A
memory in both lists is a retrieval candidate; its index line keeps the index position.

The bundle never contains the task. With no live memory at all (``total_live == 0`` and nothing
live passed in) it says so; below the smallest header's cost it is the empty string.

The count in the index's "…N more" line is ``total_live`` minus the lines shown, and
``total_live`` counts every live memory in scope, denied ones too. So when the caller's gate can
deny (``withhold_count``, which the caller decides from the policy's shape, never from the
data), nothing in the bundle may depend on the denied memories (from :data:`ASSEMBLER_VERSION`
on; earlier versions always state the count):

- the line states no count, and appears only when the index leaves out a memory the gate let
  through, or when the store's index fetch was cut (more may be listable);
- the empty notice (:data:`gateway.core.render.EMPTY_VISIBLE`) appears when nothing passed in
  is visible and the fetch was not cut, whether nothing is stored or everything is denied.

One trace is left: whether the fetch was cut depends on ``total_live``, denied memories
included; it only matters when the scope holds more memories than the budget's index reach.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from gateway.core.fill import (
    choose_header,
    fill_tail,
    fit_empty,
    fit_index,
    grow_index,
    index_share,
    index_takes_slack,
)
from gateway.core.gate import ADMIT_ALL, Gate, check_verdict
from gateway.core.liveness import split_live
from gateway.core.model import Candidate, ContextRequest, Exclusion, MemoryId
from gateway.core.outcome import Assembly, IncludedMemory, IndexReport, ProfileRef
from gateway.core.ranking import Ranked, RankingProfile, rank
from gateway.core.render import (
    EMPTY_NAMESPACES,
    EMPTY_VISIBLE,
    SEPARATOR,
    index_line,
    memory_block,
)
from gateway.core.tokens import Tokenizer

__all__ = [
    "ASSEMBLER_VERSION",
    "ASSEMBLER_VERSIONS",
    "AssemblyInputError",
    "assemble",
    "redacts_rendered_only",
    "takes_slack",
    "withholds_count",
]

# Names the rendering and fill rules for receipts: exact replay of a receipt is only promised by
# an assembler that still builds the version that wrote it. Bump it with any change to the bytes
# a bundle is made of, and keep building the old versions (``version=``) so old receipts replay.
_FIXED_INDEX_SHARE = "assemble/2026-11-29.1"  # the index kept to its share
_ALWAYS_COUNTED = "assemble/2026-11-30.1"  # room the memories leave flows back to the index
_COUNT_WITHHELD = "assemble/2026-11-30.2"  # no count in "…more" when the gate can deny
# The same bytes; the gate is asked to redact only the texts rendered (GateVerdict.rewrite),
# so the receipt's redaction decisions speak of those alone.
ASSEMBLER_VERSION = "assemble/2026-11-30.3"
ASSEMBLER_VERSIONS = frozenset(
    {_FIXED_INDEX_SHARE, _ALWAYS_COUNTED, _COUNT_WITHHELD, ASSEMBLER_VERSION}
)


def takes_slack(version: str) -> bool:
    """Whether assembler ``version`` lets the index grow into room the memories left."""
    return version != _FIXED_INDEX_SHARE


def redacts_rendered_only(version: str) -> bool:
    """Whether assembler ``version`` has the policy redact only the texts it renders (earlier
    ones had every candidate's texts redacted, and their receipts record that)."""
    return version not in (_FIXED_INDEX_SHARE, _ALWAYS_COUNTED, _COUNT_WITHHELD)


def withholds_count(version: str) -> bool:
    """Whether assembler ``version`` honours ``withhold_count`` (earlier ones always count)."""
    return version not in (_FIXED_INDEX_SHARE, _ALWAYS_COUNTED)


class AssemblyInputError(ValueError):
    """The inputs break the core's preconditions (naive datetimes, impossible budgets)."""


def _aware(value: datetime | None) -> bool:
    return value is None or (value.tzinfo is not None and value.utcoffset() is not None)


def _check_inputs(
    request: ContextRequest, members: Iterable[Candidate], total_live: int, now: datetime
) -> None:
    if not _aware(now):
        raise AssemblyInputError("now must be timezone-aware")
    if request.budget_tokens < 1:
        raise AssemblyInputError(f"budget_tokens must be at least 1, got {request.budget_tokens}")
    if request.top_k < 0:
        raise AssemblyInputError(f"top_k must not be negative, got {request.top_k}")
    if request.index_budget_tokens is not None and request.index_budget_tokens < 0:
        raise AssemblyInputError("index_budget_tokens must not be negative")
    if total_live < 0:
        raise AssemblyInputError(f"total_live must not be negative, got {total_live}")
    for c in members:
        if not (_aware(c.created_at) and _aware(c.expires_at) and _aware(c.deleted_at)):
            raise AssemblyInputError(f"memory {c.memory_id} has a naive datetime")


def _unique(candidates: Sequence[Candidate], seen: set[MemoryId]) -> list[Candidate]:
    """First occurrence of each memory_id not already in ``seen`` (which is updated)."""
    kept: list[Candidate] = []
    for candidate in candidates:
        if candidate.memory_id not in seen:
            seen.add(candidate.memory_id)
            kept.append(candidate)
    return kept


def assemble(  # noqa: C901  rewritten by the pipeline change
    request: ContextRequest,
    candidates: Sequence[Candidate],
    index_entries: Sequence[Candidate],
    total_live: int,
    *,
    profile: RankingProfile,
    tokenizer: Tokenizer,
    now: datetime,
    gate: Gate | None = None,
    withhold_count: bool = False,
    version: str = ASSEMBLER_VERSION,
) -> Assembly:
    """Build the bundle for ``request`` from the store's candidates, at the pinned ``now``.

    ``index_entries`` come ordered by confidence desc then memory_id and roughly cut by the store
    (to :func:`gateway.core.fill.index_reach`); ``total_live`` counts the live memories in the
    namespaces. ``gate`` is called exactly once (see :mod:`gateway.core.gate`); without it
    everything live is admitted unchanged. ``withhold_count``: the gate can deny memories (the
    caller judges it from the policy alone, so that whether the count is shown says nothing about
    the data); the index's "more" line then states no count, where ``version`` supports it (see
    :func:`withholds_count`). ``version`` is one of :data:`ASSEMBLER_VERSIONS`.
    """
    if version not in ASSEMBLER_VERSIONS:
        raise AssemblyInputError(f"unknown assembler version {version!r}")
    seen: set[MemoryId] = set()
    retrieved = _unique(candidates, seen)
    retrieved_by_id = {c.memory_id: c for c in retrieved}
    index_order = _unique(index_entries, set())
    index_only = _unique(index_entries, seen)
    _check_inputs(request, [*retrieved, *index_only], total_live, now)
    with_count = not (withhold_count and withholds_count(version))

    excluded: dict[MemoryId, Exclusion] = {}
    live_retrieved = split_live(retrieved, now)
    live_index_only = split_live(index_only, now)
    for exclusion in (*live_retrieved.dead, *live_index_only.dead):
        excluded[exclusion.memory_id] = exclusion
    dead_ids = set(excluded)

    ranked = rank(live_retrieved.live, profile, now)
    gated = [r.candidate for r in ranked]
    if request.include_index:
        gated.extend(live_index_only.live)
    verdict = ADMIT_ALL if gate is None else gate(tuple(gated))
    check_verdict(verdict, gated)
    for candidate in gated:
        denial = verdict.denied.get(candidate.memory_id)
        if denial is not None:
            excluded[candidate.memory_id] = denial

    admitted: list[Ranked] = []
    for r in ranked:
        memory_id = r.candidate.memory_id
        cap = verdict.capped.get(memory_id)
        if memory_id in excluded:
            continue
        if cap is not None:
            excluded[memory_id] = cap
        else:
            admitted.append(r)
    top = admitted[: request.top_k]
    for position, r in enumerate(admitted[request.top_k :], start=request.top_k + 1):
        excluded[r.candidate.memory_id] = Exclusion(
            r.candidate.memory_id,
            "below_top_k",
            f"ranked {position} among admitted candidates; top_k is {request.top_k}",
        )

    # Index lines: live and not denied, in index order; a retrieved memory shows that version.
    index_members = [
        retrieved_by_id.get(entry.memory_id, entry)
        for entry in (index_order if request.include_index else ())
        if entry.memory_id not in dead_ids and entry.memory_id not in verdict.denied
    ]
    listable, empty = (
        total_live,
        total_live == 0 and not (live_retrieved.live or live_index_only.live),
    )
    if not with_count:
        # Neither whether the "more" line appears nor the empty notice may depend on how many
        # memories are denied: the index could list what the gate let through, plus more when
        # the store's fetch was cut (its reach depends on the budget); "empty" means nothing
        # visible and nothing beyond the fetch, and says so in words true either way.
        cut = total_live > len(index_order)
        listable = len(index_members) + cut
        visible = any(
            c.memory_id not in verdict.denied for c in (*live_retrieved.live, *live_index_only.live)
        )
        empty = request.include_index and not cut and not visible
    rendered = verdict.texts_for(
        [m.memory_id for m in index_members], [r.candidate.memory_id for r in top]
    )

    def text_of(candidate: Candidate) -> tuple[str, str]:
        return rendered.get(candidate.memory_id, (candidate.heading, candidate.content))

    layout = _layout(
        request,
        [index_line(m, text_of(m)[0]) for m in index_members],
        [memory_block(r.candidate, *text_of(r.candidate)) for r in top],
        listable,
        empty=empty,
        tokenizer=tokenizer,
        slack_to_index=index_takes_slack(request, assembler_allows=takes_slack(version)),
        with_count=with_count,
    )

    for position, r in enumerate(top):
        if position not in set(layout.delivered):
            memory_id = r.candidate.memory_id
            excluded[memory_id] = Exclusion(memory_id, "over_budget", layout.over_budget(position))
    shown_ids = tuple(m.memory_id for m in index_members[: layout.index_shown])
    shown_set = set(shown_ids)
    for candidate in live_index_only.live:
        memory_id = candidate.memory_id
        if memory_id not in excluded and memory_id not in shown_set:
            excluded[memory_id] = Exclusion(memory_id, "index_truncated", layout.index_truncated)

    included = tuple(
        _included(
            top[i],
            tokens=tokenizer.count(memory_block(top[i].candidate, *text_of(top[i].candidate))),
            rewritten=top[i].candidate.memory_id in rendered,
        )
        for i in layout.delivered
    )
    bundle, tokens_used = layout.bundle, layout.tokens
    return Assembly(
        bundle=bundle,
        bundle_sha256=hashlib.sha256(bundle.encode("utf-8")).hexdigest(),
        tokens_used=tokens_used,
        budget_tokens=request.budget_tokens,
        utilization=tokens_used / request.budget_tokens,
        tokenizer=tokenizer.name,
        index=IndexReport(
            entries=shown_ids,
            shown=len(shown_ids),
            total_live=total_live,
            tokens=layout.index_tokens,
            count_withheld=not with_count,
        ),
        included=included,
        excluded=tuple(excluded[k] for k in sorted(excluded)),
        ranking_profile=ProfileRef(version=profile.version, digest=profile.digest),
        prefix_chars=layout.prefix_chars,
    )


def _included(ranked: Ranked, *, tokens: int, rewritten: bool) -> IncludedMemory:
    return IncludedMemory(
        memory_id=ranked.candidate.memory_id,
        content_sha256=ranked.candidate.content_sha256,
        tokens=tokens,
        score=ranked.score,
        signals=dict(ranked.signals),
        score_micros=ranked.score_micros,
        signal_micros=dict(ranked.signal_micros),
        rewritten=rewritten,
    )


@dataclass(frozen=True, slots=True)
class _Layout:
    """The fitted bundle and the facts the exclusion details are written from."""

    bundle: str
    tokens: int  # the exact count of `bundle`
    prefix_chars: int
    index_shown: int
    index_tokens: int
    delivered: tuple[int, ...]
    index_truncated: str
    tail_room: int | None  # None: no header fitted, so no memory was tried
    stopped_at: int | None
    block_tokens: tuple[int, ...]

    def over_budget(self, position: int) -> str:
        if self.tail_room is None:
            return "the budget is too small for the header"
        if self.stopped_at is not None and position > self.stopped_at:
            return "fill=stop ended at a higher-ranked memory that did not fit"
        return (
            f"its {self.block_tokens[position]} tokens did not fit the {self.tail_room} tokens "
            "left after the header and index"
        )


def _layout(
    request: ContextRequest,
    lines: Sequence[str],
    blocks: Sequence[str],
    total_live: int,
    *,
    empty: bool,
    tokenizer: Tokenizer,
    slack_to_index: bool,
    with_count: bool,
) -> _Layout:
    budget = request.budget_tokens
    off = "the request turned the index off"
    if empty:
        bundle = fit_empty(tokenizer, budget, EMPTY_NAMESPACES if with_count else EMPTY_VISIBLE)
        count = tokenizer.count(bundle)
        return _Layout(bundle, count, len(bundle), 0, 0, (), off, None, None, ())
    header = choose_header(tokenizer, budget)
    if header is None:
        small = "the budget is too small for the header"
        truncated = small if request.include_index else off
        return _Layout("", 0, 0, 0, 0, (), truncated, None, None, ())
    share = index_share(request)
    fitted = fit_index(tokenizer, header, lines, total_live, share, budget, with_count=with_count)
    prefix = header + (SEPARATOR + fitted.section if fitted.section else "")
    tail = fill_tail(tokenizer, prefix, blocks, budget, request.fill)
    bundle, tokens, truncated = (
        tail.bundle,
        tail.tokens,
        f"the index share of {share} tokens is full",
    )
    if slack_to_index:
        rest = tail.bundle[len(prefix) :]
        grown, tokens = grow_index(
            tokenizer,
            header,
            lines,
            total_live,
            fitted,
            rest,
            budget,
            tokens=tail.tokens,
            with_count=with_count,
        )
        if grown.shown > fitted.shown:
            truncated = (
                f"the index share of {share} tokens, grown into the room the memories in full "
                f"left, is full at {grown.tokens} tokens"
            )
            fitted, prefix = grown, header + SEPARATOR + grown.section
            bundle = prefix + rest
    return _Layout(
        bundle=bundle,
        tokens=tokens,
        prefix_chars=len(prefix) + (len(SEPARATOR) if tail.admitted else 0),
        index_shown=fitted.shown,
        index_tokens=fitted.tokens,
        delivered=tail.admitted,
        index_truncated=truncated if request.include_index else off,
        tail_room=tail.room,
        stopped_at=tail.stopped_at,
        block_tokens=tail.costs,
    )
