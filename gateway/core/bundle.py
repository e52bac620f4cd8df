"""The last stage of assembling a bundle (:mod:`gateway.core.assembly`): the selection laid
out within the budget (header, index, memories in full; :mod:`gateway.core.fill`), rendered as
the assembler says (:mod:`gateway.core.render`), and accounted for (:class:`Assembly`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from gateway.core.fill import (
    choose_header,
    fit_index,
    index_share,
)
from gateway.core.layout import index_layout, pointing_layout
from gateway.core.model import (
    Candidate,
    ConflictSide,
    Exclusion,
    MemoryId,
    OpenConflict,
)
from gateway.core.outcome import Assembly, IncludedMemory, IndexReport, ProfileRef
from gateway.core.ranking import Ranked
from gateway.core.render import (
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
            said_day=assembler.said_days,
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
        layout, index_members = pointing_layout(
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
        layout = index_layout(
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
