"""Fitting a bundle into its budget (:mod:`gateway.core.bundle` lays out with it): the header,
the index and the memories in full, as an index that takes its share first
(:func:`index_layout`) or one that points where the full tier stops (:func:`pointing_layout`),
with the facts the exclusion details are written from (:class:`Layout`)."""

from __future__ import annotations

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
from gateway.core.model import Candidate, ContextRequest, MemoryId
from gateway.core.render import EMPTY_NAMESPACES, EMPTY_VISIBLE, SEPARATOR, index_section
from gateway.core.tokens import Tokenizer

__all__ = ["Layout", "index_layout", "pointing_layout"]


@dataclass(frozen=True, slots=True)
class Layout:
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


def pointing_layout(
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
) -> tuple[Layout, tuple[Candidate, ...]]:
    """An index that points where the full tier stops: the memories in full first, within what
    the header and the index's title and "more" line leave; then, in the room they leave, the
    lines of `pointers` they did not show (the most relevant first). Returns the layout and
    the members of the lines in order (the layout shows the first `index_shown`)."""
    budget = request.budget_tokens
    header = choose_header(tokenizer, budget)
    if header is None:
        return Layout(
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
    layout = Layout(
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


def index_layout(
    request: ContextRequest,
    lines: Sequence[str],
    blocks: Sequence[str],
    total_live: int,
    *,
    empty: bool,
    tokenizer: Tokenizer,
    with_count: bool,
    floors: Sequence[int] | None = None,
) -> Layout:
    budget = request.budget_tokens
    off = "the request turned the index off"
    if empty:
        bundle = fit_empty(tokenizer, budget, EMPTY_NAMESPACES if with_count else EMPTY_VISIBLE)
        count = tokenizer.count(bundle)
        return Layout(bundle, count, len(bundle), 0, 0, (), off, None, None, ())
    header = choose_header(tokenizer, budget)
    if header is None:
        small = "the budget is too small for the header"
        truncated = small if request.include_index else off
        return Layout("", 0, 0, 0, 0, (), truncated, None, None, ())
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
    return Layout(
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
