"""The last stage of assembling a bundle (:mod:`gateway.core.assembly`): the selection laid
out within the budget (header, index, memories in full; :mod:`gateway.core.fill`), rendered as
the assembler says (:mod:`gateway.core.render`), and accounted for (:class:`Assembly`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from gateway.core.fill import (
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

    refs = bundle_refs(selection.headings, selection.full)
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
    layout = _layout(
        request,
        [index_line(refs[m.memory_id], m, text_of(m)[0]) for m in index_members],
        blocks,
        listable,
        empty=empty,
        tokenizer=tokenizer,
        with_count=with_count,
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
    )


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
    )
