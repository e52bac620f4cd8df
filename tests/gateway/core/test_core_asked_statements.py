"""The defence read from a question whose answer may be any phrase (issue 33,
`assemble/2026-12-05.4`): "What kind of schedule do I work now?" is answered by "part-time",
which no shape finds. A sentence about the question's words is read whole: the user's newest
turn saying a change of their own is current, and an older one of theirs about the same words
that says nothing else the newer says is earlier. Someone else's change, a hedge, a denial, a
restated value and a turn about another thing decide nothing."""

from __future__ import annotations

from gateway.core.asked_values import asked
from gateway.core.turn_answers import told
from gateway.core.versions import ASSEMBLER, NAMES
from tests.gateway.core.test_core_asked_values import compiled
from tests.gateway.core.test_core_asked_values import decided as decided_by
from tests.gateway.core.test_core_current_values import turn

SCHEDULE = "What kind of schedule am I working at the library now?"
SEAT = "Which seat do I prefer when I fly these days?"


def decided(question: str, *turns: object) -> list[tuple[str, str, str, str]]:
    return decided_by(question, *turns, names=True, statements=True)


def test_statements_are_read_only_when_the_assembler_reads_them() -> None:
    for question in (SCHEDULE, SEAT, "Is our condo on Alder Lane currently for sale?"):
        read = asked(question, names=True, statements=True)
        assert read is not None and read.statements
    # A yes or no is read only so; which and what are read as names without it.
    assert asked("Is our condo on Alder Lane currently for sale?", names=True) is None
    named = asked(SEAT, names=True)
    assert named is not None and not named.statements
    assert told(named, "I always grab an aisle seat.") == []
    # The kinds with a shape of their own are read by it.
    count = asked("How many cats do I have now?", names=True, statements=True)
    assert count is not None and count.kind == "count" and not count.statements
    assert not NAMES.asked_statements and ASSEMBLER.asked_statements


def test_the_users_newest_change_about_the_question_is_current() -> None:
    older = turn("a", "I'm full-time at the library so weekdays are basically gone.", 60)
    newer = turn("b", "HR signed off! I'm going part-time at the library starting this month.", 5)
    assert decided(SCHEDULE, older, newer) == [
        ("b", "a", "asked_value", "name: kind library schedul work")
    ]
    assert decided(SCHEDULE, newer, older) == decided(SCHEDULE, older, newer)
    # Without a change word the newer may be one more thing said of it: nothing.
    plain = turn("c", "The library is quiet on Mondays, I'm there part-time.", 5)
    assert decided(SCHEDULE, older, plain) == []


def test_the_change_may_be_said_in_the_next_sentence() -> None:
    question = "What instrument am I planning to learn for my 40th birthday project?"
    older = turn("a", "I've decided my 40th birthday project is learning the cello.", 60)
    newer = turn(
        "b",
        "Reality check on the birthday project: the instrument won't fit in my car. "
        "So I'm learning banjo instead.",
        5,
    )
    assert [d[:2] for d in decided(question, older, newer)] == [("b", "a")]


def test_someone_elses_change_a_hedge_or_a_denial_decides_nothing() -> None:
    older = turn("a", "I always grab an aisle seat so I can get up.", 60)
    for text in (
        "My sister switched to window seats now, she sleeps the whole flight.",
        "I might switch to a window seat on long flights, not sure.",
        "I haven't switched seats, the aisle still wins when I fly.",
    ):
        assert decided(SEAT, older, turn("b", text, 5)) == [], text
    mine = turn("c", "I'm converted, window seat every time I fly from now on.", 5)
    assert [d[:2] for d in decided(SEAT, older, mine)] == [("c", "a")]
    # Chat leaves the subject out: a sentence opening with the change is the speaker's.
    elided = turn("d", "Finally switched to window seats when I fly, best sleep ever.", 5)
    assert [d[:2] for d in decided(SEAT, older, elided)] == [("d", "a")]


def test_a_restated_value_or_another_thing_stays() -> None:
    question = "Which company do I work for these days?"
    older = turn("a", "I work at a freight company doing dispatch, long shifts.", 60)
    # The newer says the same thing of the question again ("freight"): it may be the same value.
    same = turn("b", "Still at the freight company, now leading dispatch for work.", 5)
    assert decided(question, older, same) == []
    # An older turn about another of the question's words than the answer's is kept.
    cats = "Which vet does my cat go to now?"
    plants = turn("c", "Which houseplants are safe for cats?", 60)
    moved = turn("d", "We switched to the vet that does house calls now.", 5)
    assert decided(cats, plants, moved) == []
    # A name the older says and the newer does not is the name reading's to decide.
    named = turn("e", "I go to the vet at Maple Ridge, it's fine.", 60)
    assert decided(cats, named, moved) == []


