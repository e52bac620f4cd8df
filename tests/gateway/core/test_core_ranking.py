import dataclasses
import hashlib
import json
from datetime import timedelta

import pytest
import rfc8785

from gateway.core.model import MemoryId
from gateway.core.ranking import (
    DEFAULT_PROFILE,
    SIGNALS,
    RankingProfile,
    RankingProfileError,
    RankingWeights,
    rank,
)
from tests.gateway.core.core_samples import NOW, memory


def test_order_is_score_descending_then_memory_id() -> None:
    strong = memory(
        "z-strong", vector_rank=1, vector_distance=0.05, lexical_rank=1, lexical_score=0.5
    )
    weak = memory("a-weak", vector_rank=5, vector_distance=0.6)
    twin_a = memory("m-twin-a", vector_rank=2, vector_distance=0.3)
    twin_b = memory("m-twin-b", vector_rank=2, vector_distance=0.3)
    ranked = rank([weak, twin_b, strong, twin_a], DEFAULT_PROFILE, NOW)
    assert [r.candidate.memory_id for r in ranked] == ["z-strong", "m-twin-a", "m-twin-b", "a-weak"]
    assert ranked[1].score == ranked[2].score


def test_score_is_the_exact_sum_of_its_weighted_signals() -> None:
    candidate = memory(
        "m", vector_rank=3, vector_distance=0.2, lexical_rank=2, lexical_score=0.05, confidence=0.7
    )
    (ranked,) = rank([candidate], DEFAULT_PROFILE, NOW)
    assert tuple(ranked.signals) == SIGNALS
    assert ranked.score_micros == sum(ranked.signal_micros.values())
    assert ranked.score == ranked.score_micros / 1_000_000
    assert ranked.signal_micros["similarity"] == 280_000  # 0.35 x (1 - 0.2)
    assert ranked.signal_micros["lexical"] == 150_000  # best lexical score in the set
    assert ranked.signal_micros["confidence"] == 70_000


def test_each_signal_moves_the_score_the_expected_way() -> None:
    base = memory("m", vector_rank=1, vector_distance=0.3)

    def score(candidate: object) -> int:
        assert isinstance(candidate, type(base))
        return rank([candidate], DEFAULT_PROFILE, NOW)[0].score_micros

    assert score(dataclasses.replace(base, created_at=NOW - timedelta(days=300))) < score(base)
    assert score(dataclasses.replace(base, expires_at=NOW + timedelta(hours=1))) < score(base)
    assert score(dataclasses.replace(base, expires_at=NOW + timedelta(days=30))) == score(base)
    assert score(dataclasses.replace(base, confidence=0.1)) < score(base)
    assert score(dataclasses.replace(base, memory_type="procedural")) > score(base)
    assert score(dataclasses.replace(base, vector_distance=0.9)) < score(base)
    # A memory written after `now` (clock skew) is not rewarded for a negative age.
    assert score(dataclasses.replace(base, created_at=NOW + timedelta(days=5))) == score(
        dataclasses.replace(base, created_at=NOW)
    )


def test_digest_is_sha256_of_the_rfc8785_form_with_decimal_strings() -> None:
    canonical = DEFAULT_PROFILE.canonical()
    assert canonical["weights"] == {
        "similarity": "0.35",
        "lexical": "0.15",
        "rrf": "0.25",
        "type_priority": "0.05",
        "confidence": "0.1",
        "recency": "0.05",
        "validity": "0.05",
        "brevity": "0.3",
    }
    assert canonical["brevity_half_tokens"] == 256
    expected = "sha256:" + hashlib.sha256(rfc8785.dumps(canonical)).hexdigest()
    assert DEFAULT_PROFILE.digest == expected
    assert "." not in json.dumps(canonical["rrf_k"])  # the one number is an integer


