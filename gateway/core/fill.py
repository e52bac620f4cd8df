"""Fitting a bundle into an exact token budget.

BPE token counts are not additive: two strings can cost more or fewer tokens together than apart
(whitespace and punctuation merge across the seam). So every decision here is first estimated
from the pieces' own counts and then checked by counting the assembled string; when the exact
count is over, the room is shrunk by the overage and the decision is made again. The returned
string's exact count is therefore never above the budget, by construction rather than by slack.

Budget shares: the header comes first (the longest variant that fits, see
:data:`gateway.core.render.HEADERS`); the index gets its own share (``index_budget_tokens``, or
:data:`DEFAULT_INDEX_SHARE_PERCENT` of ``budget_tokens``) and what it leaves unused flows to the
memories in full. Memories are admitted whole, so they usually leave some room too; unless the
request fixed ``index_budget_tokens``, that room flows back to the index (:func:`grow_index`),
which lists more of what the agent knows instead of wasting the budget. The index lines keep their
order, so a grown index still starts with the lines of the ungrown one (prompt caches keep them).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from gateway.core.model import ContextRequest, FillMode
from gateway.core.render import (
    EMPTY_NAMESPACES,
    HEADERS,
    INDEX_TITLE,
    SEPARATOR,
    TAIL_TITLE,
    index_section,
    more_line,
)
from gateway.core.tokens import Tokenizer

__all__ = [
    "DEFAULT_INDEX_SHARE_PERCENT",
    "IndexFit",
    "TailFit",
    "choose_header",
    "fill_tail",
    "fit_empty",
    "fit_index",
    "grow_index",
    "index_reach",
    "index_share",
    "index_takes_slack",
]

# A quarter of the budget is enough for ~40 index lines at 4000 tokens while leaving most of the
# budget to the memories that answer the task; the index's unused share flows to them anyway.
DEFAULT_INDEX_SHARE_PERCENT = 25


def index_share(request: ContextRequest) -> int:
    """The tokens the index section may use (0 when the index is off)."""
    if not request.include_index:
        return 0
    if request.index_budget_tokens is not None:
        return max(0, min(request.index_budget_tokens, request.budget_tokens))
    return request.budget_tokens * DEFAULT_INDEX_SHARE_PERCENT // 100


def index_takes_slack(request: ContextRequest) -> bool:
    """Whether room the memories leave flows back to the index: unless the request fixed
    ``index_budget_tokens``."""
    return request.include_index and request.index_budget_tokens is None


def index_reach(request: ContextRequest) -> int:
    """The most tokens the index can end up with: its share, or the whole budget when it takes
    the slack (:func:`index_takes_slack`), since the memories may leave that much room."""
    return request.budget_tokens if index_takes_slack(request) else index_share(request)


def choose_header(tokenizer: Tokenizer, budget: int) -> str | None:
    """The longest header variant whose exact count fits ``budget``; None if none does."""
    for header in HEADERS:
        if tokenizer.count(header) <= budget:
            return header
    return None


def fit_empty(tokenizer: Tokenizer, budget: int, notice: str = EMPTY_NAMESPACES) -> str:
    """The bundle for namespaces without memories: header and ``notice``, degrading to ``""``."""
    for option in (*(h + SEPARATOR + notice for h in HEADERS), notice):
        if tokenizer.count(option) <= budget:
            return option
    return ""


@dataclass(frozen=True, slots=True)
class IndexFit:
    """The first ``shown`` index lines, as the ``section`` text costing ``tokens`` on its own."""

    shown: int
    section: str
    tokens: int


_NO_INDEX = IndexFit(shown=0, section="", tokens=0)


def fit_index(
    tokenizer: Tokenizer,
    header: str,
    lines: Sequence[str],
    total_live: int,
    share: int,
    budget: int,
    *,
    with_count: bool = True,
    pointing: bool = False,
) -> IndexFit:
    """The longest prefix of ``lines`` whose section fits ``share`` and, after ``header``, ``budget``.

    The index is a prefix by construction (lines are ordered by confidence), so a cut index ends
    with "…N more, use search" where N counts the live memories not listed; with ``with_count``
    False, with the line :data:`gateway.core.render.MORE_UNCOUNTED` instead, which costs the same
    whatever ``total_live`` is.
    """
    if share <= 0:
        return _NO_INDEX

    def remaining(shown: int) -> int:
        return max(0, total_live - shown)

    def more_cost(shown: int) -> int:
        left = remaining(shown)
        more = more_line(left, with_count=with_count, pointing=pointing)
        return tokenizer.count("\n" + more) if left > 0 else 0

    best = _estimated_prefix(tokenizer, lines, share, more_cost, listing=remaining(0) > 0)
    for shown in range(best, -1, -1):
        section = index_section(
            lines[:shown], remaining(shown), with_count=with_count, pointing=pointing
        )
        tokens = tokenizer.count(section)
        if tokens > share:
            continue
        if section and tokenizer.count(header + SEPARATOR + section) > budget:
            continue
        return IndexFit(shown=shown, section=section, tokens=tokens)
    return _NO_INDEX


def _estimated_prefix(
    tokenizer: Tokenizer,
    lines: Sequence[str],
    share: int,
    more_cost: Callable[[int], int],
    *,
    listing: bool,
) -> int:
    """The longest prefix of ``lines`` whose section, estimated from its pieces' counts, fits
    ``share`` (-1: not even the title); ``listing``: there is anything to point at past them.
    Lines are counted only until the share is spent."""
    best = -1
    running = tokenizer.count(INDEX_TITLE)
    for shown in range(len(lines) + 1):
        if shown > 0:
            running += tokenizer.count("\n" + lines[shown - 1])
        if running > share:  # every longer prefix costs at least this much: none fits
            break
        # With nothing to list and nothing to point at, there is no section at all.
        empty = shown == 0 and not listing
        estimate = 0 if empty else running + more_cost(shown)
        if estimate <= share:
            best = shown
    return best


def grow_index(
    tokenizer: Tokenizer,
    header: str,
    lines: Sequence[str],
    total_live: int,
    fitted: IndexFit,
    tail: str,
    budget: int,
    *,
    tokens: int,
    with_count: bool = True,
    pointing: bool = False,
) -> tuple[IndexFit, int]:
    """``fitted`` refitted into the room left after ``header``, the index and ``tail`` (the
    bundle's text after the index section, as filled), with the bundle's exact count: never
    fewer lines, and the whole bundle still within ``budget``. ``tokens`` is the exact count of
    the bundle as it stands; ``with_count`` as for :func:`fit_index` (and as ``fitted`` was made).
    Like :func:`fill_tail`, an estimate checked by an exact count.
    """
    share = fitted.tokens + budget - tokens
    while share > fitted.tokens and fitted.shown < len(lines):
        grown = fit_index(
            tokenizer,
            header,
            lines,
            total_live,
            share,
            budget,
            with_count=with_count,
            pointing=pointing,
        )
        if grown.shown <= fitted.shown:
            break
        counted = tokenizer.count(header + SEPARATOR + grown.section + tail)
        if counted <= budget:
            return grown, counted
        share -= counted - budget  # the seams cost more than the pieces: try again with less
    return fitted, tokens


@dataclass(frozen=True, slots=True)
class TailFit:
    """Which blocks made it (indices, in order), the final bundle and its exact token count.

    ``room`` is the tail room the last (successful) decision was made with; ``stopped_at`` is the
    index of the block where ``stop`` mode stopped, if it did; ``costs`` are the blocks' costs
    (each counted with its leading separator), except at ``floored``: blocks whose floor alone
    did not fit, which were never counted (their cost there is the floor).
    """

    admitted: tuple[int, ...]
    bundle: str
    tokens: int
    room: int
    stopped_at: int | None
    costs: tuple[int, ...]
    floored: frozenset[int] = frozenset()


class _Costs:
    """The blocks' costs, counted only when a block might fit: a block whose floor (a lower
    bound of its cost, e.g. its content's own count) is over the room left is not counted, so a
    full tier drawn from hundreds of candidates counts the few that can fit, not all of them."""

    def __init__(
        self, tokenizer: Tokenizer, blocks: Sequence[str], floors: Sequence[int] | None
    ) -> None:
        self._tokenizer, self._blocks, self._floors = tokenizer, blocks, floors
        self._exact: dict[int, int] = {}

    def within(self, position: int, limit: int) -> int | None:
        """The block's cost, or None when its floor alone is over ``limit``."""
        if self._floors is not None and self._floors[position] > limit:
            return None
        if position not in self._exact:
            block = self._blocks[position]
            self._exact[position] = self._tokenizer.count(SEPARATOR + block)
        return self._exact[position]

    def known(self) -> tuple[tuple[int, ...], frozenset[int]]:
        """Every block's cost as far as it is known, and the positions only floored."""
        floors = self._floors or [0] * len(self._blocks)
        costs = tuple(self._exact.get(i, floors[i]) for i in range(len(self._blocks)))
        return costs, frozenset(i for i in range(len(self._blocks)) if i not in self._exact)


def _choose(
    costs: _Costs, count: int, title_cost: int, room: int, mode: FillMode
) -> tuple[tuple[int, ...], int | None]:
    admitted: list[int] = []
    used = 0
    for position in range(count):
        title = 0 if admitted else title_cost
        cost = costs.within(position, room - used - title)
        if cost is not None and used + cost + title <= room:
            admitted.append(position)
            used += cost + title
        elif mode == "stop":
            return tuple(admitted), position
    return tuple(admitted), None


def fill_tail(
    tokenizer: Tokenizer,
    prefix: str,
    blocks: Sequence[str],
    budget: int,
    mode: FillMode,
    floors: Sequence[int] | None = None,
) -> TailFit:
    """Admit whole ``blocks`` (best first) after ``prefix`` so the bundle fits ``budget`` exactly.

    ``prefix`` must already fit. ``skip`` continues past a block that does not fit; ``stop``
    stops at the first one. ``floors``: a lower bound of each block's cost, for blocks not worth
    counting (see :class:`_Costs`); without them every block is counted.
    """
    prefix_tokens = tokenizer.count(prefix)
    if prefix_tokens > budget:
        raise ValueError("the prefix alone exceeds the budget")
    room = budget - prefix_tokens
    if not blocks:
        return TailFit((), prefix, prefix_tokens, room, None, ())
    costs = _Costs(tokenizer, blocks, floors)
    if floors is None:  # every block counted, as before floors existed
        for position in range(len(blocks)):
            costs.within(position, room)
    title_cost = tokenizer.count(SEPARATOR + TAIL_TITLE)
    while True:
        admitted, stopped_at = _choose(costs, len(blocks), title_cost, room, mode)
        if not admitted:
            return TailFit((), prefix, prefix_tokens, room, stopped_at, *costs.known())
        tail = SEPARATOR + TAIL_TITLE + "".join(SEPARATOR + blocks[i] for i in admitted)
        bundle = prefix + tail
        tokens = tokenizer.count(bundle)
        if tokens <= budget:
            return TailFit(admitted, bundle, tokens, room, stopped_at, *costs.known())
        # The seams cost more than the pieces did alone: decide again with less room. The room
        # shrinks every round, so this ends (at worst with no block admitted).
        room -= tokens - budget
