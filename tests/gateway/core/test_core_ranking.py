import dataclasses
import hashlib
import json
from datetime import timedelta

import pytest
import rfc8785

from gateway.core.model import Candidate, MemoryId
from gateway.core.profile import SIGNALS, RankingProfile, RankingProfileError, RankingWeights
from gateway.core.ranking import PoolStatistics, pool_statistics, rank
from gateway.core.versions import DEFAULT_PROFILE
from tests.gateway.core.core_samples import NOW, memory

# The default with the raw cosine weighted again and age measured from `now`, so that every
# signal moves a lone candidate's score.
COSINE_WEIGHTED = dataclasses.replace(
    DEFAULT_PROFILE.with_weights("rank/test-cosine", similarity=0.35), recency_reference="now"
)


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
    (ranked,) = rank([candidate], COSINE_WEIGHTED, NOW)
    assert tuple(ranked.signals) == SIGNALS
    assert ranked.score_micros == sum(ranked.signal_micros.values())
    assert ranked.score == ranked.score_micros / 1_000_000
    assert ranked.signal_micros["similarity"] == 280_000  # 0.35 x (1 - 0.2)
    assert ranked.signal_micros["lexical"] == 300_000  # best lexical score in the set
    assert ranked.signal_micros["confidence"] == 70_000


def test_each_signal_moves_the_score_the_expected_way() -> None:
    base = memory("m", vector_rank=1, vector_distance=0.3)

    def score(candidate: object) -> int:
        assert isinstance(candidate, type(base))
        return rank([candidate], COSINE_WEIGHTED, NOW)[0].score_micros

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
        "similarity": "0",
        "lexical": "0.3",
        "rrf": "0.25",
        "type_priority": "0.05",
        "confidence": "0.1",
        "recency": "0.05",
        "validity": "0.05",
        "brevity": "0.5",
        "context": "0.25",
    }
    assert canonical["brevity_half_tokens"] == 256
    assert canonical["recency_reference"] == "newest"
    expected = "sha256:" + hashlib.sha256(rfc8785.dumps(canonical)).hexdigest()
    assert DEFAULT_PROFILE.digest == expected
    assert "." not in json.dumps(canonical["rrf_k"])  # the one number is an integer


def test_digest_is_stable_and_changes_with_any_weight() -> None:
    again = RankingProfile(
        version=DEFAULT_PROFILE.version, recency_reference="newest", full_tier_cut=0.2
    )
    assert again.digest == DEFAULT_PROFILE.digest
    # Pinned: a change to the digest rule or the default profile must be deliberate.
    assert DEFAULT_PROFILE.digest == (
        "sha256:9c3a1b68b89e4c9773eb2a6befbb86f7ba02acfc3b586440079d0b492412872c"
    )
    # rank/2026-12-02.2, which it extends by the full tier's cut, keeps its own: the cut is in
    # the canonical form only when set.
    previous = dataclasses.replace(DEFAULT_PROFILE, version="rank/2026-12-02.2", full_tier_cut=None)
    assert previous.digest == (
        "sha256:43c785d26292ad6b3cf7cdd4e52768a63880e641c1d85eae1806963336b8660d"
    )
    assert RankingProfile.from_canonical(DEFAULT_PROFILE.canonical()) == DEFAULT_PROFILE
    digests = {DEFAULT_PROFILE.digest}
    for name in SIGNALS:
        tuned = DEFAULT_PROFILE.with_weights(DEFAULT_PROFILE.version, **{name: 0.7})
        digests.add(tuned.digest)
    assert len(digests) == len(SIGNALS) + 1
    renamed = dataclasses.replace(DEFAULT_PROFILE, version="rank/2026-12-02.1")
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
    cosine_led = COSINE_WEIGHTED.with_weights("rank/cos", similarity=1.0, lexical=0.0)
    assert rank([semantic, lexical], cosine_led, NOW)[0].candidate.memory_id == "a"
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
        lambda: RankingProfile(version="v", brevity_half_medians=0.0),
        lambda: RankingProfile.from_canonical({"version": "v", "recency_reference": "then"}),
    ],
)
def test_malformed_profiles_are_refused(build: object) -> None:
    assert callable(build)
    with pytest.raises(RankingProfileError):
        build()


def test_profiles_are_hashable_by_content() -> None:
    same = RankingProfile(
        version=DEFAULT_PROFILE.version, recency_reference="newest", full_tier_cut=0.2
    )
    assert hash(same) == hash(DEFAULT_PROFILE)
    assert len({DEFAULT_PROFILE, same}) == 1


def test_the_previous_default_keeps_its_digest() -> None:
    # rank/2026-11-30.1 as its receipts recorded it: old receipts must replay under it.
    recorded = {
        "version": "rank/2026-11-30.1",
        "weights": {"similarity": "0.35", "lexical": "0.15", "rrf": "0.25",
                    "type_priority": "0.05", "confidence": "0.1", "recency": "0.05",
                    "validity": "0.05", "brevity": "0.3"},
        "type_priority": {"semantic": "0.9", "episodic": "0.7", "procedural": "1",
                          "working": "0.5"},
        "recency_half_life_days": "30", "validity_horizon_days": "7", "rrf_k": 60,
        "brevity_half_tokens": 256,
    }  # fmt: skip
    old = RankingProfile.from_canonical(recorded)
    assert old.recency_reference == "now"
    assert old.brevity_half_medians is None
    assert old.canonical() == recorded
    assert old.digest == "sha256:ce07795011a5dd3d29fc98a56e2b86e023e9fd4b30bab245207074bb006a454e"


