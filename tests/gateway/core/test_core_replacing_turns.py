"""The weighed rule of the assembly defence (issue 33, `assemble/2026-12-06.3` to `.5`): of the
user's turns nearest a question of their own, an older one a newer one weighs as replacing is
left out, the decision (rule, both ids, the probability) recorded; what the rule never does."""

from __future__ import annotations

import dataclasses
import math
from datetime import date

from gateway.core.asked_values import asked, stems_of
from gateway.core.current_values import earlier_values
from gateway.core.earlier_value import WEIGHED, EarlierValue
from gateway.core.model import Candidate
from gateway.core.replacing_turns import (
    FIRST_WEIGHING,
    READ,
    SECOND_WEIGHING,
    SIGNALS,
    WEIGHING,
    WIDE,
    Signals,
    Turn,
    Weighing,
    Weight,
    signals,
)
from tests.gateway.core.test_core_current_values import fact, turn

QUESTION = "Who is my dentist these days?"
# An update told in words no reading of the defence knows: no change verb, no value of a
# kind, no sentence saying the question's words.
BEFORE = (
    "Quick one before I forget: my dentist is Dr. Ambrose and I need to move my cleaning to next"
    " month. Can you help me word a short email to the office asking for a Thursday slot?"
)
AFTER = (
    "Finally made the move to the new dental place on Larkspur Street: Dr. Ferro did my cleaning"
    " yesterday, so gentle, and the office sends reminders by text."
)
# The update as `assemble/2026-12-06.3` and `.4` weighed it; the current weighing reads it as
# too short a statement to replace one.
WENT = "Finally went to the new dental place on Larkspur Street, Dr. Ferro was so gentle."


def weighed(
    *candidates: Candidate, question: str = QUESTION, weighing: Weighing = WEIGHING
) -> list[EarlierValue]:
    read = asked(question, names=True, statements=True, updates=True, weighed=True)
    assert read is not None
    decided = earlier_values(candidates, question=read, weighing=weighing)
    return [d for d in decided if d.rule == WEIGHED]


def test_an_older_turn_a_newer_one_weighs_as_replacing_is_left_out() -> None:
    older, newer = turn("a", BEFORE, 150, vector_rank=1), turn("b", AFTER, 5, vector_rank=2)
    [decision] = weighed(older, newer)
    assert (decision.current, decision.earlier, decision.rule) == ("b", "a", "weighed_turns")
    # The claim is the question's; the score is the probability the weighing gave.
    assert decision.claim_key.startswith("name: ")
    expected = WEIGHING.probability(
        signals(
            asked(QUESTION, True, True, True, True).stems,  # type: ignore[union-attr]
            Turn(BEFORE, older.said_at.date(), 0, True),
            Turn(AFTER, newer.said_at.date(), 1, False),
        )
    )
    assert decision.score == round(expected, 3) and decision.score > WEIGHING.threshold
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
        d
        for d in earlier_values((older, newer), question=of_another, weighing=WEIGHING)
        if d.rule == WEIGHED
    ] == []
    # Nor is the assembler before it (no `weighed` asked, no weighing): the reading decides alone.
    read = asked(QUESTION, names=True, statements=True, updates=True)
    assert read is not None and not read.weighed
    assert [
        d
        for d in earlier_values((older, newer), question=read, weighing=WEIGHING)
        if d.rule == WEIGHED
    ] == []
    asking = asked(QUESTION, names=True, statements=True, updates=True, weighed=True)
    assert [d for d in earlier_values((older, newer), question=asking) if d.rule == WEIGHED] == []
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


def test_each_weighing_names_the_signals_it_reads() -> None:
    assert tuple(w.signal for w in WEIGHING.weights) == SIGNALS
    assert tuple(w.signal for w in SECOND_WEIGHING.weights) == SIGNALS
    # The weighing of 2026-12-06.3 reads the first 19, as it was fitted, and weighs any turn.
    assert tuple(w.signal for w in FIRST_WEIGHING.weights) == SIGNALS[:19]
    assert FIRST_WEIGHING.least_words == 0 < WEIGHING.least_words
    assert all(w.scale > 0 for x in (FIRST_WEIGHING, SECOND_WEIGHING, WEIGHING) for w in x.weights)
    # The current one leaves a turn out only above an even chance: the lowest threshold keeping
    # the value of 95 % of the questions whose answer never changed (`bench replacing`).
    assert SECOND_WEIGHING.threshold == 0.4 < WEIGHING.threshold == 0.5
    # The probability is a logistic of the centred, scaled signals it names.
    flat = Weighing(bias=0.5, weights=(Weight("days_apart", 2.0, 1.0, 4.0),), threshold=0.4)
    read = Signals(*([0.0] * len(SIGNALS)))._replace(days_apart=3.0, older_rank=9.0)
    assert math.isclose(flat.probability(read), 1 / (1 + math.exp(-(0.5 + 2.0 * 0.5))))