def test_what_compile_made_of_the_earlier_statement_goes_with_it() -> None:
    older = turn(
        "a", "I always grab an aisle seat so I can get up without climbing over anyone.", 60
    )
    newer = turn("b", "I'm converted, window seat every time I fly from now on.", 5)
    fact = compiled(
        "f",
        "user.seat",
        "On 2026-10-01 the user said: I always grab an aisle seat so I can get up.",
    )
    digest = compiled(
        "g",
        "Session digest, 2026-10-01 to 2026-10-01",
        "Session of 2 turns, 2026-10-01 to 2026-10-01.\n- t1 user: I always grab an aisle seat.",
    )
    later = compiled(
        "h", "Session digest, 2026-12-01 to 2026-12-01", "- t1 user: an aisle seat this time."
    )
    assert {d[1] for d in decided(SEAT, older, newer, fact, digest, later)} == {"a", "f", "g"}


def test_read_whole_a_question_is_read_by_its_grammar() -> None:
    # A plural is a list only as the head of its phrase; a preposition may open the question.
    # As assemble/2026-12-05.3 read them, these asked for a list or were of no shape.
    for question in (
        "Which farmers market is my jam stall at these days?",
        "In what format do I prefer to read books these days?",
        "At which gym do I train now?",
    ):
        read = asked(question, names=True, statements=True)
        assert read is not None and read.statements, question
        assert asked(question, names=True) is None, question
    # "Which of my offices" asks for one of them, as it did.
    read = asked("Which of my company's offices do I work out of now?", names=True, statements=True)
    assert read is not None and read.kind == "name"
    for question in ("What kids programs are we in?", "Which books do I own now?"):
        assert asked(question, names=True, statements=True) is None, question


def test_a_name_changed_by_someone_else_decides_nothing_when_read_whole() -> None:
    question = "Which airline's loyalty program do I fly with?"
    mine = turn("a", "I'm an Alaska Airlines MVP and want to keep status this year.", 60)
    sisters = turn(
        "b",
        "My sister just switched all her flying to Delta, now she keeps telling me to do the "
        "same. Worth jumping if I mostly fly out of Seattle?",
        5,
    )
    assert decided(question, mine, sisters) == []
    # As assemble/2026-12-05.3 reads it, the change word beside "Seattle" decided.
    assert [d[:2] for d in decided_by(question, mine, sisters, names=True)] == [("b", "a")]


def test_a_new_name_beside_the_change_replaces_the_older_name() -> None:
    question = "Which laptop am I planning to get?"
    older = turn("a", "I'm planning to buy a MacBook Air laptop once my refund comes in.", 60)
    newer = turn(
        "b",
        "Change of plans on the laptop. Work needs me on Windows, so I'm going with a ThinkPad "
        "X1 Carbon instead of the Mac.",
        5,
    )
    assert [d[:2] for d in decided(question, older, newer)] == [("b", "a")]
    # A change beside no name leaves an older name to the name reading: nothing here.
    vague = turn("c", "Change of plans on the laptop, I'm waiting a year instead.", 5)
    assert decided(question, older, vague) == []


def test_only_a_question_of_what_holds_now_is_read_whole() -> None:
    # A sentence read whole says nothing of a value's time: a question of another's of any
    # time ("What do Melanie's kids like?") or of a year is not read so; one of the user's own,
    # or saying now, these days or a plan, is.
    for question in (
        "What do Melanie's kids like?",
        "What is John currently doing as a volunteer in August 2023?",
    ):
        read = asked(question, names=True, statements=True)
        assert read is None or not read.statements, question
    for question in (
        SCHEDULE,
        "Which seat do I prefer when I fly?",
        "What school is Theo at now?",
        "What are they planning for the launch?",
    ):
        read = asked(question, names=True, statements=True)
        assert read is not None and read.statements and read.own_changes, question


def test_a_subject_said_in_many_older_turns_is_no_one_value() -> None:
    # A value is replaced where it was said once or twice; the question's words said in more
    # older turns than that are a subject with many facts, and nothing is decided.
    said = [
        turn("a", "I always grab an aisle seat on short hops.", 90),
        turn("b", "For the long flight I booked a seat near the wing.", 80),
        turn("c", "Exit row seats are worth it on long flights, I paid extra once.", 70),
    ]
    newer = turn("d", "I'm converted, window seat every time I fly from now on.", 5)
    assert decided(SEAT, *said, newer) == []
    assert [d[:2] for d in decided(SEAT, *said[:2], newer)] == [("d", "a"), ("d", "b")]


def test_a_name_in_a_question_of_the_users_own_names_a_thing_not_another_person() -> None:
    question = "Is my Etsy shop open for orders right now?"
    read = asked(question, names=True, statements=True)
    assert read is not None and read.kind == "state" and not read.another
    older = turn("a", "my etsy shop is open for orders again after the holidays!", 90)
    paused = turn("b", "switched my etsy shop to vacation mode, no orders until July.", 30)
    friends = turn(
        "c",
        "my friend Ilse's ceramics shop is open for orders again and she switched to a new "
        "logo, can you proofread her announcement?",
        5,
    )
    # The friend's change is hers: the user's own is the newest change, and what it replaced
    # is left out; the turn with the current answer is not.
    assert [d[:2] for d in decided(question, older, paused, friends)] == [("b", "a")]
    theo = asked("What school is Theo at now?", names=True, statements=True)
    assert theo is not None and theo.another
