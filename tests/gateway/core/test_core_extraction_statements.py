"""The rules extractor of 2026-12-05.1: statements split into subject, attribute phrase and
typed value, resolved to one claim by similarity; traps kept apart by structure;
self-introductions, in more shapes from 2026-12-06.1, with the speaker's plan one claim; the
earlier versions still selectable and unchanged."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta

import pytest

from gateway.core.extraction import (
    EXTRACTS,
    RULES,
    RULES_CUES,
    RULES_STRUCTURE,
    RULES_TABLE,
    Episode,
    Fact,
    Known,
    extract,
)
from gateway.core.extraction.typed_values import says_nothing, typed_values
from tests.gateway.core import test_core_extraction as table_tests

AT = datetime(2024, 3, 5, 14, 30, tzinfo=UTC)


def pair(older: str, newer: str, role: str = "user") -> list[Fact]:
    return extract(
        [
            Episode(("t1",), "user", older, AT),
            Episode(("t2",), role, newer, AT + timedelta(days=30)),
        ]
    )


def claims(facts: list[Fact]) -> list[tuple[str, str | None, str | None]]:
    return [(f.sources[0], f.claim_key, f.value) for f in facts]


@pytest.mark.parametrize(
    ("older", "newer", "stale", "current"),
    [
        # The misses, and reworded kin of them (none of these is in the dev sets).
        ("My salary is $145,000 base.", "Got promoted, new base is $168,000.", "$145,000", "$168,000"),
        ("I weigh 185 pounds.", "Three months of training and I'm down to 172 pounds now.", "185 pounds", "172 pounds"),
        ("We have 3 engineers on the platform team.", "Two more engineers joined the platform team last week, we're at 5 now.", "3 engineers", "5 engineers"),
        ("Project Atlas is in 'Active' status.", "Project Atlas got suspended pending budget review.", "Active", "suspended"),
        ("I've run 40 miles this month.", "Up to 55 miles this month.", "40 miles", "55 miles"),
        ("I have read 12 books this year.", "I've now read 14 books this year!", "12 books", "14 books"),
        ("Our volleyball team is 3-2 so far.", "Our team, the Spikers, is doing well with a 5-2 record.", "3-2", "5-2"),
        ("I have a pottery class on Tuesdays.", "My pottery class moved, I have a pottery class on Thursdays now.", "Tuesdays", "Thursdays"),
        # A date that names when the newer value holds does not part it from the older one.
        ("My rent is $1,850.", "As of March 1st my rent is now $1,975.", "$1,850", "$1,975"),
        # A date of another stretch of the sentence is not this value's.
        ("I've tried two of Emma's recipes.", "We fished on 7/22; I've tried 3 of Emma's recipes so far.", "two of Emma's recipes", "3 of Emma's recipes"),
        # A count of part of a set, the set named or said before ("them").
        ("I've cooked 4 of the recipes in that book.", "I've now cooked 7 of the recipes in that book.", "4 of the recipes", "7 of the recipes"),
        # A definite thing's state, whatever place says which one it is.
        ("The gym near my office is closed for renovation.", "The gym near my office reopened on Monday!", "closed", "reopened"),
        ("Our coffee shop is closed for the winter.", "Our coffee shop is open again.", "closed", "open again"),
        # A goal in a later part of the sentence does not hedge the value stated before it.
        ("I weigh 185 pounds and I'd like to start lifting.", "Three months of training and I'm down to 172 pounds now.", "185 pounds", "172 pounds"),
        ("I bought a box of Lego sets, and I've built two of them.", "I've built 5 of my Lego sets so far.", "two of them", "5 of my Lego sets"),
        # Another sets the speaker's thing to a value: the value is the thing's; a date says
        # from when it holds.
        ("My rent is $1,850 a month for a one-bedroom.", "Got the renewal letter. They're bumping it to $1,975 starting March 1st, ugh.", "$1,850", "$1,975"),
        # A name's change that does not say of what: the kind of value the known claim holds.
        ("I'm on the Basic plan for my streaming service.", "Upgraded to Premium yesterday, the 4K was worth it.", "Basic", "Premium"),
        ("I'm on the Silver plan at my gym.", "I switched to Platinum for the pool access.", "Silver", "Platinum"),
        ("My dentist is Dr. Patel and she wants me to floss more.", "Switched dentists, I see Dr. Okafor now.", "Dr. Patel", "Dr. Okafor"),
        ("My doctor is Dr. Abernathy.", "I changed doctors, now I see Dr. Nakashima.", "Dr. Abernathy", "Dr. Nakashima"),
        ("I live in Austin and the summers are brutal.", "We just moved to Denver last month, much cooler here.", "Austin", "Denver"),
        ("I'm vegetarian, so no meat recipes please.", "I've started eating fish again, so I'm pescatarian now.", "vegetarian", "pescatarian"),
        ("I've gone vegan this year.", "Honestly I'm mostly keto now.", "vegan", "keto"),
    ],
)  # fmt: skip
def test_a_newer_statement_of_one_attribute_is_a_value_of_the_same_claim(
    older: str, newer: str, stale: str, current: str
) -> None:
    found = claims(pair(older, newer))
    first = [c for c in found if c[0] == "t1" and c[2] == stale]
    second = [c for c in found if c[0] == "t2" and c[2] == current]
    assert first and second, found
    assert first[0][1] == second[0][1]


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        # A narrower claim: another team's count is another claim.
        ("We have 3 engineers on the platform team.", "We have 2 engineers on the data team."),
        # A name before the noun narrows a count as a phrase after it does.
        ("I've completed 8 edX courses.", "I've completed 12 courses on Coursera."),
        ("I have 4 Python books.", "I have 6 books on Rust."),
        # Another thing counted of the same kind.
        ("I need 2 cups of flour.", "I need 3 cups of sugar."),
        # Someone else's value is not the user's.
        ("I weigh 185 pounds.", "My brother weighs 210 pounds."),
        ("I have two cats.", "My sister has 3 cats."),
        ("I have two cats.", "She has 3 cats."),
        # The attribute table reads a phrase, not whose it is: the structure says it.
        ("My salary is $145,000 base.", "My sister just got a raise, her base is $190,000 now."),
        ("My salary is $145,000 base.", "My sister just got a raise — her base is $190,000 now."),
        # A goal or a hypothetical states no value.
        ("I weigh 185 pounds.", "I want to get down to 170 pounds."),
        ("I weigh 185 pounds.", "If I keep this up I would be 170 pounds by June."),
        ("My salary is $145,000.", "Maybe they will offer $160,000."),
        # Values of two dated events are the events', not one value that changed.
        (
            "I caught 7 bass on my trip to the lake on 7/10.",
            "Back there on 7/22, we caught 9 bass that day.",
        ),
        ("On May 6th I sold 12 mugs at the market.", "I sold 9 mugs at the market on June 3."),
        # A count of part of a set is not how many there are.
        ("I have 4 dogs.", "I walked 2 of my dogs this morning."),
        ("We have 12 servers.", "We rebooted 3 of them last night."),
        # A second subject's state; an action on something is no state of the actor.
        (
            "The gym near my office is closed for renovation.",
            "The pool near my office reopened on Monday.",
        ),
        (
            "The gym near my office is closed for renovation.",
            "Our office reopened on Monday, but my manager approved my leave.",
        ),
        ("Project Atlas is in 'Active' status.", "Project Hermes got suspended last week."),
        # A name of a known claim's kind: someone else's, a hedge, a thing's, two at once.
        ("I'm on the Basic plan for my streaming service.", "My sister upgraded to Premium yesterday."),
        ("I'm on the Basic plan for my streaming service.", "I'm thinking of upgrading to Premium."),
        ("I'm on the Basic plan for my streaming service.", "I switched between Premium and Pro twice now."),
        ("I live in Austin and the summers are brutal.", "My brother just moved to Denver."),
        ("My dentist is Dr. Patel.", "My wife switched dentists, she sees Dr. Okafor now."),
        ("I'm vegetarian, so no meat recipes please.", "My wife is vegan now."),
        # The thing another sets is the speaker's only when no one else's is named before.
        ("My rent is $1,850 a month.", "My brother's landlord is raising it to $2,000 in May."),
        ("My rent is $1,850 a month.", "A friend of mine pays $2,300 for basically the same place."),
        # A bare name changes a person only where the sentence names the role.
        ("My manager is Priya.", "Marcus started a new project with us now."),
    ],
)  # fmt: skip
def test_traps_are_kept_apart_by_structure(older: str, newer: str) -> None:
    found = pair(older, newer)
    first = {f.claim_key for f in found if f.sources == ("t1",)}
    second = {f.claim_key for f in found if f.sources == ("t2",)}
    assert first, found
    assert not first & second, found


@pytest.mark.parametrize(
    ("text", "not_keyed"),
    [
        # Found on real conversation text (LongMemEval_S turns): phrasings the table read as a
        # claim of the user's that they do not state.
        ("I've been to the Grand Canyon with my family a few years ago.", "user.location"),
        ("I'm now in a much better mood about it.", "user.location"),
        ("Like I usually do on Sundays.", "user.usually"),
        ("Communication with my partner is definitely key.", "user.partner"),
        ("My skin type is combination.", "user.type"),
        ("We just moved to Denver last month.", "user.last"),
        ("My sister just got a raise, her base is $190,000 now.", "user.base"),
        # An employer is named capitalized.
        ("I work at home most days.", "user.employer"),
        # A prediction or an idea is no statement.
        ("My car is likely in good condition.", "user.car"),
        (
            "I'm thinking of booking a helicopter tour in Las Vegas for our anniversary.",
            "plan.anniversary",
        ),
    ],
)
def test_what_a_sentence_does_not_state_is_no_claim(text: str, not_keyed: str) -> None:
    assert not_keyed not in {f.claim_key for f in extract([Episode(("t1",), "user", text, AT)])}


def test_a_type_is_of_what_it_types() -> None:
    facts = extract([Episode(("t1",), "user", "My skin type is combination.", AT)])
    assert [(f.claim_key, f.value) for f in facts] == [("user.skin", "combination")]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Hi, I'm Bob Martinez from Acme Inc. Enterprise plan. I can't reset my password.",
            {"user.name": "Bob Martinez", "user.employer": "Acme Inc", "account.plan": "Enterprise"},
        ),
        ("Bob here, from Acme.", {"user.name": "Bob", "user.employer": "Acme"}),
        ("Hey, this is Dana at Northwind.", {"user.name": "Dana", "user.employer": "Northwind"}),
        (
            "Hi, Dana Lee, head of IT at Northwind.",
            {"user.name": "Dana Lee", "user.employer": "Northwind", "user.role": "head of IT"},
        ),
        ("I'm the IT admin at Globex.", {"user.role": "IT admin", "user.employer": "Globex"}),
        ("My name's Priya and we're on the Pro plan.", {"user.name": "Priya", "account.plan": "Pro"}),
        ("I work as a nurse.", {"user.role": "nurse"}),
        # From 2026-12-06.1: the organization before "here", a signature, where one works.
        ("Dana Scully from Umbrella Corp here.", {"user.name": "Dana Scully", "user.employer": "Umbrella Corp"}),
        ("Bob Martinez (Acme Inc.) here, quick question about invoices.", {"user.name": "Bob Martinez", "user.employer": "Acme Inc"}),
        ("Hello! Kenji Watanabe, product manager at Soylent Labs.", {"user.name": "Kenji Watanabe", "user.role": "product manager", "user.employer": "Soylent Labs"}),
        ("My name is Ana Ruiz and I work at Globex as the CFO.", {"user.name": "Ana Ruiz", "user.employer": "Globex", "user.role": "CFO"}),
        ("I work for Initech.", {"user.employer": "Initech"}),
    ],
)  # fmt: skip
def test_self_introductions_in_every_common_shape(text: str, expected: dict[str, str]) -> None:
    found = {f.claim_key: f.value for f in extract([Episode(("t1",), "user", text, AT)])}
    assert {k: found.get(k) for k in expected} == expected


_INTRODUCED_SINCE = [
    "Dana Scully from Umbrella Corp here.",
    "Bob Martinez (Acme Inc.) here, quick question about invoices.",
    "Hello! Kenji Watanabe, product manager at Soylent Labs.",
]


@pytest.mark.parametrize("text", _INTRODUCED_SINCE)
def test_the_earlier_version_reads_the_shapes_it_read(text: str) -> None:
    """2026-12-05.1 is kept as it was: a compile naming it gives what it gave."""
    episodes = [Episode(("t1",), "user", text, AT)]
    assert [f for f in EXTRACTS[RULES_STRUCTURE[1]](episodes, (), None) if f.claim_key] == []
    assert [f for f in EXTRACTS[RULES[1]](episodes, (), None) if f.claim_key]


def test_someone_of_the_speakers_in_apposition_introduces_no_one() -> None:
    text = "Hi, Alice Chen, my manager at Acme, asked me to write this."
    episodes = [Episode(("t1",), "user", text, AT)]
    assert not [f for f in extract(episodes) if f.claim_key in ("user.name", "user.role")]
    # The earlier reading took her for the speaker; kept so for what it compiled.
    earlier = {f.claim_key: f.value for f in EXTRACTS[RULES_STRUCTURE[1]](episodes, (), None)}
    assert earlier.get("user.name") == "Alice Chen" and earlier.get("user.role") == "my manager"


def test_the_speakers_plan_by_a_name_is_one_claim_however_it_is_said() -> None:
    found = claims(pair("Our plan is Business.", "We're on the Growth plan now."))
    assert found == [("t1", "account.plan", "Business"), ("t2", "account.plan", "Growth")]
    assert claims(pair("We're on the Growth plan.", "Our tier is Enterprise now.")) == [
        ("t1", "account.plan", "Growth"),
        ("t2", "account.plan", "Enterprise"),
    ]
    # A plan that is an intention is no account's plan.
    [intention] = extract([Episode(("t1",), "user", "Our plan is to migrate to Postgres.", AT)])
    assert intention.claim_key == "user.plan" and intention.heading.startswith("user.plan: ")
    [named] = extract([Episode(("t1",), "user", "Our plan is Business.", AT)])
    assert named.heading == "account.plan: Our plan is Business."


@pytest.mark.parametrize(
    "text",
    [
        "I'm not sure what to do.",
        "I'm looking for a new job.",
        "I'm thinking about Paris.",
        "It's Monday again.",
    ],
)
def test_phrases_like_an_introduction_introduce_no_one(text: str) -> None:
    found = extract([Episode(("t1",), "user", text, AT)])
    assert not [f for f in found if f.claim_key == "user.name"]


@pytest.mark.parametrize(
    "text",
    [
        "Ich wiege 85 Kilo und wohne seit 2019 in Berlin.",
        "Je pèse 80 kilos et mon salaire est de 3 000 €.",
        "私の給料は500万円です。体重は70キロです。",
        "Мне 35 лет, я живу в Москве.",
        "",
        "   ",
        "\u200b\u200b",
    ],
)
def test_text_in_other_languages_gives_no_facts_and_no_errors(text: str) -> None:
    assert extract([Episode(("t1",), "user", text, AT)]) == []


def test_the_assistant_confirms_a_value_addressing_the_user() -> None:
    found = claims(pair("I weigh 185 pounds.", "Noted: you're at 180 pounds now.", "assistant"))
    keys = {c[1] for c in found if c[0] == "t1"}
    assert any(c[0] == "t2" and c[1] in keys and c[2] == "180 pounds" for c in found), found


def test_a_known_claim_from_an_earlier_compile_is_resolved_by_its_dimension() -> None:
    known = [Known("user.weight", "185 pounds")]
    found = extract([Episode(("t9",), "user", "I'm down to 172 pounds now.", AT)], known)
    assert [(f.claim_key, f.value) for f in found] == [("user.weight", "172 pounds")]


def test_a_semantic_similarity_joins_phrases_that_share_no_word() -> None:
    money = [
        Episode(("t1",), "user", "My rent is $1,850.", AT),
        Episode(("t2",), "user", "My apartment costs $1,975.", AT + timedelta(days=30)),
    ]
    apart = {f.claim_key for f in extract(money)}
    joined = {f.claim_key for f in extract(money, (), lambda a, b: 0.8)}
    assert len(apart) == 2 and len(joined) == 1


def test_typed_values_and_their_dimensions() -> None:
    found = [
        (v.text, v.dimension)
        for v in typed_values("I weigh 185 pounds, paid $1,200.50 and we're 5-2 so far with 15 Crash Course videos")
    ]  # fmt: skip
    assert found == [
        ("185 pounds", "weight"),
        ("$1,200.50", "money"),
        ("5-2", "record"),
        ("15 Crash Course videos", "count_video"),
    ]


def test_a_partitive_counts_the_noun_of_its_set() -> None:
    found = [
        (v.text, v.dimension, v.partitive)
        for v in typed_values("I've tried 3 of Emma's recipes and 2 of the cakes, and 4 plants")
    ]
    assert found == [
        ("3 of Emma's recipes", "count_recip", True),
        ("2 of the cakes", "count_cak", True),
        ("4 plants", "count_plant", False),
    ]
    # "Of them" counts what was said before it, and nothing when nothing plural was.
    assert [(v.text, v.dimension) for v in typed_values("read 2 of them", "I got new books")] == [
        ("2 of them", "count_book")
    ]
    assert typed_values("I liked 2 of them", "She cooks well") == []


def test_every_version_is_kept_and_the_newest_is_the_default() -> None:
    assert RULES == ("rules", "2026-12-06.2") and RULES_CUES == ("rules", "2026-12-06.1")
    assert RULES_STRUCTURE == ("rules", "2026-12-05.1") and RULES_TABLE == ("rules", "2026-12-03.1")
    assert list(EXTRACTS) == [RULES_TABLE[1], RULES_STRUCTURE[1], RULES_CUES[1], RULES[1]]
    episodes = [Episode(("t1",), "user", "I weigh 185 pounds.", AT)]
    assert EXTRACTS[RULES_TABLE[1]](episodes, (), None) == []
    for version in (RULES_STRUCTURE[1], RULES_CUES[1], RULES[1]):
        assert [f.claim_key for f in EXTRACTS[version](episodes, (), None)] == ["user.weight_weigh"]


def test_the_earlier_versions_give_the_facts_they_gave() -> None:
    """Pinned: what 2026-12-06.1, 2026-12-05.1 and 2026-12-03.1 compile of the sample, introductions and
    plans included, byte for byte (a stored job naming one runs with it)."""
    episodes = [
        Episode((f"t{i}",), "user", text, AT + timedelta(days=i))
        for i, text in enumerate([*_SAMPLE, *_INTRODUCED_SINCE, "Our plan is Business.", "Hi, Alice Chen, my manager at Acme, asked me.", *_SIGNED_SINCE])
    ]  # fmt: skip
    digests = {
        version: hashlib.sha256(
            json.dumps(
                [[f.claim_key, f.value, f.heading, f.content, f.confidence] for f in EXTRACTS[version](episodes, (), None)]
            ).encode()
        ).hexdigest()[:16]
        for version in (RULES_TABLE[1], RULES_STRUCTURE[1], RULES_CUES[1])
    }  # fmt: skip
    assert digests == PINNED_EARLIER


# Computed on the tree before 2026-12-06.2 (the sample's last ten turns added then; the first
# two digests of the shorter sample held there too).
PINNED_EARLIER = {
    "2026-12-03.1": "186b68f85e7600fb",
    "2026-12-05.1": "d5bae7f71ccbd0ba",
    "2026-12-06.1": "30e1f01d99a3e013",
}
# What 2026-12-06.2 reads and 2026-12-06.1 does not (or reads otherwise): in the pinned sample.
_SIGNED_SINCE = [
    "Hi, could I get a second monitor? Thanks!\nPriya Raman, AP Clerk",
    "The export fails.\n\nKind regards,\nTom Okafor\nExecutive Assistant to the CFO\nBrightwater Foods",
    "Any update on ticket 4? Thanks, Imogen Blackwood, IT lead, Harrowgate Council",
    "hey there, Yuki Tanaka, UX researcher at Fernhill Labs. Can you help?",
    "Yo, saw your booth at RetailTech. Price?",
    "I am Mr. Horace Whitfield and I dispute a charge.",
    "It's Kenji 🙂 remind me what I said.",
    "we're on Starter and I can only add 3 users",
    "Someone wrote 'I'm the admin at Caldera Group and this fixed it'.",
    "I'm the only developer at a small nonprofit (Open Harbor Legal Aid).",
]
_SAMPLE = [
    "Hi, I'm Bob Martinez from Acme Inc. Enterprise plan.",
    "I weigh 185 pounds and my salary is $145,000.",
    "We have 3 engineers on the platform team.",
    "Two more engineers joined the platform team, we're at 5 now.",
    "Project Atlas got suspended pending budget review.",
    "I love Emma's recipes and I've tried two of them; I caught 7 bass on 7/10.",
    "I've tried 3 of Emma's recipes so far, and we caught 9 bass on July 22nd.",
]


def _facts_json() -> str:
    episodes = [
        Episode((f"t{i}",), "user", text, AT + timedelta(days=i)) for i, text in enumerate(_SAMPLE)
    ]
    return json.dumps([[f.claim_key, f.value, f.heading, f.content] for f in extract(episodes)])


def test_the_same_input_gives_the_same_facts_across_processes() -> None:
    script = (
        "from tests.gateway.core.test_core_extraction_statements import _facts_json;"
        "print(_facts_json())"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", script],
            capture_output=True,
            text=True,
            check=True,
            env=os.environ | {"PYTHONHASHSEED": seed},
        ).stdout.strip()
        for seed in ("1", "2")
    }
    assert outputs == {_facts_json()}


def _cases(test: object) -> list[object]:
    marks = [m for m in getattr(test, "pytestmark", []) if m.name == "parametrize"]
    return list(marks[0].args[1])


# The table's non-facts (questions, hedges, negations, reported speech, each family's): the
# statements of 2026-12-05.1 must not turn any of them into a fact either.
NON_FACTS = [
    *_cases(table_tests.test_questions_hedges_negations_and_reported_speech_are_not_facts),
    *_cases(table_tests.test_negated_hedged_reported_and_asked_statements_of_new_families_are_not_facts),
    *_cases(table_tests.test_negated_hedged_reported_and_asked_values_by_kind_or_cue_are_not_facts),
]  # fmt: skip


@pytest.mark.parametrize("text", NON_FACTS)
def test_the_tables_non_facts_stay_non_facts(text: str) -> None:
    assert extract([Episode(("t1",), "user", text, AT)]) == []


@pytest.mark.parametrize(
    ("text", "claim_key"),
    _cases(table_tests.test_single_valued_facts_carry_their_claim_key),
)
def test_the_tables_claims_keep_their_keys(text: str, claim_key: str) -> None:
    assert extract([Episode(("t1",), "user", text, AT)])[0].claim_key == claim_key


def test_an_embedder_gives_the_phrase_similarity() -> None:
    from gateway.embedding import HashEmbedder
    from gateway.usecases.compiling.extractors import embedder_similarity

    similar = embedder_similarity(HashEmbedder())
    assert similar("salary base", "salary base") == pytest.approx(1.0, abs=1e-6)
    assert similar("salary base", "weekend hike") < 0.5


@pytest.mark.parametrize(
    "text",
    [
        "Hi, I'm " + "Bob " * 15000 + "from Acme",
        "my rent is " + "$1,000 " * 8000,
        "I'm " + "O'Brien's " * 6000,
        ". ".join(["My rent is $1,000 and the fee is $20, with 3 cats"] * 1000),
        "1 " * 30000,
    ],
)
def test_long_hostile_turns_take_no_long_time(text: str) -> None:
    import time

    started = time.perf_counter()
    extract([Episode(("t1",), "user", text, AT)])
    assert time.perf_counter() - started < 5


def test_a_value_of_function_words_alone_says_nothing() -> None:
    """Neither a fact's value nor a stale value whose turns compile retires: "I" is said by
    nearly every turn (one read as an account plan once retired 6,736 turns)."""
    for nothing in ("I", "still", "few", "both", "the"):
        assert says_nothing(nothing), nothing
    for something in ("Pro Plus", "30", "the Starter plan", "iPhone"):
        assert not says_nothing(something), something


def test_a_change_without_a_claim_is_the_speakers_only() -> None:
    def changes(text: str) -> list[str]:
        return [f.heading for f in extract([Episode(("t1",), "user", text, AT)])]

    assert changes("I switched to the night shift.") == ["state: I switched to the night shift."]
    assert changes("We moved to a bigger place last spring.") != []
    # Someone else's move is no state of the user's (it would retire the user's own).
    assert changes("My brother just moved to Raleigh for a new job.") == []
    assert changes("She switched to decaf after the holidays.") == []
