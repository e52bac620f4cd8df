"""The defence read from the question's side (issue 33): the kind of value a question asks for,
the sentences that answer it, and which remembered turn states the current answer; questions
that ask for more than the current value, and turns about another thing, decide nothing."""

from __future__ import annotations

import dataclasses

import pytest

from gateway.core.asked_values import Asked, asked
from gateway.core.current_values import earlier_values
from gateway.core.extraction.asked_shapes import ordinal_counts, places, time_spans
from gateway.core.extraction.typed_values import typed_values
from gateway.core.model import Candidate
from gateway.core.turn_answers import said
from tests.gateway.core.core_samples import memory
from tests.gateway.core.test_core_current_values import turn


@pytest.mark.parametrize(
    ("question", "kind", "stems"),
    [
        ("How long have I had my cat, Luna?", "duration", {"cat", "luna"}),
        ("How much time do I dedicate to coding exercises each day?", "duration", None),
        ("How often do I attend yoga classes?", "frequency", None),
        ("How many followers do I have on Instagram now?", "count", {"follower", "instagram"}),
        ("How much did I earn at the farmers market on my most recent visit?", "money", None),
        ("What was my personal best time in the charity 5K run?", "elapsed", None),
        ("How much do I weigh?", "amount", None),
        ("What time do I usually go to the gym?", "clock", None),
        ("What day of the week is my cocktail class?", "day", None),
        ("When is my thesis defense?", "when", None),
        ("What is my current record in the volleyball league?", "record", None),
        ("Where is the painting 'Ethereal Dreams' hanging now?", "place", None),
        ("How many projects have I completed since I started?", "count", None),
    ],
)
def test_a_question_names_the_kind_of_value_and_what_of(
    question: str, kind: str, stems: set[str] | None
) -> None:
    read = asked(question)
    assert read is not None and read.kind == kind
    if stems is not None:
        assert read.stems == stems
    # The words that ask ("how", "many", "current", "now") are not the attribute.
    assert not read.stems & {"how", "many", "current", "now", "recent"}


@pytest.mark.parametrize(
    "question",
    [
        "How many books did I read in total this year?",  # a sum
        "How much did my rent increase?",  # a comparison
        "How many followers did I have before the campaign?",  # what held before
        "What was my previous personal best time?",
        "How many more stars do I need than last month?",
        # A past event: two values said of it at two times may both hold.
        "How much did I save on the Jimmy Choo heels?",
        "What time did I reach the clinic on Monday?",
        "How long had I been using the new rug when I rearranged the furniture?",
        "What was the amount I was pre-approved for?",
        "How many years older am I than when I graduated?",
        "How many months have passed since I last visited a museum?",
        "Which city do I live in now?",  # a name: not read this way
        "Who is my accountant?",
        "Tell me about my cat.",  # no question of these shapes
    ],
)
def test_a_question_that_asks_for_more_than_the_current_value_is_not_read(question: str) -> None:
    assert asked(question) is None


def test_the_last_question_of_a_task_is_read() -> None:
    # A session step asks with its pinned task and the user's last turn.
    task = "Chat with the user.\nThanks! By the way, how long have I had my cat Luna?"
    assert asked(task) == Asked("duration", frozenset({"cat", "luna"}))
    both = "How many books did I read in total? Also, how many cats do I have now?"
    assert asked(both) == Asked("count", frozenset({"cat"}))
    # A guard anywhere in the question's sentence holds for its every clause.
    assert asked("In total, how many books have I read?") is None
    assert asked("Chat with the user.\nHelp me plan a trip to Lisbon.") is None


def test_spans_of_time_are_values_of_their_own_kinds() -> None:
    spans = time_spans("I've had Luna for about 6 months now, I walk her twice a week.")
    assert [(v.text, v.dimension, v.size) for v in spans] == [
        ("6 months", "duration", 180.0),
        ("twice a week", "frequency", 2.0),
    ]
    assert time_spans("an hour and a half")[0].size == pytest.approx(1.5 / 24)
    assert time_spans("one and a half hours")[0].size == pytest.approx(1.5 / 24)
    assert [v.size for v in time_spans("every other day, three times a week, daily")] == [
        3.5,
        3.0,
        7.0,
    ]
    # A race time; a clock time is not one.
    assert [(v.text, v.dimension) for v in time_spans("I ran 25:50, at 7:30 pm")] == [
        ("25:50", "elapsed")
    ]
    # The statements' typed values leave spans of time out: they are read only when asked for.
    assert typed_values("I've had Luna for about 6 months now") == []


