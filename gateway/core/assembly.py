"""Assembling a context bundle, in stages that each take the previous one's value:

    prepare (liveness, ranking) -> the policy judges `Prepared.judged` -> select (verdict, top_k,
    index lines) -> the policy redacts `Selection.headings` / `Selection.full` -> lay_out (fill,
    render) -> Assembly

The core never calls out: the use case runs the policy between the stages, on values.

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

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from types import MappingProxyType

from gateway.core.fill import (
    choose_header,
    fill_tail,
    fit_empty,
    fit_index,
    grow_index,
    index_share,
    index_takes_slack,
)
from gateway.core.liveness import split_live
from gateway.core.model import (
    Candidate,
    ConflictSide,
    ContextRequest,
    Exclusion,
    MemoryId,
    OpenConflict,
)
from gateway.core.outcome import Assembly, IncludedMemory, IndexReport, ProfileRef
from gateway.core.ranking import PoolStatistics, Ranked, RankingProfile, pool_statistics, rank
from gateway.core.render import (
    EMPTY_NAMESPACES,
    EMPTY_VISIBLE,
    SEPARATOR,
    bundle_refs,
    conflict_block,
    index_line,
    memory_block,
)
from gateway.core.tokens import Tokenizer
from gateway.core.verdict import ADMIT_ALL, Texts, Verdict, check_texts, check_verdict

__all__ = [
    "ASSEMBLER",
    "COMPACT",
    "CONFLICTS",
    "PARTNERS",
    "Assembler",
    "AssemblyInputError",
    "Found",
    "Prepared",
    "Selection",
    "UnknownAssemblerError",
    "assemble",
    "lay_out",
    "prepare",
    "resolve_assembler",
    "select",
]


@dataclass(frozen=True, slots=True)
class Assembler:
    """Names the rendering and fill rules for receipts: exact replay of a receipt is promised only
    by an assembler that still builds the version that wrote it.

    The rule: any change to the bytes a bundle is made of is a new version, and a new version is
    a new frozen value of this class (what differs is a field of it, read by the stages), chosen
    once per request with :func:`resolve_assembler` — never booleans threaded through the core.
    Old versions are kept only once a release that wrote them has been deployed; before 1.0 there
    is one."""

    version: str
    # Two delivered memories in an open conflict are rendered together under a "Conflicting
    # memories" heading, each with its writer and time, at the better one's position.
    conflicts_section: bool = False
    # A side of an open conflict among the top_k brings its admitted partner from below them:
    # one side alone would read as the settled value.
    conflict_partners: bool = False
    # A memory in full whose heading is `<label>: <opening words>` of its content shows the label
    # alone (render.shown_heading): a remembered turn's opening words were shown twice.
    heading_labels: bool = False


# 2026-12-01.1: per-bundle references ([m3]) and one short provenance line (render.py).
COMPACT = Assembler(version="assemble/2026-12-01.1")
# 2026-12-02.1: open conflicts shown together under "Conflicting memories" (ARCHITECTURE §12).
CONFLICTS = Assembler(version="assemble/2026-12-02.1", conflicts_section=True)
# 2026-12-02.2: and a conflict's other side joins the top_k when one side is in them.
PARTNERS = Assembler(
    version="assemble/2026-12-02.2", conflicts_section=True, conflict_partners=True
)
# 2026-12-02.3: and a heading's label alone when its words open the content.
ASSEMBLER = Assembler(
    version="assemble/2026-12-02.3",
    conflicts_section=True,
    conflict_partners=True,
    heading_labels=True,
)
_ASSEMBLERS = {a.version: a for a in (COMPACT, CONFLICTS, PARTNERS, ASSEMBLER)}


class UnknownAssemblerError(LookupError):
    """A receipt names an assembler version this gateway does not build."""

    def __init__(self, version: str) -> None:
        super().__init__(f"unknown assembler version {version!r}")
        self.version = version


def resolve_assembler(version: str) -> Assembler:
    """The assembler that builds ``version``; raises :class:`UnknownAssemblerError`."""
    found = _ASSEMBLERS.get(version)
    if found is None:
        raise UnknownAssemblerError(version)
    return found


class AssemblyInputError(ValueError):
    """The inputs break the core's preconditions (naive datetimes, impossible budgets)."""


@dataclass(frozen=True, slots=True)
class Found:
    """What the store found for a request: retrieval candidates (live and dead near matches),
    index entries (confidence desc, then memory_id, cut to :func:`gateway.core.fill.index_reach`)
    and the count of live memories in scope."""

    candidates: tuple[Candidate, ...]
    index_entries: tuple[Candidate, ...]
    total_live: int
    conflicts: tuple[OpenConflict, ...] = ()  # open, with a side among the candidates


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
        if not all(map(_aware, (c.created_at, c.expires_at, c.deleted_at, c.erased_at))):
            raise AssemblyInputError(f"memory {c.memory_id} has a naive datetime")


def _unique(candidates: Sequence[Candidate], seen: set[MemoryId]) -> list[Candidate]:
    """First occurrence of each memory_id not already in ``seen`` (which is updated)."""
    kept: list[Candidate] = []
    for candidate in candidates:
        if candidate.memory_id not in seen:
            seen.add(candidate.memory_id)
            kept.append(candidate)
    return kept