def test_digest_is_stable_and_changes_with_any_weight() -> None:
    again = RankingProfile(version=DEFAULT_PROFILE.version)
    assert again.digest == DEFAULT_PROFILE.digest
    # Pinned: a change to the digest rule or the default profile must be deliberate.
    assert DEFAULT_PROFILE.digest == (
        "sha256:ce07795011a5dd3d29fc98a56e2b86e023e9fd4b30bab245207074bb006a454e"
    )
    digests = {DEFAULT_PROFILE.digest}
    for name in SIGNALS:
        tuned = DEFAULT_PROFILE.with_weights(DEFAULT_PROFILE.version, **{name: 0.5})
        digests.add(tuned.digest)
    assert len(digests) == len(SIGNALS) + 1
    renamed = dataclasses.replace(DEFAULT_PROFILE, version="rank/2026-12-01.1")
    assert renamed.digest != DEFAULT_PROFILE.digest


def test_profiles_from_before_brevity_keep_their_digest() -> None:
    # The first default profile, as receipts recorded it: no brevity weight, no half size.
    recorded = {
        "version": "rank/2026-11-29.1",
        "weights": {"similarity": "0.35", "lexical": "0.15", "rrf": "0.25",
                    "type_priority": "0.05", "confidence": "0.1", "recency": "0.05",
                    "validity": "0.05"},
        "type_priority": {"semantic": "0.9", "episodic": "0.7", "procedural": "1",
                          "working": "0.5"},
        "recency_half_life_days": "30", "validity_horizon_days": "7", "rrf_k": 60,
    }  # fmt: skip
    old = RankingProfile.from_canonical(recorded)
    assert old.weights.brevity == 0.0
    assert old.canonical() == recorded
    assert old.digest == "sha256:1a11e710c69281d207e638fb59ba152b34cc43efda5c16d5a7677b9a352dbe17"
    short = memory("s", vector_rank=1, content="word " * 40)
    long = memory("l", vector_rank=1, content="word " * 900)
    assert [r.signals["brevity"] for r in rank([short, long], old, NOW)] == [0.0, 0.0]
    ranked = {r.candidate.memory_id: r for r in rank([short, long], DEFAULT_PROFILE, NOW)}
    assert ranked[MemoryId("s")].signals["brevity"] > ranked[MemoryId("l")].signals["brevity"] > 0


def test_a_tuned_profile_round_trips_through_its_canonical_form() -> None:
    tuned = DEFAULT_PROFILE.with_weights("rank/tuned.1", similarity=0.6, recency=0.0)
    assert tuned.weights.similarity == 0.6
    assert tuned.weights.lexical == DEFAULT_PROFILE.weights.lexical
    loaded = RankingProfile.from_canonical(json.loads(json.dumps(tuned.canonical())))
    assert loaded == tuned
    assert loaded.digest == tuned.digest


def test_weights_change_the_order() -> None:
    semantic = memory("a", vector_rank=1, vector_distance=0.1)
    lexical = memory("b", lexical_rank=1, lexical_score=0.9)
    default = rank([semantic, lexical], DEFAULT_PROFILE, NOW)
    assert default[0].candidate.memory_id == "a"
    lexical_first = DEFAULT_PROFILE.with_weights("rank/lex", similarity=0.0, lexical=1.0)
    assert rank([semantic, lexical], lexical_first, NOW)[0].candidate.memory_id == "b"


@pytest.mark.parametrize(
    "build",
    [
        lambda: RankingProfile(version=""),
        lambda: RankingProfile(version="v", weights=RankingWeights(similarity=float("nan"))),
        lambda: RankingProfile(version="v", recency_half_life_days=0),
        lambda: RankingProfile(version="v", rrf_k=0),
        lambda: RankingProfile(version="v", type_priority={"semantic": 1.0}),
        lambda: RankingProfile.from_canonical({"version": "v", "weights": {"bogus": "1"}}),
        lambda: RankingProfile.from_canonical({"version": "v", "surprise": 1}),
    ],
)
def test_malformed_profiles_are_refused(build: object) -> None:
    assert callable(build)
    with pytest.raises(RankingProfileError):
        build()


def test_profiles_are_hashable_by_content() -> None:
    assert hash(RankingProfile(version=DEFAULT_PROFILE.version)) == hash(DEFAULT_PROFILE)
    assert len({DEFAULT_PROFILE, RankingProfile(version=DEFAULT_PROFILE.version)}) == 1