def test_ordinals_count_what_they_number_and_places_are_where() -> None:
    found = ordinal_counts("I just finished my 5th project, the 10th time I tried; on May 5th.")
    assert [(v.text, v.dimension, v.size) for v in found] == [
        ("5th project", "count_project", 5.0),
        ("10th time", "times", 10.0),
    ]
    spots = places("I moved it above my bed, after our trip to Paris; born in 1990.")
    assert [(v.text, v.dimension) for v in spots] == [("above my bed", "place"), ("Paris", "place")]
    # Both only when a question asks: a statement's typed values hold neither.
    assert typed_values("I am on my 5th project above my bed") == []


def test_money_before_a_comma_is_money() -> None:
    found = typed_values("Catering is $9,000, photographer is $3,200.")
    assert [(v.text, v.size) for v in found] == [("$9,000", 9000.0), ("$3,200", 3200.0)]


def test_a_sentence_answers_with_the_share_of_the_attribute_it_says() -> None:
    question = asked("How long have I had my cat, Luna?")
    assert question == Asked("duration", frozenset({"cat", "luna"}))
    text = "I've had Luna for about 6 months now. My commute takes an hour."
    assert [(s.value.text, s.anchor) for s in said(question, text, "user")] == [("6 months", 0.5)]
    assert question.claim == "duration: cat luna"
    assert question.touches("Luna loves her new toy") and not question.touches("My dog Rex")


LUNA = "How long have I had my cat, Luna?"


def decided(
    question: str,
    *turns: object,
    names: bool = False,
    statements: bool = False,
    updates: bool = False,
) -> list[tuple[str, str, str, str]]:
    read = asked(question, names=names, statements=statements, updates=updates)
    return [
        (d.current, d.earlier, d.rule, d.claim_key)
        for d in earlier_values(turns, question=read)  # type: ignore[arg-type]
    ]


def test_the_users_newest_answer_is_current_and_the_older_left_out() -> None:
    older = turn("a", "I've had Luna for about 6 months now and she's settled in.", 100)
    newer = turn("b", "Luna is doing great, I've had her for about 9 months now.", 10)
    assert decided(LUNA, older, newer) == [("b", "a", "asked_value", "duration: cat luna")]
    assert decided(LUNA, newer, older) == decided(LUNA, older, newer)
    # Without the question the claims alone decide, and they cannot read "had": nothing.
    assert earlier_values([older, newer]) == ()


def test_the_assistants_echo_of_an_earlier_value_goes_with_it() -> None:
    older = turn("a", "I've had Luna for about 6 months now.", 100)
    echo = turn(
        "b", "Six months with Luna already! At about 6 months cats...", 99, role="assistant"
    )
    newer = turn("c", "I've had Luna for 9 months now.", 10)
    assert {d[1] for d in decided(LUNA, older, echo, newer)} == {"a", "b"}


def test_what_does_not_answer_the_same_question_stays() -> None:
    older = turn("a", "I've had Luna for about 6 months now.", 100)
    # The assistant's value is never the current one: its suggestion is not what holds.
    suggestion = turn("b", "You could try keeping Luna indoors for 2 weeks.", 10, role="assistant")
    assert decided(LUNA, older, suggestion) == []
    # A newer answer of the same value is no change; one naming it too shows the change.
    same = turn("c", "Luna and I, six months together now!", 10)
    assert decided(LUNA, older, same) == []
    # A sentence about another thing, with a value of the same kind, answers nothing.
    other = turn("d", "I've been running for 3 months now.", 10)
    assert decided(LUNA, older, other) == []
    # Another kind of value ("how long" asks for a span of time, not a count).
    count = turn("e", "Luna has 2 toys now.", 10)
    assert decided(LUNA, older, count) == []


def test_counts_are_compared_only_of_one_noun() -> None:
    question = "How many followers do I have on Instagram now?"
    older = turn("a", "I just passed 1250 followers on Instagram!", 50)
    newer = turn("b", "My Instagram is at 1300 followers now.", 5)
    posts = turn("c", "I posted 12 photos on Instagram this week.", 3)
    assert [d[:2] for d in decided(question, older, newer)] == [("b", "a")]
    # The photo count is another noun: nothing is compared with it, and it hides nothing.
    assert decided(question, older, posts) == []
    assert [d[:2] for d in decided(question, older, newer, posts)] == [("b", "a")]


def test_a_turn_holding_the_claim_the_question_decides_is_not_kept_by_it() -> None:
    # The extractor reads "completed 4 projects" as a claim whose newest value this turn holds;
    # the question decides that very claim, so holding it keeps the turn no longer.
    question = "How many projects have I completed since starting painting classes?"
    older = turn("a", "I've completed 4 projects since starting painting classes.", 50)
    newer = turn("b", "I just finished my 5th project since starting painting classes!", 5)
    assert [d[:3] for d in decided(question, older, newer)] == [("b", "a", "asked_value")]
    # A turn holding another claim's current value stays (the rent, not the projects).
    rent = turn(
        "c",
        "My monthly rent is $1,850. I've completed 4 projects since starting painting classes.",
        40,
    )
    assert [d[1] for d in decided(question, rent, newer)] == []