@dataclass(frozen=True, slots=True)
class Prepared:
    """Liveness and ranking done at the pinned ``now``: what the policy judges, in its order."""

    request: ContextRequest
    profile: RankingProfile
    total_live: int
    ranked: tuple[Ranked, ...]  # the live retrieval candidates, best first
    pool: PoolStatistics  # what the profile's adaptive priors read from them
    index_order: tuple[Candidate, ...]  # every index entry once, in index order
    index_only: tuple[Candidate, ...]  # the live index entries that were not retrieved
    retrieved: Mapping[MemoryId, Candidate]
    dead: tuple[Exclusion, ...]  # retrieved or index-only, dead at ``now``
    conflicts: tuple[OpenConflict, ...] = ()

    @property
    def judged(self) -> tuple[Candidate, ...]:
        """Every live memory that could reach the bundle, as the policy judges them: the ranked
        tier-2 candidates in rank order, then the index-only entries in index order (each once;
        the order matters to caps)."""
        ranked = tuple(r.candidate for r in self.ranked)
        return ranked + self.index_only if self.request.include_index else ranked


def prepare(
    request: ContextRequest, found: Found, *, profile: RankingProfile, now: datetime
) -> Prepared:
    """Check the inputs, split the live from the dead and rank the live candidates."""
    seen: set[MemoryId] = set()
    retrieved = _unique(found.candidates, seen)
    index_only = _unique(found.index_entries, seen)
    _check_inputs(request, [*retrieved, *index_only], found.total_live, now)
    live_retrieved = split_live(retrieved, now)
    live_index_only = split_live(index_only, now)
    pool = pool_statistics(live_retrieved.live)
    return Prepared(
        request=request,
        profile=profile,
        total_live=found.total_live,
        ranked=tuple(rank(live_retrieved.live, profile, now, pool)),
        pool=pool,
        index_order=tuple(_unique(found.index_entries, set())),
        index_only=live_index_only.live,
        retrieved=MappingProxyType({c.memory_id: c for c in retrieved}),
        dead=(*live_retrieved.dead, *live_index_only.dead),
        conflicts=found.conflicts,
    )


@dataclass(frozen=True, slots=True)
class Selection:
    """What may be shown once the verdict is applied: the index lines (live, not denied, in index
    order) and the top_k admitted candidates, with the exclusions decided so far."""

    prepared: Prepared
    verdict: Verdict
    top: tuple[Ranked, ...]
    index_members: tuple[Candidate, ...]
    excluded: Mapping[MemoryId, Exclusion]

    @property
    def headings(self) -> tuple[MemoryId, ...]:
        """The memories whose heading may be shown as an index line."""
        return tuple(m.memory_id for m in self.index_members)

    @property
    def full(self) -> tuple[MemoryId, ...]:
        """The memories that may be shown in full."""
        return tuple(r.candidate.memory_id for r in self.top)


def select(
    prepared: Prepared, verdict: Verdict = ADMIT_ALL, assembler: Assembler = ASSEMBLER
) -> Selection:
    """Apply the policy's verdict on :attr:`Prepared.judged`, then top_k (with the partners of
    the conflicts in them, as ``assembler`` says)."""
    request = prepared.request
    check_verdict(verdict, {c.memory_id for c in prepared.judged})
    excluded: dict[MemoryId, Exclusion] = {e.memory_id: e for e in prepared.dead}
    dead_ids = set(excluded)
    for candidate in prepared.judged:
        denial = verdict.denied.get(candidate.memory_id)
        if denial is not None:
            excluded[candidate.memory_id] = denial
    admitted: list[Ranked] = []
    for r in prepared.ranked:
        memory_id = r.candidate.memory_id
        cap = verdict.capped.get(memory_id)
        if memory_id in excluded:
            continue
        if cap is not None:
            excluded[memory_id] = cap
        else:
            admitted.append(r)
    top = admitted[: request.top_k]
    if assembler.conflict_partners:
        top += _partners(top, admitted[request.top_k :], prepared.conflicts)
    chosen = {r.candidate.memory_id for r in top}
    for position, r in enumerate(admitted, start=1):
        if position <= request.top_k or r.candidate.memory_id in chosen:
            continue
        excluded[r.candidate.memory_id] = Exclusion(
            r.candidate.memory_id,
            "below_top_k",
            f"ranked {position} among admitted candidates; top_k is {request.top_k}",
        )
    # Index lines: live and not denied, in index order; a retrieved memory shows that version.
    index_members = tuple(
        prepared.retrieved.get(entry.memory_id, entry)
        for entry in (prepared.index_order if request.include_index else ())
        if entry.memory_id not in dead_ids and entry.memory_id not in verdict.denied
    )
    return Selection(prepared, verdict, tuple(top), index_members, MappingProxyType(excluded))


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
    live_any = bool(prepared.ranked or prepared.index_only)
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
    the texts of memories the selection may show are used."""
    found = Found(tuple(candidates), tuple(index_entries), total_live, tuple(conflicts))
    selection = select(prepare(request, found, profile=profile, now=now), verdict, assembler)
    shown = {*selection.headings, *selection.full}
    check_texts(rewritten, {c.memory_id for c in selection.prepared.judged})
    texts = {m: t for m, t in rewritten.items() if m in shown}
    return lay_out(
        selection, texts, tokenizer=tokenizer, withhold_count=withhold_count, assembler=assembler
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


def _partners(
    top: Sequence[Ranked], rest: Sequence[Ranked], conflicts: Sequence[OpenConflict]
) -> list[Ranked]:
    """The admitted candidates below the top_k that are the other side of an open conflict
    with a side in ``top``, in rank order. One side is all that can be shown of a conflict whose
    other side the recall did not reach or the policy did not admit."""
    in_top = {r.candidate.memory_id for r in top}
    wanted = {
        other.memory_id
        for conflict in conflicts
        if any(s.memory_id in in_top for s in conflict.sides)
        for other in conflict.sides
        if other.memory_id not in in_top
    }
    return [r for r in rest if r.candidate.memory_id in wanted]


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
