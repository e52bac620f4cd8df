"""The weighed rule of the assembly defence (issue 33, `assemble/2026-12-06.3`): of the user's
turns nearest a question of their own, an older one a newer one weighs as replacing is left
out, the decision (rule, both ids, the probability) recorded; what the rule never does."""

from __future__ import annotations

import dataclasses
import math
from datetime import date

from gateway.core.asked_values import asked
from gateway.core.current_values import earlier_values
from gateway.core.earlier_value import WEIGHED, EarlierValue
from gateway.core.model import Candidate
from gateway.core.replacing_turns import (
    READ,
    SIGNALS,
    THRESHOLD,
    WEIGHING,
    Turn,
    Weighing,
    Weight,
    signals,
)
from tests.gateway.core.test_core_current_values import fact, turn

QUESTION = "Who is my dentist these days?"
# An update told in words no reading of the defence knows: no change verb, no value of a
# kind, no sentence saying the question's words.
BEFORE = "My dentist is Dr. Ambrose. Can you help me word an email to move my cleaning?"
AFTER = "Finally went to the new dental place on Larkspur Street, Dr. Ferro was so gentle."


def weighed(*candidates: Candidate, question: str = QUESTION) -> list[EarlierValue]:
    read = asked(question, names=True, statements=True, updates=True, weighed=True)
    assert read is not None
    return [d for d in earlier_values(candidates, question=read) if d.rule == WEIGHED]


def test_an_older_turn_a_newer_one_weighs_as_replacing_is_left_out() -> None:
    older, newer = turn("a", BEFORE, 150, vector_rank=1), turn("b", AFTER, 5, vector_rank=2)
    [decision] = weighed(older, newer)
    assert (decision.current, decision.earlier, decision.rule) == ("b", "a", "weighed_turns")
    # The claim is the question's; the score is the probability the weighing gave.
    assert decision.claim_key.startswith("name: ")
    expected = WEIGHING.probability(
        signals(
            asked(QUESTION, True, True, True, True).stems,  # type: ignore[union-attr]
            Turn(BEFORE, older.said_at.date(), 0),
            Turn(AFTER, newer.said_at.date(), 1),
        )
    )
    assert decision.score == round(expected, 3) and decision.score > THRESHOLD
    # The same decision each time; the order given is the ranking's, which the weighing reads.
    assert weighed(older, newer) == [decision]
    [reordered] = weighed(newer, older)
    assert (reordered.current, reordered.earlier) == (
        "b",
        "a",
    ) and reordered.score != decision.score


def test_the_newest_turn_is_never_left_out_and_same_day_turns_are_weighed_as_fitted() -> None:
    older, newer = turn("a", BEFORE, 150, vector_rank=1), turn("b", AFTER, 5, vector_rank=2)
    assert all(d.earlier != "b" for d in weighed(older, newer))
    # Said the same moment (written in one request, one after the other in a session): the
    # order the session gave them still says which is newer; the weighing decides.
    same = turn("c", AFTER, 150, vector_rank=2)
    assert all(d.earlier != "c" for d in weighed(older, same))


def test_what_the_rule_does_not_read() -> None:
    older, newer = turn("a", BEFORE, 150, vector_rank=1), turn("b", AFTER, 5, vector_rank=2)
    # A question of someone else's is not weighed: whose update it would be is not said.
    of_another = asked("Who is my sister's dentist these days?", True, True, True, True)
    assert of_another is not None and not of_another.weighed
    assert [
        d for d in earlier_values((older, newer), question=of_another) if d.rule == WEIGHED
    ] == []
    # Nor is the assembler before it (no `weighed` asked): the reading decides alone.
    read = asked(QUESTION, names=True, statements=True, updates=True)
    assert read is not None and not read.weighed
    assert [d for d in earlier_values((older, newer), question=read) if d.rule == WEIGHED] == []
    # Nor the assistant's turns.
    reply = turn("c", AFTER, 5, role="assistant", vector_rank=2)
    assert weighed(older, reply) == []
    # Nor a turn with a value the policy hid: the decision would be read as one about it.
    hidden = turn("d", "Had my first visit with [redacted:person], much gentler hands.", 5)
    assert weighed(older, hidden) == []


def test_only_the_users_turns_nearest_the_question_are_weighed() -> None:
    older = turn("a", BEFORE, 150, vector_rank=READ + 2)
    nearer = [
        turn(f"n{i}", f"Unrelated chat number {i} about a recipe.", 30 - i, vector_rank=i)
        for i in range(READ)
    ]
    newer = turn("b", AFTER, 5, vector_rank=READ + 3)
    # Ranked below the first READ of the user's turns, neither is read.
    ranked = sorted([older, *nearer, newer], key=lambda c: c.vector_rank or 0)
    assert all(d.earlier != "a" for d in weighed(*ranked))


def test_the_weighing_names_its_signals_in_order() -> None:
    assert tuple(w.signal for w in WEIGHING.weights) == SIGNALS
    assert all(w.scale > 0 for w in WEIGHING.weights)
    # The probability is a logistic of the centred, scaled signals.
    flat = Weighing(bias=0.5, weights=(Weight("x", 2.0, 1.0, 4.0),))
    assert math.isclose(flat.probability((3.0,)), 1 / (1 + math.exp(-(0.5 + 2.0 * 0.5))))


def test_the_signals_read_closed_classes_and_counts() -> None:
    question = frozenset({"teeth"})
    older = Turn("my teeth hurt, maybe a checkup soon", date(2026, 1, 1), 0)
    newer = Turn("My sister switched to Dr. Ferro, she loves her.", date(2026, 1, 11), 2)
    read = dict(zip(SIGNALS, signals(question, older, newer), strict=True))
    assert read["older_rank"] == 0.0 and read["newer_rank"] == 2.0
    assert read["asked_older"] == 1.0 and read["asked_newer"] == 0.0
    assert read["change_newer"] == 1.0  # "switched"
    assert read["another_newer"] == 1.0 and read["another_older"] == 0.0  # "my sister"
    assert read["hedged_older"] == 1.0  # "maybe"
    assert read["days_apart"] == math.log1p(10) and read["same_day"] == 0.0
    assert read["name_newer"] == 1.0 and read["number_older"] == 0.0


def test_what_compile_made_of_the_older_turn_goes_with_it() -> None:
    older, newer = turn("a", BEFORE, 150, vector_rank=1), turn("b", AFTER, 5, vector_rank=2)

    def compiled(memory_id: str, said: str, days_ago: float) -> Candidate:
        made = fact(memory_id, said, days_ago, claim_key=f"user.{memory_id}")
        return dataclasses.replace(made, source_type="compile")

    quoted = compiled("f", BEFORE, 150)
    # A fact quoting the newer turn, or one of statements made after the older, stays.
    current, later = compiled("g", AFTER, 5), compiled("h", BEFORE, 100)
    decisions = weighed(older, newer, quoted, current, later)
    assert [(d.current, d.earlier) for d in decisions] == [("b", "a"), ("b", "f")]
    assert {d.score for d in decisions} == {decisions[0].score}