def test_the_signals_read_closed_classes_and_counts() -> None:
    question = frozenset({"teeth"})
    older = Turn("my teeth hurt, maybe a checkup soon", date(2026, 1, 1), 0, True)
    newer = Turn("My sister switched to Dr. Ferro, she loves her.", date(2026, 1, 11), 2, False)
    read = signals(question, older, newer)._asdict()
    assert read["older_rank"] == 0.0 and read["newer_rank"] == 2.0
    assert read["asked_older"] == 1.0 and read["asked_newer"] == 0.0
    assert read["change_newer"] == 1.0  # "switched"
    assert read["another_newer"] == 1.0 and read["another_older"] == 0.0  # "my sister"
    assert read["hedged_older"] == 1.0  # "maybe"
    assert read["days_apart"] == math.log1p(10) and read["same_day"] == 0.0
    assert read["name_newer"] == 1.0 and read["number_older"] == 0.0
    # Said first of the turns nearest the question; how much each says, by its content words.
    assert read["first_older"] == 1.0
    assert read["words_older"] == math.log1p(5)  # teeth, hurt, maybe, checkup, soon
    assert read["words_newer"] == math.log1p(len(stems_of(newer.text)))


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


def test_a_short_reply_replaces_nothing_and_first_said_is_read_among_the_wide_turns() -> None:
    older = turn("a", BEFORE, 150, vector_rank=1)
    # "thanks, will do": under four content words, never weighed as replacing (2026-12-06.4);
    # the weighing of 2026-12-06.3 weighed it as fitted.
    short = turn("b", "thanks, will do", 5, vector_rank=2)
    assert weighed(older, short) == []
    assert WEIGHING.may_replace(Turn("thanks, will do", date(2026, 1, 1), 1, False)) is False
    assert FIRST_WEIGHING.may_replace(Turn("thanks, will do", date(2026, 1, 1), 1, False))
    # Said before the older one but ranked below the READ nearest: the older one is no longer
    # the first said of the WIDE nearest, and weighs lower.
    newer = turn("c", AFTER, 5, vector_rank=2)
    [alone] = weighed(older, newer)
    fillers = [
        turn(f"n{i}", f"Unrelated chat number {i} about a recipe.", 1 + i, vector_rank=3 + i)
        for i in range(READ - 2)
    ]
    earliest = turn("e", "Some plain chat about a recipe for bread.", 400, vector_rank=READ + 1)
    ranked = [older, newer, *fillers, earliest]
    assert len(ranked) <= WIDE
    before_it = [d for d in weighed(*ranked) if d.earlier == "a"]
    assert all(d.score < alone.score for d in before_it)


def test_the_earlier_weighings_decide_as_they_did() -> None:
    """Kept for exact replay: each earlier weighing's example, its probability as its session
    recorded it (a receipt of that assembler carries it as the decision's score)."""
    said = "My dentist is Dr. Ambrose. Can you help me word an email to move my cleaning?"
    older, newer = turn("a", said, 150, vector_rank=1), turn("b", WENT, 5, vector_rank=2)
    [decision] = weighed(older, newer, weighing=FIRST_WEIGHING)
    assert (decision.current, decision.earlier, decision.score) == ("b", "a", 0.775)
    # The weighing of 2026-12-06.4 reads the short statement as saying too little to be
    # replaced by a newer one naming a name ...
    assert weighed(older, newer, weighing=SECOND_WEIGHING) == []
    # ... and the longer one as replaced by that short update, which the current weighing,
    # fitted on questions whose answer never changed too, does not read as one.
    older = turn("a", BEFORE, 150, vector_rank=1)
    [decision] = weighed(older, newer, weighing=SECOND_WEIGHING)
    assert (decision.current, decision.earlier, decision.score) == ("b", "a", 0.648)
    assert weighed(older, newer) == []
