"""The last stage of assembling a bundle (:mod:`gateway.core.assembly`): the selection laid
out within the budget (header, index, memories in full; :mod:`gateway.core.fill`), rendered as
the assembler says (:mod:`gateway.core.render`), and accounted for (:class:`Assembly`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from gateway.core.fill import (
    IndexFit,
    choose_header,
    fill_tail,
    fit_empty,
    fit_index,
    grow_index,
    index_share,
    index_takes_slack,
)
from gateway.core.model import (
    Candidate,
    ConflictSide,
    ContextRequest,
    Exclusion,
    MemoryId,
    OpenConflict,
)
from gateway.core.outcome import Assembly, IncludedMemory, IndexReport, ProfileRef
from gateway.core.ranking import Ranked
from gateway.core.render import (
    EMPTY_NAMESPACES,
    EMPTY_VISIBLE,
    SEPARATOR,
    bundle_refs,
    conflict_block,
    index_line,
    index_section,
    memory_block,
)
from gateway.core.selection import Selection
from gateway.core.tokens import Tokenizer
from gateway.core.verdict import Texts, check_texts
from gateway.core.versions import ASSEMBLER, Assembler

__all__ = ["lay_out"]


def lay_out(
    selection: Selection,
    texts: Texts,
    *,
    tokenizer: Tokenizer,
    withhold_count: bool = False,
    assembler: Assembler = ASSEMBLER,
) -> Assembly:
    """Fit and render the selection within the budget (as ``assembler`` renders), with ``texts`` (the policy's rewritten
    texts of memories in :attr:`Selection.headings` or :attr:`Selection.full`) in place of the
    stored ones. ``withhold_count``: the policy can deny memories (judged from its shape alone,
    so that whether the count is shown says nothing about the data); the index's "more" line
    then states no count."""
    prepared, verdict = selection.prepared, selection.verdict
    request, total_live = prepared.request, prepared.total_live
    top, index_members = selection.top, selection.index_members
    check_texts(texts, {*selection.headings, *selection.full})
    excluded = dict(selection.excluded)
    with_count = not withhold_count
    live_any = bool(prepared.ranked or prepared.unranked or prepared.index_only)
    listable, empty = total_live, total_live == 0 and not live_any
    if not with_count:
        # Neither whether the "more" line appears nor the empty notice may depend on how many
        # memories are denied: the index could list what the policy let through, plus more
        # when the store's fetch was cut (its reach depends on the budget); "empty" means
        # nothing visible and nothing beyond the fetch, and says so in words true either way.
        cut = total_live > len(prepared.index_order)
        listable = len(index_members) + cut
        visible = any(r.candidate.memory_id not in verdict.denied for r in prepared.ranked) or any(
            c.memory_id not in verdict.denied for c in prepared.index_only
        )
        empty = request.include_index and not cut and not visible

    def text_of(candidate: Candidate) -> tuple[str, str]:
        return texts.get(candidate.memory_id, (candidate.heading, candidate.content))

    pointing = assembler.pointing_index and not empty and request.include_index
    if pointing and _fits_whole(selection, texts, tokenizer, listable, with_count):
        pointing = False
    # Refs as the agent reads them: an index that fits whole keeps its own order first (the
    # prefix does not depend on the task); one that points lists what the memories left.
    refs = (
        bundle_refs(selection.full, [m.memory_id for m in selection.pointers])
        if pointing
        else bundle_refs(selection.headings, selection.full)
    )
    singles = [
        memory_block(
            refs[r.candidate.memory_id],
            r.candidate,
            *text_of(r.candidate),
            labels=assembler.heading_labels,
        )
        for r in top
    ]
    pairs = _conflicting(top, prepared.conflicts) if assembler.conflicts_section else {}
    # Each block shows the memories at these positions of `top`: one, or a conflict's two.
    groups = [
        (i, *([pairs[i][0]] if i in pairs else []))
        for i in range(len(top))
        if not any(i == j for j, _ in pairs.values())
    ]
    blocks = [
        singles[g[0]]
        if len(g) == 1
        else conflict_block(
            pairs[g[0]][1].claim_key,
            [(_side(pairs[g[0]][1], top[i].candidate.memory_id), singles[i]) for i in g],
        )
        for g in groups
    ]
    floors = _floors(top, groups, texts) if assembler.budget_sized else None
    if pointing:
        layout, index_members = _pointing_layout(
            request,
            selection.pointers,
            lambda m: index_line(refs[m.memory_id], m, text_of(m)[0]),
            blocks,
            [{top[i].candidate.memory_id for i in g} for g in groups],
            listable,
            cut=total_live > len(prepared.index_order),
            tokenizer=tokenizer,
            with_count=with_count,
            floors=floors,
        )
    else:
        layout = _layout(
            request,
            [index_line(refs[m.memory_id], m, text_of(m)[0]) for m in index_members],
            blocks,
            listable,
            empty=empty,
            tokenizer=tokenizer,
            with_count=with_count,
            floors=floors,
        )
    delivered = set(layout.delivered)
    for position, group in enumerate(groups):
        if position not in delivered:
            for i in group:
                memory_id = top[i].candidate.memory_id
                detail = layout.over_budget(position)
                excluded[memory_id] = Exclusion(memory_id, "over_budget", detail)
    shown_ids = tuple(m.memory_id for m in index_members[: layout.index_shown])
    shown_set = set(shown_ids)
    for candidate in prepared.index_only:
        memory_id = candidate.memory_id
        if memory_id not in excluded and memory_id not in shown_set:
            excluded[memory_id] = Exclusion(memory_id, "index_truncated", layout.index_truncated)

    included = tuple(
        _included(
            top[i],
            tokens=tokenizer.count(singles[i]),
            rewritten=top[i].candidate.memory_id in texts,
            ref=refs[top[i].candidate.memory_id],
        )
        for b in layout.delivered
        for i in groups[b]
    )
    shown_refs = tuple(
        (refs[memory_id], memory_id)
        for memory_id in dict.fromkeys((*shown_ids, *(i.memory_id for i in included)))
    )
    bundle, tokens_used = layout.bundle, layout.tokens
    profile = prepared.profile
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
        ranking_input=prepared.pool,
        prefix_chars=layout.prefix_chars,
        refs=shown_refs,
        earlier=selection.earlier,
    )


def _floors(top: Sequence[Ranked], groups: Sequence[tuple[int, ...]], texts: Texts) -> list[int]:
    """A lower bound of each block's cost, so that a full tier drawn from hundreds of candidates
    counts only the blocks that can still fit (:func:`gateway.core.fill.fill_tail`): three
    quarters of the content's stored count (the block shows the content whole after a line of
    its own; the margin covers a count made by another tokenizer). None for a block of two
    memories or of rewritten texts, which is always counted."""
    floors = []
    for group in groups:
        candidate = top[group[0]].candidate
        alone = len(group) == 1 and candidate.memory_id not in texts
        floors.append(candidate.tokens * 3 // 4 if alone else 0)
    return floors


def _conflicting(
    top: Sequence[Ranked], conflicts: Sequence[OpenConflict]
) -> dict[int, tuple[int, OpenConflict]]:
    """Open conflicts with both sides among `top`, by the better side's position: the other
    side's position and the conflict. A memory is in at most one pair (its first conflict in
    rank order), so each is shown once."""
    position = {r.candidate.memory_id: i for i, r in enumerate(top)}
    pairs: dict[int, tuple[int, OpenConflict]] = {}
    paired: set[int] = set()
    for conflict in sorted(conflicts, key=lambda c: tuple(s.memory_id for s in c.sides)):
        first, second = (position.get(s.memory_id) for s in conflict.sides)
        if first is None or second is None or {first, second} & paired:
            continue
        low, high = sorted((first, second))
        pairs[low] = (high, conflict)
        paired |= {low, high}
    return dict(sorted(pairs.items()))


def _side(conflict: OpenConflict, memory_id: MemoryId) -> ConflictSide:
    return next(s for s in conflict.sides if s.memory_id == memory_id)


def _included(ranked: Ranked, *, tokens: int, rewritten: bool, ref: str) -> IncludedMemory:
    return IncludedMemory(
        memory_id=ranked.candidate.memory_id,
        content_sha256=ranked.candidate.content_sha256,
        tokens=tokens,
        score=ranked.score,
        signals=dict(ranked.signals),
        score_micros=ranked.score_micros,
        signal_micros=dict(ranked.signal_micros),
        rewritten=rewritten,
        ref=ref,
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
    floored: frozenset[int] = frozenset()  # blocks never counted: their floor did not fit

    def over_budget(self, position: int) -> str:
        if self.tail_room is None:
            return "the budget is too small for the header"
        if self.stopped_at is not None and position > self.stopped_at:
            return "fill=stop ended at a higher-ranked memory that did not fit"
        if position in self.floored:
            return (
                f"its content alone (at least {self.block_tokens[position]} tokens) did not fit "
                "the room left after the header, the index and the memories before it"
            )
        return (
            f"its {self.block_tokens[position]} tokens did not fit the {self.tail_room} tokens "
            "left after the header and index"
        )


def _fits_whole(
    selection: Selection, texts: Texts, tokenizer: Tokenizer, listable: int, with_count: bool
) -> bool:
    """Whether the namespace's index fits its share whole: every memory it may list listed, as
    an index that does not point would lay it out (its lines in index order)."""
    request, members = selection.prepared.request, selection.index_members
    if listable > len(members):  # more live memories than it can list: not whole
        return False
    header = choose_header(tokenizer, request.budget_tokens)
    if header is None:
        return True
    refs = bundle_refs(selection.headings, selection.full)
    lines = [
        index_line(refs[m.memory_id], m, texts.get(m.memory_id, (m.heading, m.content))[0])
        for m in members
    ]
    share = index_share(request)
    fitted = fit_index(
        tokenizer, header, lines, listable, share, request.budget_tokens, with_count=with_count
    )
    return fitted.shown == len(lines)


def _pointing_layout(
    request: ContextRequest,
    pointers: Sequence[Candidate],
    line_of: Callable[[Candidate], str],
    blocks: Sequence[str],
    block_ids: Sequence[set[MemoryId]],
    listable: int,
    *,
    cut: bool,
    tokenizer: Tokenizer,
    with_count: bool,
    floors: Sequence[int] | None,
) -> tuple[_Layout, tuple[Candidate, ...]]:
    """An index that points where the full tier stops: the memories in full first, within what
    the header and the index's title and "more" line leave; then, in the room they leave, the
    lines of `pointers` they did not show (the most relevant first). Returns the layout and
    the members of the lines in order (the layout shows the first `index_shown`)."""
    budget = request.budget_tokens
    header = choose_header(tokenizer, budget)
    if header is None:
        return _Layout(
            "", 0, 0, 0, 0, (), "the budget is too small for the header", None, None, ()
        ), ()

    def section_of(lines: Sequence[str], remaining: int) -> str:
        return index_section(lines, remaining, with_count=with_count, pointing=True)

    reserve = section_of([], max(1, listable))
    prefix = header + SEPARATOR + reserve
    if tokenizer.count(prefix) > budget:
        prefix = header
    tail = fill_tail(tokenizer, prefix, blocks, budget, request.fill, floors)
    rest = tail.bundle[len(prefix) :]
    shown_in_full = {m for b in tail.admitted for m in block_ids[b]}
    members = tuple(m for m in pointers if m.memory_id not in shown_in_full)
    # What the "more" line counts: every live memory not in full (denied ones too, so only
    # when the policy cannot deny), or, with the count withheld, whether anything is left.
    left = listable - len(shown_in_full) if with_count else len(members) + cut
    start = section_of([], left)
    fitted = IndexFit(0, start, tokenizer.count(start) if start else 0)
    tokens = tokenizer.count(header + (SEPARATOR + start if start else "") + rest)
    if tokens > budget:  # the count's digits cost more than the reserve's: no index line
        fitted = IndexFit(0, "", 0)
        tokens = tokenizer.count(header + rest)
    # The room the memories left, or no more of it than the index's share when the request
    # fixed one (`index_budget_tokens`).
    fixed = request.index_budget_tokens
    reach = budget if fixed is None else min(budget, tokens - fitted.tokens + fixed)
    # No line costs fewer than five tokens ("[m9 semantic .8] x"): no more than a fifth of the
    # room left can be listed, so no more are rendered.
    listed = members[: max(0, reach - tokens) // 5 + 1]
    grown, tokens = grow_index(
        tokenizer,
        header,
        [line_of(m) for m in listed],
        left,
        fitted,
        rest,
        reach,
        tokens=tokens,
        with_count=with_count,
        pointing=True,
    )
    section = header + (SEPARATOR + grown.section if grown.section else "")
    layout = _Layout(
        bundle=section + rest,
        tokens=tokens,
        prefix_chars=len(section) + (len(SEPARATOR) if tail.admitted else 0),
        index_shown=grown.shown,
        index_tokens=grown.tokens,
        delivered=tail.admitted,
        index_truncated=(
            f"the index lists the most relevant memories not in full in the {grown.tokens} "
            "tokens they left"
        ),
        tail_room=tail.room,
        stopped_at=tail.stopped_at,
        block_tokens=tail.costs,
        floored=tail.floored,
    )
    return layout, members


def _layout(
    request: ContextRequest,
    lines: Sequence[str],
    blocks: Sequence[str],
    total_live: int,
    *,
    empty: bool,
    tokenizer: Tokenizer,
    with_count: bool,
    floors: Sequence[int] | None = None,
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
    tail = fill_tail(tokenizer, prefix, blocks, budget, request.fill, floors)
    bundle, tokens, truncated = (
        tail.bundle,
        tail.tokens,
        f"the index share of {share} tokens is full",
    )
    if index_takes_slack(request):
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
        floored=tail.floored,
    )
