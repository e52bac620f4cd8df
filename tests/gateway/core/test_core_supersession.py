"""The supersession rules: claim keys order by valid_from, created_at, id; one instant with two
texts is a conflict; the similarity fallback within one type, its threshold and its narrowing
guard."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from gateway.core.supersession import (
    CLAIM_KEY,
    Claimant,
    Conflict,
    Decision,
    jaccard,
    judge_claim,
    judge_similar,
    mentions,
    narrows,
    stale_phrases,
    states,
    words,
)

T0 = datetime(2024, 1, 1, tzinfo=UTC)


def fact(
    memory_id: str,
    text: str,
    *,
    day: int | None = 0,
    written: int = 0,
    claim_key: str | None = "account.plan",
    memory_type: str = "semantic",
) -> Claimant:
    return Claimant(
        memory_id=memory_id,
        memory_type=memory_type,
        text=text,
        claim_key=claim_key,
        valid_from=None if day is None else T0 + timedelta(days=day),
        created_at=T0 + timedelta(days=30, seconds=written),
        content_sha256=f"sha-{text}",
    )


def test_the_newest_valid_from_wins_whatever_the_write_order() -> None:
    old = fact("B", "Pro", day=1)
    new = fact("A", "Enterprise", day=5)  # a smaller id, written earlier: valid_from decides
    assert judge_claim(new, [old]).decisions == (Decision("B", "A", "claim_key", "account.plan"),)
    # A back-dated import is itself the one superseded.
    late_import = fact("C", "Starter", day=0, written=99)
    judged = judge_claim(late_import, [new])
    assert judged.decisions == (Decision("C", "A", "claim_key", "account.plan"),)


def test_created_at_then_id_order_facts_without_a_validity() -> None:
    first = fact("Z", "Pro", day=None, written=1)
    second = fact("A", "Enterprise", day=None, written=2)
    assert judge_claim(second, [first]).decisions[0] == Decision(
        "Z", "A", "claim_key", "account.plan"
    )


def test_one_instant_with_two_texts_is_a_conflict_and_both_stay() -> None:
    a = fact("A", "Pro", day=3)
    b = fact("B", "Enterprise", day=3, written=5)
    judged = judge_claim(b, [a])
    assert judged.decisions == ()
    assert judged.conflicts == (Conflict("A", "B", "account.plan"),)
    # The same text at the same instant is one fact said twice: the later copy stands.
    same = fact("C", "Pro", day=3, written=9)
    assert judge_claim(same, [a]).decisions == (Decision("A", "C", "claim_key", "account.plan"),)


def test_a_newer_fact_supersedes_every_older_live_one() -> None:
    live = [fact("A", "Pro", day=1), fact("B", "Team", day=2)]
    judged = judge_claim(fact("C", "Enterprise", day=3), live)
    assert [d.older for d in judged.decisions] == ["A", "B"]
    assert {d.newer for d in judged.decisions} == {"C"}


def test_similarity_supersedes_a_near_identical_older_fact_of_the_same_type() -> None:
    old = fact("A", "Deploys go out every Tuesday at 14:00 UTC", day=1, claim_key=None)
    new = fact("B", "Deploys go out every Thursday at 14:00 UTC", day=9, claim_key=None)
    [decision] = judge_similar(new, [old], 0.6).decisions
    assert (decision.older, decision.newer, decision.rule) == ("A", "B", "similarity")
    assert decision.score is not None and 0.6 <= decision.score < 1
    assert decision.threshold == 0.6
    assert judge_similar(new, [old], 0.9).decisions == ()
    other_type = fact("C", old.text, day=1, claim_key=None, memory_type="procedural")
    assert judge_similar(new, [other_type], 0.6).decisions == ()


def test_a_newer_text_that_only_narrows_does_not_supersede() -> None:
    old = fact("A", "The user lives in Ohio", day=1, claim_key=None)
    new = fact("B", "The user lives in Columbus Ohio", day=5, claim_key=None)
    assert narrows(words(old.text), words(new.text))
    assert judge_similar(new, [old], 0.6).decisions == ()


def test_an_older_arrival_is_superseded_by_the_live_newer_one() -> None:
    live = fact("B", "Deploys go out every Thursday at 14:00 UTC", day=9, claim_key=None)
    late = fact("A", "Deploys go out every Tuesday at 14:00 UTC", day=1, claim_key=None)
    [decision] = judge_similar(late, [live], 0.6).decisions
    assert (decision.older, decision.newer) == ("A", "B")


def test_word_sets_ignore_dates_and_case() -> None:
    assert words("On 2024-01-02 the user said: Hi") == words("on 2025-12-31 THE user said hi")
    assert jaccard(frozenset(), frozenset()) == 1.0
    assert jaccard(frozenset({"a", "b"}), frozenset({"b", "c"})) == 1 / 3


def test_claim_keys_are_lowercase_dotted_names_of_at_most_64_characters() -> None:
    for good in ("user.employer", "account.plan", "a", "x" * 64, "count.cat_2"):
        assert CLAIM_KEY.match(good), good
    for bad in ("", "User.plan", "1plan", "plan-key", "plan key", "x" * 65, ".plan"):
        assert not CLAIM_KEY.match(bad), bad


def test_a_stale_value_is_recognized_in_its_spelled_variants_and_by_a_given_name() -> None:
    assert mentions("Their Slack channel is #team-atlas.", "Team Atlas")
    assert not mentions("Product launch", "Pro")
    assert stale_phrases("Sven Eriksson") == ("Sven Eriksson", "Sven")
    assert stale_phrases("Dr. Abernathy") == ("Dr. Abernathy", "Abernathy")
    assert stale_phrases("Team Atlas") == ("Team Atlas",)  # a group is not called "Team"
    assert stale_phrases("us-east-1") == ("us-east-1",)
    assert states("We escalated to Sven after 15 minutes.", "Sven", "Sven Eriksson", "user.x")
    assert not states("the sven hot tub", "Sven", "Sven Eriksson", "user.x")


def test_a_state_word_is_stale_only_beside_its_subject() -> None:
    said = "QA found a bug in new_checkout, so it stays disabled in prod."
    assert states(said, "disabled", "disabled", "new_checkout.state")
    assert not states("The dark mode is disabled.", "disabled", "disabled", "new_checkout.state")
    # A name is specific by itself; the speaker's own claims need no subject.
    assert states("Ask Team Atlas.", "Team Atlas", "Team Atlas", "notification.owner")
    assert states("Rent is $1,850.", "$1,850", "$1,850", "user.rent")
