"""Ranking what the policy admits (assembler `2026-12-04.1`): a denied candidate moves no signal
of the others. Its ranks are renumbered away, it passes no context to its neighbours, and the
pool's statistics and best lexical score leave it out: the others rank as if it were never
recalled, while it is still judged (unranked) so the receipt records its denial."""

from __future__ import annotations

import dataclasses
from datetime import timedelta

import pytest

from gateway.core.assembly import assemble
from gateway.core.model import Candidate, Exclusion, MemoryId
from gateway.core.preparation import Found, prepare
from gateway.core.ranking import ranks_among
from gateway.core.selection import select
from gateway.core.tokens import load_tokenizer
from gateway.core.verdict import Verdict, VerdictError
from gateway.core.versions import ADMITTED, ASSEMBLER, DEFAULT_PROFILE, LABELS, Assembler
from tests.gateway.core.core_samples import NOW, memory, request


def _pool() -> list[Candidate]:
    """A denied strong hit (`d`) written between two visible memories, with the best lexical
    score and the first rank of both retrievers; a dead visible one; three visible hits."""
    return [
        dataclasses.replace(
            memory("d", vector_rank=1, vector_distance=0.1, lexical_rank=1, lexical_score=9.0),
            neighbours=(MemoryId("a"), MemoryId("b")),
            tokens=900,
            created_at=NOW - timedelta(hours=1),
        ),
        dataclasses.replace(
            memory("a", vector_rank=2, vector_distance=0.3, lexical_rank=2, lexical_score=2.0),
            neighbours=(MemoryId("c"),),
        ),
        memory("b", vector_rank=4, vector_distance=0.5),
        memory("gone", vector_rank=3, vector_distance=0.4, deleted_at=NOW - timedelta(days=1)),
        memory("c", vector_rank=5, vector_distance=0.6, lexical_rank=3, lexical_score=1.0),
    ]


def _denied(*ids: str) -> Verdict:
    return Verdict(
        denied={MemoryId(m): Exclusion(MemoryId(m), "policy_denied", "no-secrets") for m in ids}
    )


def _without(pool: list[Candidate], hidden: str) -> list[Candidate]:
    """`pool` as if `hidden` had never been recalled: each retriever's ranks closed over it."""
    kept = [c for c in pool if c.memory_id != hidden]
    ranks = ranks_among(kept)
    return [
        dataclasses.replace(
            c, vector_rank=ranks[c.memory_id][0], lexical_rank=ranks[c.memory_id][1]
        )
        for c in kept
    ]


def test_ranks_are_renumbered_among_the_candidates_left() -> None:
    pool = _pool()
    assert ranks_among(pool) == {c.memory_id: (c.vector_rank, c.lexical_rank) for c in pool}
    kept = ranks_among([c for c in pool if c.memory_id != "d"])
    assert kept == {"a": (1, 1), "b": (3, None), "gone": (2, None), "c": (4, 2)}


def test_the_ranking_is_the_one_without_the_denied_memory() -> None:
    pool = _pool()
    hidden = prepare(request(), Found(tuple(pool), (), 5), profile=DEFAULT_PROFILE, now=NOW,
                     hidden={"d"})  # fmt: skip
    alone = prepare(request(), Found(tuple(_without(pool, "d")), (), 4),
                    profile=DEFAULT_PROFILE, now=NOW)  # fmt: skip
    assert [(r.candidate.memory_id, r.signal_micros) for r in hidden.ranked] == [
        (r.candidate.memory_id, r.signal_micros) for r in alone.ranked
    ]
    assert hidden.pool == alone.pool
    # The ranked keep their versions as recalled (the receipt records those), and the denied one
    # is still judged, after them.
    assert hidden.ranked[0].candidate in pool
    assert [c.memory_id for c in hidden.unranked] == ["d"]
    assert [c.memory_id for c in hidden.judged][-1:] == ["d"]
    # Ranked with it, its neighbour's context and everyone's lexical signal move.
    moved = prepare(request(), Found(tuple(pool), (), 5), profile=DEFAULT_PROFILE, now=NOW)
    signals = {str(r.candidate.memory_id): r.signal_micros for r in moved.ranked}
    assert signals["a"] != next(
        r.signal_micros for r in hidden.ranked if r.candidate.memory_id == "a"
    )


def test_an_assembler_ranks_what_the_policy_admits_only_from_its_version() -> None:
    pool, tokenizer = _pool(), load_tokenizer()

    def bundle(assembler: Assembler, verdict: Verdict) -> str:
        return assemble(request(), pool, [], 5, profile=DEFAULT_PROFILE, tokenizer=tokenizer,
                        now=NOW, verdict=verdict, assembler=assembler).bundle  # fmt: skip

    # Without a denial, both build the same bytes; with one, only 2026-12-04.1 on reorders.
    assert bundle(ADMITTED, Verdict()) == bundle(LABELS, Verdict())
    assert bundle(ADMITTED, _denied("d")) != bundle(LABELS, _denied("d"))
    assert bundle(ASSEMBLER, _denied("d")) != bundle(LABELS, _denied("d"))


def test_an_unranked_memory_the_verdict_admits_fails_closed() -> None:
    prepared = prepare(request(), Found(tuple(_pool()), (), 5), profile=DEFAULT_PROFILE, now=NOW,
                       hidden={"d"})  # fmt: skip
    with pytest.raises(VerdictError, match="unranked memory is not denied"):
        select(prepared, Verdict())