def test_pool_statistics_are_the_lower_median_and_the_newest() -> None:
    pool = [
        memory("a", content="word " * 10, created_days_ago=3),
        memory("b", content="word " * 30, created_days_ago=1),
        memory("c", content="word " * 20, created_days_ago=2),
        memory("d", content="word " * 40, created_days_ago=9),
    ]
    stats = pool_statistics(pool)
    assert stats.median_tokens == sorted(c.tokens for c in pool)[1]
    assert stats.newest_created_at == NOW - timedelta(days=1)
    assert pool_statistics([]) == PoolStatistics(median_tokens=0, newest_created_at=None)


def test_recency_from_the_newest_separates_only_where_dates_differ() -> None:
    year_old = [
        memory("a", vector_rank=1, created_days_ago=365),
        memory("b", vector_rank=2, created_days_ago=395),
    ]
    by_id = {r.candidate.memory_id: r for r in rank(year_old, DEFAULT_PROFILE, NOW)}
    # The newest of an old store keeps full recency; one 30 days older (a half-life) has half.
    assert by_id[MemoryId("a")].signal_micros["recency"] == 50_000
    assert by_id[MemoryId("b")].signal_micros["recency"] == 25_000
    from_now = {r.candidate.memory_id: r for r in rank(year_old, COSINE_WEIGHTED, NOW)}
    assert from_now[MemoryId("a")].signal_micros["recency"] < 100  # 0.05 x 0.5 ** (365 / 30)
    same_day = [memory(i, created_days_ago=200) for i in ("x", "y")]
    assert {r.signal_micros["recency"] for r in rank(same_day, DEFAULT_PROFILE, NOW)} == {50_000}


def test_brevity_can_scale_with_the_candidates_median_length() -> None:
    relative = dataclasses.replace(
        DEFAULT_PROFILE.with_weights("rank/test-relative"), brevity_half_medians=2.0
    )
    assert relative.canonical()["brevity_half_medians"] == "2"
    assert "brevity_half_tokens" not in relative.canonical()
    assert RankingProfile.from_canonical(relative.canonical()) == relative

    def brevity_of_first(pool: list[Candidate]) -> int:
        ranked = {r.candidate.memory_id: r for r in rank(pool, relative, NOW)}
        return ranked[MemoryId("p")].signal_micros["brevity"]

    probe = memory("p", content="word " * 50)
    short_pool = [probe, *(memory(f"s{i}", content="word " * 5) for i in range(3))]
    long_pool = [probe, *(memory(f"l{i}", content="word " * 500) for i in range(3))]
    # The same memory is long among short ones and short among long ones.
    assert brevity_of_first(short_pool) < brevity_of_first(long_pool)
    tokens = probe.tokens
    median = pool_statistics(short_pool).median_tokens
    assert brevity_of_first(short_pool) == round(
        DEFAULT_PROFILE.weights.brevity * 0.5 ** (tokens / (2 * median)) * 1e6
    )


def test_context_passes_a_hits_relevance_to_its_neighbours() -> None:
    hit = memory("hit", vector_rank=1, lexical_rank=1, lexical_score=2.0)
    weaker = memory("weaker", vector_rank=2, lexical_rank=2, lexical_score=1.0)
    hit = dataclasses.replace(hit, neighbours=(MemoryId("reply"), MemoryId("hit")))
    weaker = dataclasses.replace(weaker, neighbours=(MemoryId("reply"), MemoryId("aside")))
    pool = [hit, weaker, memory("reply"), memory("aside"), memory("stranger")]
    ranked = {r.candidate.memory_id: r for r in rank(pool, DEFAULT_PROFILE, NOW)}

    def context(memory_id: str) -> int:
        return ranked[MemoryId(memory_id)].signal_micros["context"]

    weight = DEFAULT_PROFILE.weights.context
    # The best hit's neighbour gets the whole weight (the better of its two hits decides); the
    # weaker hit's own neighbour gets its share of the best relevance; a hit is not its own
    # neighbour, and a memory no hit names gets nothing.
    assert context("reply") == round(weight * 1_000_000)
    relevance = {m: ranked[MemoryId(m)].signal_micros for m in ("hit", "weaker")}
    share = sum(relevance["weaker"][s] for s in ("similarity", "lexical", "rrf")) / sum(
        relevance["hit"][s] for s in ("similarity", "lexical", "rrf")
    )
    assert abs(context("aside") - weight * share * 1_000_000) <= 2
    assert context("hit") == 0
    assert context("stranger") == 0
    # The signal off: the same pool ranks as the previous default did, neighbours or not.
    previous = DEFAULT_PROFILE.with_weights("rank/test-no-context", context=0.0)
    assert {r.signal_micros["context"] for r in rank(pool, previous, NOW)} == {0}


def test_the_default_before_context_keeps_its_digest() -> None:
    # rank/2026-12-01.1 as its receipts recorded it: no context weight.
    recorded = {
        "version": "rank/2026-12-01.1",
        "weights": {"similarity": "0", "lexical": "0.3", "rrf": "0.25",
                    "type_priority": "0.05", "confidence": "0.1", "recency": "0.05",
                    "validity": "0.05", "brevity": "0.3"},
        "type_priority": {"semantic": "0.9", "episodic": "0.7", "procedural": "1",
                          "working": "0.5"},
        "recency_half_life_days": "30", "validity_horizon_days": "7", "rrf_k": 60,
        "brevity_half_tokens": 256, "recency_reference": "newest",
    }  # fmt: skip
    old = RankingProfile.from_canonical(recorded)
    assert old.weights.context == 0
    assert old.canonical() == recorded
    assert old.digest == "sha256:9a6bd21eb77034cf92be6c470aa7faebf0d9c3bd66d51cdec51b703bb7dd494f"
