"""The rules extractor: what is a fact (and its claim key), what is not, and that the same
episodes always give the same facts."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gateway.core.extraction import RULES, Episode, extract

AT = datetime(2024, 3, 5, 14, 30, tzinfo=UTC)


def facts(text: str, role: str = "user") -> list[tuple[str | None, str]]:
    return [(f.claim_key, f.memory_type) for f in extract([Episode(("t1", "m1"), role, text, AT)])]


@pytest.mark.parametrize(
    ("text", "claim_key"),
    [
        ("My name is Ana Souza.", "user.name"),
        ("I work at Initech as a data analyst.", "user.employer"),
        ("I'm officially on the Fraud team now.", "user.team"),
        ("I'm on the Payments team. We own checkout.", "user.team"),
        ("I live in Tallinn and work remotely.", "user.location"),
        ("We moved to Denver last spring.", "user.location"),
        ("We're on the Starter plan, which caps us at 10 seats.", "account.plan"),
        ("We upgraded to the Business tier yesterday.", "account.plan"),
        ("My favorite tea is genmaicha.", "user.favorite_tea"),
        ("My all-time favorite show is The Expanse.", "user.favorite_show"),
        ("Severance is now my favorite show.", "user.favorite_show"),
        ("My go-to coffee order is an oat milk flat white.", "user.usual_coffee_order"),
        ("I have two cats, Mochi and Pimenta.", "count.cat"),
        ("So now it's three cats in a one-bedroom.", "count.cat"),
        ("I'm at 17 houseplants.", "count.houseplant"),
        ("My primary care doctor is Dr. Abernathy.", "user.primary_care_doctor"),
        ("Our monthly grocery budget is $650 for a family of four.", "user.monthly_grocery_budget"),
        ("We migrated staging to Postgres 17 on a managed instance.", "user.staging"),
        ("Tomorrow is my first 1:1 with my manager, Priya, since I joined.", "user.manager"),
        ("Roger retired, so I found a new accountant: Anjali Mehta.", "user.accountant"),
        ("Auto-renew is turned on so I don't lose it.", "auto_renew.state"),
        ("I turned off auto-renew on kestrelcraft.com.", "auto_renew.state"),
    ],
)
def test_single_valued_facts_carry_their_claim_key(text: str, claim_key: str) -> None:
    assert facts(text)[0] == (claim_key, "semantic")


@pytest.mark.parametrize(
    ("text", "memory_type"),
    [
        ("Always run the migrations before deploying.", "procedural"),
        ("Never deploy on Fridays.", "procedural"),
        ("To deploy, run make release from the main branch.", "procedural"),
        ("From now on, book me window seats.", "procedural"),
        ("We decided to keep the monolith for another year.", "semantic"),
        ("I sold my old bike last week.", "semantic"),
        ("I cancelled the gym membership.", "semantic"),
    ],
)
def test_rules_decisions_and_state_changes_are_facts_without_a_claim_key(
    text: str, memory_type: str
) -> None:
    assert facts(text) == [(None, memory_type)]


@pytest.mark.parametrize(
    "text",
    [
        "Maybe I'll switch to the Pro plan next year.",
        "I think my favorite show is Severance.",
        "I used to live in Boston.",
        "She said her team is moving to Berlin.",
        "My manager told me the plan might change.",
        "I'm not on the Payments team anymore.",
        "What is the best plan for us?",
        "I'm thinking about moving to Lisbon.",
        "If we upgraded to the Pro plan, would we get more seats?",
        "We're planning to migrate to ClickHouse.",
        "Any tips for keeping 14 houseplants alive?",
        "Thanks, that's really helpful.",
    ],
)
def test_questions_hedges_negations_and_reported_speech_are_not_facts(text: str) -> None:
    assert facts(text) == []


def test_only_an_assistant_confirmation_is_a_fact() -> None:
    confirmed = "Done. Your Tallyworks workspace is now on the Premium plan."
    assert facts(confirmed, role="assistant") == [("account.plan", "semantic")]
    assert facts("You're on the Premium plan, I believe.", role="assistant") == []
    assert facts("Your plan is Premium.", role="tool") == []


def test_a_fact_names_its_date_sources_and_validity() -> None:
    [fact] = extract([Episode(("turn-1", "mem-1"), "user", "My name is Ana Souza.", AT)])
    assert fact.content == "On 2024-03-05 the user said: My name is Ana Souza."
    assert fact.heading.startswith("user.name: ")
    assert fact.valid_from == AT and fact.sources == ("turn-1", "mem-1")
    assert fact.confidence == 0.9
    assert RULES[0] == "rules" and RULES[1]


def test_a_fact_knows_its_value_and_the_one_a_change_replaced() -> None:
    [count] = extract([Episode(("t",), "user", "I have two cats, Mochi and Pimenta.", AT)])
    assert (count.claim_key, count.value, count.previous) == ("count.cat", "two cats", None)
    text = "Finally did it: we moved CI from Jenkins to GitHub Actions, and it is quick."
    [change] = extract([Episode(("t",), "user", text, AT)])
    assert (change.claim_key, change.value, change.previous) == (
        "user.ci",
        "GitHub Actions",
        "Jenkins",
    )
    assert "Jenkins" not in change.content  # stated as what holds now
    [plan] = extract([Episode(("t",), "user", "We're on the Starter plan, 10 seats.", AT)])
    assert plan.value == "Starter"


def test_a_turn_gives_one_value_per_claim() -> None:
    text = "My name is Ana. My name is spelled with one n."
    assert [k for k, _ in facts(text)] == ["user.name"]


_sentences = st.sampled_from(
    [
        "My name is Ana Souza.",
        "I'm on the Fraud team now.",
        "Maybe later.",
        "I have three cats.",
        "Never deploy on Fridays.",
        "Done. Your plan is now Premium.",
        "What time is it?",
        "We decided to ship on Monday.",
    ]
)


@given(
    st.lists(
        st.tuples(st.sampled_from(["user", "assistant", "tool"]), st.lists(_sentences, max_size=4)),
        max_size=8,
    )
)
def test_the_output_is_a_function_of_the_episodes(raw: list[tuple[str, list[str]]]) -> None:
    episodes = [
        Episode((f"t{i}",), role, " ".join(parts), AT) for i, (role, parts) in enumerate(raw)
    ]
    first = extract(episodes)
    assert extract(list(episodes)) == first
    # Extraction is per episode: the facts of a prefix are a prefix of the facts.
    assert (
        extract(episodes[: len(episodes) // 2])
        == first[: len(extract(episodes[: len(episodes) // 2]))]
    )
