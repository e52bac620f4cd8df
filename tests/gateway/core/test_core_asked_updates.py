"""An update read as chat tells it (issue 33, `assemble/2026-12-06.1`): tersely, across a turn's
sentences, of a thing by its name, in other words than the first statement's. Each reading is
shown deciding what the version before it (`assemble/2026-12-05.4`) left alone, and each guard
keeping what it should: a value in a question, one value said twice, a hedged change."""

from __future__ import annotations

import dataclasses

from gateway.core.asked_values import asked
from gateway.core.model import Candidate
from gateway.core.versions import ASSEMBLER, STATEMENTS
from tests.gateway.core.test_core_asked_values import decided as decided_by
from tests.gateway.core.test_core_current_values import turn


def decided(question: str, *turns: object) -> list[tuple[str, str]]:
    """(current, earlier) pairs under the current assembler's reading."""
    read = decided_by(question, *turns, names=True, statements=True, updates=True)
    return [(current, earlier) for current, earlier, _, _ in read]


def decided_before(question: str, *turns: object) -> list[tuple[str, str]]:
    """The same under assemble/2026-12-05.4, which reads no update so."""
    read = decided_by(question, *turns, names=True, statements=True)
    return [(current, earlier) for current, earlier, _, _ in read]


def said_next(first: Candidate, reply: Candidate, seq: int) -> Candidate:
    """`reply` as the turn after `first` in its session: written with it, numbered next."""
    role = "assistant" if reply.heading.startswith("assistant") else "user"
    return dataclasses.replace(
        reply, created_at=first.created_at, heading=f"{role}, turn {seq}: {reply.content[:40]}"
    )


def test_updates_are_read_only_when_the_assembler_reads_them() -> None:
    question = "How many people are on our reunion guest list now?"
    assert not STATEMENTS.asked_updates and ASSEMBLER.asked_updates
    read = asked(question, names=True, statements=True, updates=True)
    assert read is not None and read.updates
    unread = asked(question, names=True, statements=True)
    assert unread is not None and not unread.updates


def test_a_count_is_of_the_questions_thing_whatever_noun_counts_it() -> None:
    question = "How many people are on our reunion guest list now?"
    older = turn("a", "Our reunion guest list is at 40 people, still waiting on cousins.", 60)
    newer = turn("b", "rsvps are in: the guest list closed at 52 guests for the reunion.", 5)
    assert decided(question, older, newer) == [("b", "a")]
    assert decided_before(question, older, newer) == []  # "people" and "guests" were two


def test_a_value_in_a_question_the_user_asks_states_none_of_theirs() -> None:
    question = "How many people are on our reunion guest list now?"
    older = turn("a", "Our reunion guest list is at 40 people, still waiting on cousins.", 60)
    asking = turn("b", "how many tables do I need for the reunion if 8 people sit at each?", 5)
    assert decided(question, older, asking) == []


def test_a_sentence_saying_its_value_is_new_answers_however_few_words_it_says() -> None:
    question = "How much am I paying per month for my parking spot now?"
    older = turn("a", "I pay $90 a month for a parking spot by the office.", 60)
    newer = turn(
        "b", "letter from the parking garage today, it goes up to $115 a month in March.", 5
    )
    assert decided(question, older, newer) == [("b", "a")]
    assert decided_before(question, older, newer) == []
    # Said as no change, so few of the question's words may be another thing: nothing.
    listed = turn("c", "the parking garage down the street lists $115 a month, fyi.", 5)
    assert decided(question, older, listed) == []
    # Hedged: not a new value.
    hedged = turn("d", "the parking garage might go up to $115 a month, who knows.", 5)
    assert decided(question, older, hedged) == []


def test_a_turns_sentences_say_the_update_together() -> None:
    question = "What's my current half marathon PR?"
    older = turn("a", "my half marathon PR is 1:58:40 from last fall. any speed workouts?", 60)
    newer = turn("b", "RAN THE RIVERSIDE HALF TODAY. 1:52:03!!! new PR, legs are toast.", 5)
    assert decided(question, older, newer) == [("b", "a")]
    assert decided_before(question, older, newer) == []


def test_a_name_said_again_is_the_questions_thing() -> None:
    question = "What's the status of my pottery studio membership right now?"
    older = turn(
        "a", "I paused my membership at Clayworks pottery studio while my wrist heals.", 60
    )
    newer = turn("b", "wrist is fine!! reactivated my Clayworks membership this morning.", 5)
    assert decided(question, older, newer) == [("b", "a")]
    assert decided_before(question, older, newer) == []


def test_two_different_values_are_two_whatever_words_they_share() -> None:
    question = "What hourly rate do I charge for tutoring now?"
    older = turn("a", "I charge $40 an hour for tutoring, mostly algebra.", 60)
    newer = turn("b", "raised my rate!! new tutoring clients pay $55 an hour from next month.", 5)
    assert decided(question, older, newer) == [("b", "a")]
    assert decided_before(question, older, newer) == []  # "hour" read as one value said twice
    # One value said again is no change, whatever the newer says beside it.
    again = turn("c", "new tutoring clients pay $40 an hour too, I raised nothing.", 5)
    assert decided(question, older, again) == []


def test_the_assistants_reply_to_an_earlier_statement_goes_with_it() -> None:
    question = "Who is my dentist these days?"
    older = turn("a", "My dentist is Dr. Okafor, can you help me reschedule a cleaning?", 60)
    reply = said_next(
        older,
        turn(
            "r",
            "Sure: 'Hi, I have a cleaning with Dr. Okafor on Thursday...'",
            60,
            role="assistant",
        ),
        2,
    )
    other = said_next(older, turn("o", "Thursdays are busy for clinics.", 60, role="assistant"), 4)
    newer = turn("b", "switched dentists! I'm seeing Dr. Lindqvist now, much closer.", 5)
    assert sorted(decided(question, older, reply, other, newer)) == [("b", "a"), ("b", "r")]
    # Not the turn after it, or the assistant's reply to another statement: it stays.
    assert decided(question, older, other, newer) == [("b", "a")]
    assert ("b", "r") not in decided_before(question, older, reply, newer)