def compiled(memory_id: str, heading: str, content: str) -> Candidate:
    """A memory compile wrote: a fact quoting a statement, a session's digest."""
    return dataclasses.replace(
        memory(memory_id, heading=heading, content=content, created_days_ago=1),
        source_type="compile",
    )


def test_what_compile_made_of_an_earlier_statement_goes_with_it() -> None:
    question = "How many projects have I completed since starting painting classes?"
    older = turn("a", "I've completed 4 projects since starting painting classes.", 50)
    newer = turn("b", "I just finished my 5th project since starting painting classes!", 5)
    fact = compiled(
        "f",
        "user.count_project_complet",
        "On 2026-10-10 the user said: I've completed 4 projects since starting painting classes",
    )
    digest = compiled(
        "g",
        "Session digest, 2026-10-10 to 2026-10-10",
        "- t3 user: I've completed 4 projects since starting painting classes.",
    )
    assert {d[1] for d in decided(question, older, newer, fact, digest)} == {"a", "f", "g"}
    # One that names the current value too, or says its statements after the current one was
    # written, or says no day, stays.
    both = compiled(
        "h", "Session digest, 2026-10-10 to 2026-11-28", "- 4 projects, now my 5th project"
    )
    later = compiled("i", "Session digest, 2026-11-28 to 2026-11-28", "- t1 user: 4 projects done")
    undated = compiled("j", "user.count_project", "The user completed 4 projects")
    assert {d[1] for d in decided(question, older, newer, both, later, undated)} == {"a"}
    # A day that is no day is none.
    broken = compiled("k", "Session digest, 2026-13-45 to 2026-13-45", "- 4 projects")
    assert {d[1] for d in decided(question, older, newer, broken)} == {"a"}


def test_a_value_someone_else_holds_answers_nothing_of_the_users_own() -> None:
    question = "What is my base salary?"
    mine = turn("a", "My salary is $145,000 base.", 100)
    sisters = turn("b", "My sister just got a raise, her base is $190,000 now.", 10)
    assert decided(question, mine, sisters) == []
    read = asked(question)
    assert read is not None and not read.of_another
    assert said(read, "My sister just got a raise, her base is $190,000 now.", "user") == []
    # A question of the other person's reads their values.
    of_hers = asked("What is my sister's base salary now?")
    assert of_hers is not None and of_hers.of_another
    text = "My sister just got a raise, her base is $190,000 now."
    assert [s.value.text for s in said(of_hers, text, "user")] == ["$190,000"]
    # A person opening the clause holds its value; one after the verb is its object.
    rent = asked("How much am I paying in rent each month now?")
    assert rent is not None
    friends = "A friend of mine pays $2,300 for basically the same place across town."
    assert said(rent, friends, "user") == []
    assert decided(rent_question := "How much is my rent each month now?", turn("a", "My rent is $1,850 a month.", 100), turn("b", friends, 10)) == []  # fmt: skip
    assert asked(rent_question) is not None
    coach = asked("How much do I pay my coach each month?")
    assert coach is not None
    assert [s.value.text for s in said(coach, "I pay the coach $150 each month.", "user")] == [
        "$150"
    ]
    # A name's possessive, and one of the speaker's people however named ("my labmate").
    defense = asked("When is my dissertation defense?")
    assert defense is not None
    yusufs = "my labmate Yusuf's defense is June 11 and he asked me to help him prepare."
    assert said(defense, yusufs, "user") == []
    assert said(defense, "my labmate's defense is June 11.", "user") == []
    estimate = asked("How much is my estimate for the deck now?")
    assert estimate is not None  # "my estimate" is no one's but the speaker's
    assert [s.value.text for s in said(estimate, "My estimate is $500 for the deck.", "user")] == [
        "$500"
    ]
    assert [s.value.text for s in said(defense, "my defense is June 24 now.", "user")] == [
        "June 24"
    ]
    # A name as the question's subject: asked of another, whose values answer it.
    moose = asked("How much does Moose weigh now?")
    assert moose is not None and moose.of_another
    update = "Moose weigh-in update: he's down to 57 pounds!! the vet tech cheered."
    assert [s.value.text for s in said(moose, update, "user")] == ["57 pounds"]
    # "Her" as the object of the user's sentence is not someone else's value.
    luna = asked(LUNA)
    assert luna is not None
    assert [s.value.text for s in said(luna, "I've had her for 9 months, Luna.", "user")] == [
        "9 months"
    ]


def test_a_question_that_sums_decides_nothing() -> None:
    older = turn("a", "I read 4 books in March.", 50)
    newer = turn("b", "I read 3 books in April.", 5)
    assert decided("How many books did I read in total?", older, newer) == []
