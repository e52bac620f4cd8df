"""The defence read from a question that asks which or who (issue 33, `assemble/2026-12-05.3`):
the names a sentence states, and which remembered turn names the current one. A name has no
dimension, so the newer turn must say a change; a name the question says, someone else's name
and a newer mention without a change decide nothing."""

from __future__ import annotations

import pytest

from gateway.core.asked_values import asked
from gateway.core.current_values import earlier_values
from gateway.core.extraction.asked_shapes import proper_names
from gateway.core.turn_answers import said
from gateway.core.versions import ASKED, ASSEMBLER
from tests.gateway.core.test_core_asked_values import decided as decided_by
from tests.gateway.core.test_core_current_values import turn


@pytest.mark.parametrize(
    ("sentence", "names"),
    [
        ("We signed up with Northwind Fiber last month.", ["Northwind Fiber"]),
        ("I drive a Kia EV6 now, the Corolla is gone.", ["Kia EV6", "Corolla"]),
        ("I'm getting a Rivian R1S 2 next spring.", ["Rivian R1S 2"]),  # a model number closes it
        ("My appointment is with Dr. Haldane at Elm Clinic.", ["Dr. Haldane", "Elm Clinic"]),
        ("Haldane's office called: the clinic moved.", []),  # one word opening a sentence
        ("then Haldane's office called me back.", ["Haldane"]),  # a possessive is cut
        ("So Imogen took over the lease.", ["Imogen"]),  # "So" opens it, it names nothing
        ("The Quiet Hours play Friday in April.", ["Quiet Hours"]),  # days and months are not
        ("WE GOT THE HOUSE ON ALDER STREET!!", []),  # shouted, not named
        ("ok I think iPhone or Pixel, not sure", ["iPhone", "Pixel"]),
    ],
)
def test_a_sentence_names_runs_of_capitalized_words(sentence: str, names: list[str]) -> None:
    assert [v.text for v in proper_names(sentence)] == names
    assert all(
        v.dimension == "name" and sentence[v.start : v.end] == v.text
        for v in proper_names(sentence)
    )


def test_which_and_who_are_read_only_when_names_are() -> None:
    for question in ("Which gym do I go to now?", "Who is my accountant?", "What car do I drive?"):
        assert asked(question) is None
        read = asked(question, names=True)
        assert read is not None and read.kind == "name"
    # A plural asks for a list, every name of which holds at once.
    for question in ("What events has Caroline joined?", "Which books do I own now?"):
        assert asked(question, names=True) is None
    read = asked("What does my dentist's office go by now?", names=True)
    assert read is not None and read.kind == "name"
    # The kinds read before are read as before.
    assert asked("How many cats do I have now?", names=True) == asked(
        "How many cats do I have now?"
    )
    assert not ASKED.asked_names and ASSEMBLER.asked_names


GYM = "Which gym do I go to these days?"


def decided(question: str, *turns: object) -> list[tuple[str, str, str, str]]:
    return decided_by(question, *turns, names=True)


def test_the_users_newest_name_said_as_a_change_is_current() -> None:
    older = turn("a", "I go to Ironside Gym before work, leg day is brutal.", 100)
    newer = turn("b", "Cancelled that membership. I go to Kestrel Climbing Gym now.", 10)
    assert decided(GYM, older, newer) == [("b", "a", "asked_value", "name: go gym")]
    assert decided(GYM, newer, older) == decided(GYM, older, newer)
    # Without the question, the claims alone cannot read it: nothing.
    assert earlier_values([older, newer]) == ()


def test_a_name_said_without_a_change_decides_nothing() -> None:
    older = turn("a", "I go to Ironside Gym before work, leg day is brutal.", 100)
    # Two names in two turns may be two things both held: no change word, no decision.
    visit = turn("b", "Tried a drop-in at the Kestrel Climbing Gym with my cousin.", 10)
    assert decided(GYM, older, visit) == []
    # Someone else's change is not the user's.
    friend = turn("c", "My sister switched to Kestrel Climbing Gym now.", 10)
    assert decided(GYM, older, friend) == []
    # A newer turn naming the older name too shows the change; the older is not left out.
    both = turn("d", "I left Ironside Gym, I'm at Kestrel Climbing Gym now.", 10)
    assert decided(GYM, older, both) == []
    # The assistant's name is never the current one.
    suggestion = turn("e", "You could switch to Kestrel Climbing Gym now.", 10, role="assistant")
    assert decided(GYM, older, suggestion) == []


def test_a_name_the_question_says_answers_nothing_and_its_holder_may() -> None:
    question = "Which vet does Pepper see now?"
    # "her checkup": Pepper's, the one asked of; "Pepper" itself is no answer.
    older = turn("a", "Pepper has her checkup with Dr. Osei at Hillcrest Clinic on Monday.", 100)
    newer = turn("b", "We moved Pepper over to Larkspur Animal Clinic, they do house calls.", 10)
    assert decided(question, older, newer) == [("b", "a", "asked_value", "name: pepper see vet")]
    # A newer turn with no name but Pepper's decides nothing.
    only = turn("c", "Pepper is doing great now, new food agrees with her.", 10)
    assert decided(question, older, only) == []


def test_a_turn_holding_the_current_name_stays() -> None:
    older = turn("a", "I go to Ironside Gym before work.", 100)
    newer = turn("b", "Switched gyms: I go to Kestrel Climbing Gym now.", 10)
    # "Kestrel" alone is the current name in short: that turn is not left out.
    short = turn("c", "I go to Kestrel on Mondays, Ironside Gym never had a wall.", 50)
    assert {d[1] for d in decided(GYM, older, short, newer)} == {"a"}


def test_the_answer_sentences_carry_whether_they_say_a_change() -> None:
    read = asked(GYM, names=True)
    assert read is not None
    text = "Cancelled that membership. I go to Kestrel Climbing Gym now."
    assert [(s.value.text, s.change) for s in said(read, text, "user")] == [
        ("Kestrel Climbing Gym", True)
    ]
    text = "I go to Kestrel Climbing Gym on Mondays."
    assert [(s.value.text, s.change) for s in said(read, text, "user")] == [
        ("Kestrel Climbing Gym", False)
    ]


def test_a_where_question_is_answered_by_names_too_when_names_are_read() -> None:
    question = "Where do we get our Friday takeout these days?"
    older = turn("a", "Friday takeout means Golden Lotus dumplings, every single week.", 100)
    newer = turn("b", "Friday takeout is Rosa's Cantina now, the mole is unreal.", 10)
    assert decided(question, older, newer) == [("b", "a", "asked_value", "place: friday takeout")]
    # Under the assembler before, a where question reads places alone: neither names one.
    read = asked(question)
    assert read is not None and not read.names
    assert earlier_values([older, newer], question=read) == ()
