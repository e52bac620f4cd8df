"""The rules extractor of 2026-12-03.1 (the attribute table, still built for the jobs and
requests that name it): what is a fact (and its claim key), what is not, and that the same
episodes always give the same facts. Version 2026-12-05.1 keeps its non-facts
(`test_core_extraction_statements.py`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gateway.core.extraction import EXTRACTS, RULES, RULES_TABLE, Episode, Fact, Known

AT = datetime(2024, 3, 5, 14, 30, tzinfo=UTC)


def extract(episodes: Sequence[Episode], known: Iterable[Known] = ()) -> list[Fact]:
    return EXTRACTS[RULES_TABLE[1]](episodes, known, None)


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
        ("My go-to coffee order is an oat milk flat white.", "user.usual_order"),
        ("I have two cats, Mochi and Pimenta.", "count.cat"),
        ("So now it's three cats in a one-bedroom.", "count.cat"),
        ("I'm at 17 houseplants.", "count.houseplant"),
        ("My primary care doctor is Dr. Abernathy.", "user.primary_care_doctor"),
        ("Our monthly grocery budget is $650 for a family of four.", "user.grocery"),
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


def claims(text: str, role: str = "user") -> list[tuple[str | None, str | None]]:
    return [(f.claim_key, f.value) for f in extract([Episode(("t",), role, text, AT)])]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Amounts, rates, days and versions, keyed by the head of what they belong to.
        ("Base is $118,000, plus a signing bonus.", [("user.base", "$118,000")]),
        ("They came back! Final base is $126,500.", [("user.base", "$126,500")]),
        (
            "Venue is $6,400 with the deposit paid, catering budget is $9,000.",
            [("user.venue", "$6,400"), ("user.catering", "$9,000")],
        ),
        ("I just listed it on Marketplace for $14,900.", [("user.price", "$14,900")]),
        ("So I dropped the price to $13,750.", [("user.price", "$13,750")]),
        (
            "Our API is rate limited at 750 requests per minute.",
            [("rate.request_per_minute", "750")],
        ),
        ("Booked a dental cleaning for March 14 at 10:30.", [("user.cleaning", "March 14")]),
        ("They moved my cleaning to March 21.", [("user.cleaning", "March 21")]),
        ("We deploy the mobile backend every Tuesday at 14:00.", [("user.deploy", "Tuesday")]),
        (
            "My sister set her wedding date: September 20, in Kyoto!",
            [("user.wedding", "September 20")],
        ),
        ("With the wedding now on October 11, I need a plan.", [("user.wedding", "October 11")]),
        ("Leaving June 3 from Boston.", [("user.departure", "June 3")]),
        ("Staging is on Postgres 15 on a VM.", [("user.staging", "Postgres 15")]),
        ("Our primary database region is us-east-1.", [("user.database", "us-east-1")]),
        ("Our office is at 500 Harrison Street.", [("user.office", "Harrison Street")]),
        # Relations: roles, owners, where a named person lives, relationship states.
        (
            "Our building's property manager is Gareth Lyle.",
            [("user.property_manager", "Gareth Lyle")],
        ),
        ("My boyfriend Jonah and I are cooking.", [("user.partner", "Jonah")]),
        (
            "Escalations for the payments service go to Sven Eriksson.",
            [("user.escalation", "Sven Eriksson")],
        ),
        (
            "The notifications service is owned by Team Atlas.",
            [("notification.owner", "Team Atlas")],
        ),
        ("My sister Aoife lives in Melbourne.", [("aoife.location", "Melbourne")]),
        ("Aoife just started her new job in Auckland.", [("aoife.location", "Auckland")]),
        ("Daniel and I got engaged last night!!", [("user.relationship", "engaged")]),
        ("Update: my parents reconciled!", [("parent.relationship", "reconciled")]),
        ("I'm a contractor for Brightline.", [("user.employment", "contractor")]),
        (
            "Brightline made it official: they hired me full-time!",
            [("user.employment", "full-time")],
        ),
        ("I'm a backend engineer on the Payments team.", [("user.team", "Payments team")]),
        # States, keyed by the thing they are the state of (its name before a generic head).
        (
            "The new_checkout feature flag is disabled in production.",
            [("new_checkout.state", "disabled")],
        ),
        ("My seller account on Craftly got suspended.", [("craftly.state", "suspended")]),
        ("My Craftly account was reinstated this morning!!", [("craftly.state", "reinstated")]),
        (
            "Our house on Juniper Lane is officially on the market!",
            [("house.state", "on the market")],
        ),
        ("We took the house off the market last week.", [("house.state", "off the market")]),
        ("We paused the nightly ETL job that loads orders.", [("etl.state", "paused")]),
        # Places: moving a thing, moving in, where a thing is kept.
        (
            "I keep my kayak in my cousin's garage in Fremont.",
            [("user.kayak", "my cousin's garage")],
        ),
        ("I moved the kayak to a storage unit in Hayward.", [("user.kayak", "storage unit")]),
        ("We officially moved into the new Mission Bay office.", [("user.office", "Mission Bay")]),
        # Preferences and their changes.
        ("It's my favorite board game.", [("user.favorite_board_game", None)]),
        (
            "Noted: Wingspan is your new favorite board game.",
            [("user.favorite_board_game", "Wingspan")],
        ),
        ("It's my standard order now.", [("user.usual_order", None)]),
        ("I always want an aisle seat.", [("user.preferred_seat", "aisle seat")]),
        # Intentions: plans keyed by what they are for, what a thing moves to, what is learned.
        (
            "We're planning a two-week trip to Japan in October for our anniversary!",
            [("plan.anniversary", "Japan")],
        ),
        (
            "We're doing Portugal instead for the anniversary in October.",
            [("plan.anniversary", "Portugal")],
        ),
        (
            "Our plan is to migrate application logs off the vendor to a self-hosted "
            "Elasticsearch cluster.",
            [("plan.log", "Elasticsearch")],
        ),
        ("We're going with ClickHouse for logs instead.", [("plan.log", "ClickHouse")]),
        ("I'm going to learn Italian this year.", [("user.learning", "Italian")]),
        ("I'm learning Korean now.", [("user.learning", "Korean")]),
        # A question states its premise.
        ("Now that I'm in Pittsburgh, any good climbing gyms?", [("user.location", "Pittsburgh")]),
        ("Since I'm on the Gold HMO now, do I need a referral?", [("account.plan", "Gold HMO")]),
    ],
)
def test_pattern_families_give_an_original_and_its_update_one_claim_key(
    text: str, expected: list[tuple[str, str | None]]
) -> None:
    assert claims(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "The price isn't $14,900 anymore.",
        "Maybe the catering budget is $9,000.",
        "She said the wedding is now on October 11.",
        "I think staging is on Postgres 15.",
        "My parents aren't separated.",
        "We might be doing Portugal instead for the anniversary.",
        "I used to keep my kayak in Fremont.",
        "If the new_checkout flag is disabled, what breaks?",
        "Is the house on the market?",
        "According to the recruiter, base is $118,000.",
        "I'm not learning Korean.",
        "Could you book me window seats?",
    ],
)
def test_negated_hedged_reported_and_asked_statements_of_new_families_are_not_facts(
    text: str,
) -> None:
    assert claims(text) == []


def test_a_fact_states_its_own_clause_and_a_change_what_holds_now() -> None:
    text = "Fixed costs: rent is $1,850, my parking spot is $120 a month, and my phone is $45."
    contents = [f.content for f in extract([Episode(("t",), "user", text, AT)])]
    assert contents == [
        "On 2024-03-05 the user said: Rent is $1,850.",
        "On 2024-03-05 the user said: My parking spot is $120 a month.",
        "On 2024-03-05 the user said: And my phone is $45.",
    ]
    text = "OK, I admit it: Severance has overtaken The Expanse as my favorite show."
    [fact] = extract([Episode(("t",), "user", text, AT)])
    assert (fact.claim_key, fact.value, fact.previous) == (
        "user.favorite_show",
        "Severance",
        "Expanse",
    )
    assert "Expanse" not in fact.content
    text = "Dr. Abernathy retired, so I switched from VS Code to Neovim and I'm not going back."
    [fact] = extract([Episode(("t",), "user", text, AT)])
    assert (fact.value, fact.previous) == ("Neovim", "VS Code")
    assert "VS Code" not in fact.content and "Abernathy" not in fact.content


def test_an_assistant_turn_states_facts_from_its_confirmation_on() -> None:
    text = (
        "Glad the physical went well! I've updated your primary care doctor to Dr. Nakashima "
        "at Westside Family Medicine. Your dentist is still Dr. Osei."
    )
    assert claims(text, role="assistant") == [
        ("user.primary_care_doctor", "Dr. Nakashima"),
        ("user.dentist", "Dr. Osei"),
    ]
    assert claims("Your dentist is Dr. Osei. Glad it went well!", role="assistant") == []


def known_claims(text: str, known: list[Known]) -> list[tuple[str | None, str | None]]:
    return [(f.claim_key, f.value) for f in extract([Episode(("t",), "user", text, AT)], known)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Type lexicons: a value whose kind names its attribute.
        ("My Pixel keeps dying by 4pm.", [("user.phone_model", "Pixel")]),
        ("The iPhone camera is great.", [("user.phone_model", "iPhone")]),
        ("I finally switched to a Galaxy.", [("user.phone_model", "Galaxy")]),
        ("The Galaxy S24 battery is amazing.", [("user.phone_model", "Galaxy")]),
        ("My daughter got into UC Davis for animal science.", [("user.school", "UC Davis")]),
        (
            "Flights to Corvallis for move-in weekend at Oregon State.",
            [("user.school", "Oregon State")],
        ),
        ("He's enrolled at Carleton College.", [("user.school", "Carleton College")]),
        ("I got into the Chicago Marathon through the lottery!", [("user.marathon", "Chicago")]),
        ("I signed up for the Porto Half Marathon.", [("user.half_marathon", "Porto")]),
        (
            "I play center back for the Riverside Rovers in a Sunday league.",
            [("user.sports_team", "Riverside Rovers")],
        ),
        ("First match with Eastside Athletic today.", [("user.sports_team", "Eastside Athletic")]),
        ("I'm planning to apply to MBA programs this fall.", [("user.program", "MBA")]),
        (
            "First week of my data science bootcamp done.",
            [("user.program", "data science bootcamp")],
        ),
        # A role by the cue only it has: the manager's 1:1, the line one reports on.
        ("Post-reorg, my first 1:1 with Marcus was today.", [("user.manager", "Marcus")]),
        ("I now report to Dana Whitfield.", [("user.manager", "Dana Whitfield")]),
        # A partner is one slot: named by a role word, by a shared anniversary, ended by a
        # breakup.
        ("My girlfriend Ines loves hiking.", [("user.partner", "Ines")]),
        (
            "Tariq is taking me to a jazz club for our three-month anniversary.",
            [("user.partner", "Tariq")],
        ),
        ("Dinner with Leon tonight for our first anniversary.", [("user.partner", "Leon")]),
        ("Jonah and I broke up last month.", [("user.partner", "broke up")]),
        # A named place's state, its pronoun resolved within the sentence.
        (
            "My favorite bakery, Lindenhof, is closed for renovations.",
            [("lindenhof.state", "closed")],
        ),
        (
            "Grabbed a bun at Lindenhof this morning, the first time since they reopened.",
            [("lindenhof.state", "reopened")],
        ),
        (
            "Went to Blue Door today since they reopened.",
            [("blue_door.state", "reopened")],
        ),
        # A request to save a value, answered by the next sentence.
        (
            "Can you save my shipping address? 14 Elm Court, Apt 2, Raleigh, NC 27601.",
            [("user.address", "Elm Court")],
        ),
    ],
)
def test_values_named_by_their_kind_their_cue_or_the_sentence_before(
    text: str, expected: list[tuple[str, str | None]]
) -> None:
    assert claims(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "I don't have an iPhone.",
        "I just finished The Hitchhiker's Guide to the Galaxy.",
        "Is the iPhone camera better than the Pixel?",
        "Maybe I'll get a Pixel.",
        "She said the Pixel is great.",
        "I didn't get into UC Davis.",
        "I might transfer to Oregon State.",
        "I used to play for the Riverside Rovers.",
        "I'm not applying to MBA programs after all.",
        "Would a bootcamp be worth it?",
        "I haven't had a 1:1 with Marcus yet.",
        "Should I ask for a 1:1 with Marcus?",
        "Maybe Tariq will take me out for our anniversary.",
        "It was our anniversary last week.",
        "I think my favorite bakery, Lindenhof, is closed.",
        "Is Lindenhof open since they reopened?",
        "Can you save my shipping address?",
        "Can you save my shipping address? Which one do you have?",
        "I'm not running Berlin instead.",
    ],
)
def test_negated_hedged_reported_and_asked_values_by_kind_or_cue_are_not_facts(text: str) -> None:
    assert known_claims(text, [Known("user.marathon", "Chicago")]) == []


RENT = [Known("user.rent", "$1,850"), Known("user.spot", "$120"), Known("user.phone", "$45")]


@pytest.mark.parametrize(
    ("text", "known", "expected"),
    [
        # An amount with a cadence and without its noun updates the known amount nearest it.
        (
            "Now that I'm paying $1,975 a month, I need to cut back.",
            RENT,
            [("user.rent", "$1,975")],
        ),
        (
            "We're down to about $31,500 a month now.",
            [Known("user.aws", "$42,000")],
            [("user.aws", "$31,500")],
        ),
        ("Now that I'm paying $130 a month, ugh.", RENT, [("user.spot", "$130")]),
        # None near enough, none known, or a noun named after it: no fact.
        ("Now that I'm paying $3,100 a month, I need to cut back.", RENT, []),
        ("Now that I'm paying $1,975 a month, I need to cut back.", [], []),
        ("I'm paying $1,975 a month for the new studio.", RENT, []),
        ("Maybe I'm paying $1,975 a month.", RENT, []),
        # A race named without its kind replaces the race known.
        (
            "So I'm running Berlin instead!",
            [Known("user.marathon", "Chicago")],
            [("user.marathon", "Berlin")],
        ),
        ("So I'm running Berlin instead!", [Known("user.rent", "$1,850")], []),
        (
            "We're doing Portugal instead for the anniversary.",
            [Known("user.marathon", "Chicago")],
            [("plan.anniversary", "Portugal")],
        ),
    ],
)
def test_an_update_without_its_noun_is_resolved_against_the_known_claims(
    text: str, known: list[Known], expected: list[tuple[str, str | None]]
) -> None:
    assert known_claims(text, known) == expected


def test_the_claims_of_earlier_episodes_are_known_to_later_ones() -> None:
    episodes = [
        Episode(("t1",), "user", "Rent is $1,850.", AT),
        Episode(("t2",), "user", "Signed the renewal. Now I'm paying $1,975 a month.", AT),
    ]
    assert [(f.claim_key, f.value) for f in extract(episodes)] == [
        ("user.rent", "$1,850"),
        ("user.rent", "$1,975"),
    ]
