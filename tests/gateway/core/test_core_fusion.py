from fractions import Fraction

import pytest

from gateway.core.fusion import RRF_K, fuse, rrf_max, rrf_score
from tests.gateway.core.core_samples import memory


def test_rrf_uses_k_60_and_one_based_ranks() -> None:
    assert RRF_K == 60
    assert rrf_score(1, None) == Fraction(1, 61)
    assert rrf_score(1, 3) == Fraction(1, 61) + Fraction(1, 63)
    assert rrf_score(None, None) == 0
    assert rrf_max() == Fraction(2, 61)


def test_rrf_rejects_zero_based_ranks() -> None:
    with pytest.raises(ValueError, match="1-based"):
        rrf_score(0, None)


def test_exact_ties_are_broken_by_memory_id() -> None:
    # (1, 3) and (3, 1) fuse to exactly the same score; so do the two lexical-only rank-2 hits.
    candidates = [
        memory("m-d", vector_rank=3, lexical_rank=1),
        memory("m-b", vector_rank=1, lexical_rank=3),
        memory("m-c", lexical_rank=2),
        memory("m-a", vector_rank=2),
        memory("m-e"),
    ]
    fused = fuse(candidates)
    assert [f.candidate.memory_id for f in fused] == ["m-b", "m-d", "m-a", "m-c", "m-e"]
    assert fused[0].score == fused[1].score
    assert fused[2].score == fused[3].score
    assert [f.rank for f in fused] == [1, 2, 3, 4, 5]


def test_fusion_does_not_depend_on_input_order() -> None:
    candidates = [memory(f"m{n}", vector_rank=n % 4 + 1, lexical_rank=4 - n % 4) for n in range(8)]
    forward = [f.candidate.memory_id for f in fuse(candidates)]
    backward = [f.candidate.memory_id for f in fuse(list(reversed(candidates)))]
    assert forward == backward
