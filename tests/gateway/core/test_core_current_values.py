"""The assembler's second line of defence (issue 33): of two admitted memories stating different
values of one claim, the older is left out and the newer shown, the decision recorded; traps
stay apart; only what the policy admits is compared; same input, same decisions."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Sequence
from datetime import timedelta

import pytest

from gateway.core.assembly import assemble
from gateway.core.current_values import READ_DEPTH, earlier_values
from gateway.core.earlier_value import EarlierValue
from gateway.core.model import Candidate, ConflictSide, Exclusion, MemoryId, OpenConflict
from gateway.core.preparation import Found, prepare
from gateway.core.remembered_turns import statement_of
from gateway.core.selection import select
from gateway.core.tokens import load_tokenizer
from gateway.core.verdict import Texts, Verdict
from gateway.core.versions import ASSEMBLER, BUDGET_SIZED, DEFAULT_PROFILE, Assembler
from tests.gateway.core.core_samples import NOW, memory, request


def turn(
    memory_id: str,
    text: str,
    days_ago: float,
    *,
    role: str = "user",
    namespace: str = "ops",
    vector_rank: int | None = None,
) -> Candidate:
    """A remembered turn as the session writer stores it (heading "<role>, turn <seq>: ...")."""
    candidate = memory(
        memory_id,
        heading=f"{role}, turn 1: {text[:40]}",
        content=text,
        memory_type="episodic",
        created_days_ago=days_ago,
        namespace=namespace,
        vector_rank=vector_rank,
    )
    return dataclasses.replace(candidate, source_type="turn", source_ref=f"turn-{memory_id}")


def fact(memory_id: str, said: str, days_ago: float, *, claim_key: str) -> Candidate:
    """A compiled fact: its content names who stated it and when."""
    at = NOW - timedelta(days=days_ago)
    candidate = memory(
        memory_id,
        heading=f"{claim_key}: {said[:40]}",
        content=f"On {at.date().isoformat()} the user said: {said}",
        created_days_ago=days_ago,
    )
    return dataclasses.replace(candidate, claim_key=claim_key)


def decided(*candidates: Candidate) -> list[tuple[str, str, str]]:
    return [(d.current, d.earlier, d.claim_key) for d in earlier_values(candidates)]


def test_a_newer_value_of_one_claim_makes_the_older_memory_earlier() -> None:
    older = turn("a", "My monthly rent is $1,850.", 10)
    newer = turn("b", "My landlord raised it, my rent is now $1,975 a month.", 2)
    assert decided(older, newer) == [("b", "a", "user.rent")]
    # Whatever the input order: the instants decide.
    assert decided(newer, older) == [("b", "a", "user.rent")]
    # A unit names the dimension whatever the verbs around it.
    weighed = turn("c", "I weigh 185 pounds right now.", 10)
    assert decided(weighed, turn("d", "Just hit 172 pounds this morning!", 2)) == [
        ("d", "c", "user.weight_weigh")
    ]
    # The assistant's confirmation of an action states what now holds.
    confirmed = turn("e", "Done. Your plan is now Premium.", 1, role="assistant")
    assert decided(turn("f", "My plan is Pro.", 9), confirmed) == [("e", "f", "user.plan")]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # A second subject: another team's count is another claim.
        ("We have 3 engineers on the platform team.", "We have 2 engineers on the data team."),
        # Counts narrowed to different things by a name before the noun or a phrase after it
        # (a total asks for both).
        (
            "I have a foundation from my previous 8 edX courses.",
            "I've completed 12 courses on Coursera.",
        ),
        # Someone else's value is not the user's, whatever phrase the table reads.
        ("I have 2 kids.", "My sister has 3 kids."),
        ("My salary is $145,000 base.", "My sister just got a raise, her base is $190,000 now."),
        # A hypothetical states no value.
        ("I have 2 kids.", "If I had 3 kids I'd need a bigger car."),
        # A goal states no value.
        ("I weigh 185 pounds.", "I want to get down to 170 pounds."),
        # A narrower claim adds a detail.
        ("I have two cats.", "I have two cats and a dog."),
        # The same value restated in another spelling.
        ("Our standup is on Fridays.", "Our standup is on Friday."),
        ("I've watched 12 videos of the course.", "Now I've watched 12 course videos."),
        # A value the table reads that the newer clause does not state as a change.
        ("My partner is Sam.", "Communication with my partner is definitely key."),
    ],
)
def test_traps_stay_apart(old: str, new: str) -> None:
    assert decided(turn("a", old, 10), turn("b", new, 2)) == []


def test_only_comparable_memories_are_decided_between() -> None:
    rent = "My monthly rent is $1,850."
    raised = "My rent is now $1,975 a month."
    # Another namespace (another user's, another project's) is another claim.
    assert decided(turn("a", rent, 10, namespace="x"), turn("b", raised, 2)) == []
    # Two memories of one instant cannot be ordered.
    assert decided(turn("a", rent, 2), turn("b", raised, 2)) == []
    # A memory that is neither a turn nor a compiled fact: whose statement it is is not known.
    plain = memory("p", content=rent, created_days_ago=10)
    assert statement_of(plain) is None
    assert decided(plain, turn("b", raised, 2)) == []
    # Compiled facts were judged by compile against the whole history: not again here.
    assert decided(fact("f", rent, 10, claim_key="user.rent"), turn("b", raised, 2)) == []
    facts = [fact("f", rent, 10, claim_key="user.rent"), fact("g", raised, 2, claim_key="u.r")]
    assert decided(*facts) == []
    # The sides of an open conflict stay a conflict.
    pair = [turn("a", rent, 10), turn("b", raised, 2)]
    assert earlier_values(pair, apart=[("a", "b")]) == ()
    # And so does any statement of its claim (turns of the facts the rules could not order).
    assert earlier_values(pair, unsettled={"user.rent"}) == ()


def test_a_memory_holding_a_current_value_is_never_left_out() -> None:
    # "a" states the rent (later replaced) and the only value of the commute: it is kept.
    both = turn("a", "My rent is $1,850 and my commute is 12 miles.", 10)
    newer = turn("b", "My rent is now $1,975.", 2)
    assert decided(both, newer) == []


def test_a_turn_restating_the_earlier_value_goes_with_it() -> None:
    """Compile's `value` rule at assembly: a turn before the current one that states the
    earlier value of the decided claim (an assistant's echo) is left out too; one that names
    the current value as well (the change itself), or comes after it, is kept."""
    older = turn("a", "My plan is Starter.", 10)
    echo = turn("e", "Got it, you're on the Starter plan with 3 seats.", 9, role="assistant")
    change = turn("c", "Moving us from Starter to Pro next month, fine.", 8, role="assistant")
    newer = turn("b", "We switched, my plan is now Pro.", 2)
    later = turn("l", "Starter felt small, honestly.", 1)
    found = decided(older, echo, change, newer, later)
    assert ("b", "a", "user.plan") in found and ("b", "e", "user.plan") in found
    assert {d[1] for d in found} == {"a", "e"}


def test_turns_written_in_one_instant_are_read_in_the_order_they_were_said() -> None:
    """Turns appended in one request share an instant and draw random ids: their numbers in
    the session order them, so the decisions do not depend on the ids drawn. Here the bare
    level ("we're at 5 now") is read only after the count it is a level of."""
    said = [
        (1, "We have 3 engineers on the platform team.", 10.0),
        (2, "Two more engineers joined the platform team, we're at 5 now.", 10.0),
        (3, "We hired again, we have 7 engineers on the platform team now.", 2.0),
    ]
    outcomes = set()
    for ids in (("a", "b", "c"), ("b", "a", "c")):  # the second turn's id sorts first
        turns = [
            dataclasses.replace(turn(memory_id, text, days), heading=f"user, turn {seq}: {text}")
            for memory_id, (seq, text, days) in zip(ids, said, strict=True)
        ]
        names = {memory_id: f"said {seq}" for memory_id, (seq, _, _) in zip(ids, said, strict=True)}
        outcomes.add(tuple(sorted((names[c], names[e]) for c, e, _ in decided(*turns))))
    assert outcomes == {(("said 3", "said 1"), ("said 3", "said 2"))}


def test_only_the_best_ranked_are_read() -> None:
    filler = [turn(f"x{n:02d}", f"Note {n}.", 20) for n in range(READ_DEPTH - 1)]
    older, newer = turn("a", "My rent is $1,850.", 10), turn("b", "My rent is now $1,975.", 2)
    assert decided(older, *filler, newer) == []  # the newer is ranked below the depth read
    assert decided(older, newer, *filler) == [("b", "a", "user.rent")]


def test_the_decisions_are_the_same_whatever_the_order() -> None:
    memories = [
        turn("a", "My monthly rent is $1,850.", 10),
        turn("b", "My rent is now $1,975 a month.", 2),
        turn("c", "I weigh 185 pounds.", 9),
        turn("d", "Down to 178 pounds now.", 5),
        turn("e", "Down to 172 pounds now.", 1),
    ]
    expected = earlier_values(memories)
    assert [(d.current, d.earlier) for d in expected] == [("b", "a"), ("e", "c"), ("e", "d")]
    assert all(isinstance(d, EarlierValue) and d.rule == "stated_value" for d in expected)
    shuffled = list(memories)
    for seed in range(5):
        random.Random(seed).shuffle(shuffled)
        assert earlier_values(shuffled) == expected


def _assemble(
    candidates: list[Candidate],
    *,
    top_k: int | None = 1,
    verdict: Verdict | None = None,
    assembler: Assembler = ASSEMBLER,
    conflicts: tuple[OpenConflict, ...] = (),
    rewritten: Texts | None = None,
    task: str = "what is my rent?",
) -> tuple[str, dict[str, Exclusion], list[str], tuple[EarlierValue, ...]]:
    out = assemble(
        request(task=task, top_k=top_k, budget_tokens=800),
        candidates,
        [],
        total_live=len(candidates),
        profile=DEFAULT_PROFILE,
        tokenizer=load_tokenizer(),
        now=NOW,
        verdict=verdict or Verdict(),
        assembler=assembler,
        conflicts=conflicts,
        rewritten=rewritten or {},
    )
    excluded: dict[str, Exclusion] = {e.memory_id: e for e in out.excluded}
    return out.bundle, excluded, [i.memory_id for i in out.included], out.earlier


def test_the_assembler_leaves_the_earlier_out_and_shows_the_current_in_its_place() -> None:
    # The stale turn ranks first; with top_k 1 the current one would not be shown at all.
    stale = turn("a", "My monthly rent is $1,850.", 10, vector_rank=1)
    current = turn("b", "My landlord raised it, my rent is now $1,975 a month.", 2, vector_rank=2)
    bundle, excluded, included, earlier = _assemble([stale, current])
    assert included == ["b"]
    assert "$1,975" in bundle and "$1,850" not in bundle
    assert excluded["a"].reason == "superseded_in_bundle"
    assert "b, newer" in excluded["a"].detail
    assert [(d.rule, d.current, d.earlier, d.claim_key) for d in earlier] == [
        ("stated_value", "b", "a", "user.rent")
    ]
    # The assembler before leaves both live memories to the ranking, and records nothing.
    bundle, excluded, included, earlier = _assemble([stale, current], assembler=BUDGET_SIZED)
    assert included == ["a"] and earlier == ()
    assert "$1,850" in bundle and excluded["b"].reason == "below_top_k"
    # Without a top_k (the full tier sized by the budget): the same decision.
    _, excluded, included, earlier = _assemble([stale, current], top_k=None)
    assert included == ["b"] and excluded["a"].reason == "superseded_in_bundle"


def test_a_denied_memory_moves_no_decision() -> None:
    stale = turn("a", "My monthly rent is $1,850.", 10, vector_rank=1)
    current = turn("b", "My landlord raised it, my rent is now $1,975 a month.", 2, vector_rank=2)
    denied = {MemoryId("b"): Exclusion(MemoryId("b"), "policy_denied", "rule r1")}
    _, excluded, included, earlier = _assemble([stale, current], verdict=Verdict(denied=denied))
    # The older value is what the agent may see: it is shown, and nothing names the denied one.
    assert included == ["a"] and earlier == ()
    assert excluded["b"].reason == "policy_denied"
    assert all("b" not in e.detail for e in excluded.values() if e.memory_id != "b")
    # A capped memory is not admitted to the full tier either: it decides nothing.
    capped = {MemoryId("b"): Exclusion(MemoryId("b"), "policy_capped", "rule r2")}
    _, _, included, earlier = _assemble([stale, current], verdict=Verdict(capped=capped))
    assert included == ["a"] and earlier == ()


def test_an_open_conflict_is_shown_as_one() -> None:
    stale = turn("a", "My monthly rent is $1,850.", 10, vector_rank=1)
    current = turn("b", "My rent is now $1,975 a month.", 2, vector_rank=2)
    sides = (
        ConflictSide(MemoryId("a"), "agent-1", "k1", stale.created_at),
        ConflictSide(MemoryId("b"), "agent-2", "k2", current.created_at),
    )
    conflict = OpenConflict("user.rent", sides)
    _, _, included, earlier = _assemble([stale, current], conflicts=(conflict,))
    assert sorted(included) == ["a", "b"] and earlier == ()


# A redaction that hides the amounts: the texts the agent is shown of the two salary turns.
STALE_PAY = "My salary is $145,000."
CURRENT_PAY = "Got promoted, my salary is now $168,000."


def _hidden(candidate: Candidate, *values: str) -> tuple[str, str]:
    def hide(text: str) -> str:
        for value in values:
            text = text.replace(value, "[redacted:money]")
        return text

    return hide(candidate.heading), hide(candidate.content)


def test_a_value_the_policy_hides_decides_nothing() -> None:
    """The defence reads what the agent is shown: two salaries a redaction hides are two equal
    markers, so neither turn is left out, and no decision says the hidden values differ or which
    is newer. The same turns shown as stored are decided (the unredacted case as before)."""
    stale = turn("a", STALE_PAY, 10, vector_rank=1)
    current = turn("b", CURRENT_PAY, 2, vector_rank=2)
    ask = "what is my salary?"
    _, excluded, included, earlier = _assemble([stale, current], top_k=2, task=ask)
    assert included == ["b"] and excluded["a"].reason == "superseded_in_bundle"
    assert [(d.current, d.earlier, d.claim_key) for d in earlier] == [("b", "a", "user.salary")]

    rewritten = {
        MemoryId("a"): _hidden(stale, "$145,000"),
        MemoryId("b"): _hidden(current, "$168,000"),
    }
    bundle, excluded, included, earlier = _assemble(
        [stale, current], top_k=2, task=ask, rewritten=rewritten
    )
    assert earlier == ()
    # Both are shown, each with its amount hidden: nothing tells the agent they differ.
    assert sorted(included) == ["a", "b"] and excluded == {}
    assert "[redacted:money]" in bundle
    assert "$145,000" not in bundle and "$168,000" not in bundle


def test_a_hidden_value_against_a_shown_one_decides_nothing() -> None:
    """A redaction marker is no value: the older salary hidden, the newer shown, neither is
    left out (leaving the older out would tell the agent the hidden amount is not the shown
    one), and the hidden amount appears nowhere."""
    stale = turn("a", STALE_PAY, 10, vector_rank=1)
    current = turn("b", CURRENT_PAY, 2, vector_rank=2)
    rewritten = {MemoryId("a"): _hidden(stale, "$145,000")}
    bundle, excluded, included, earlier = _assemble(
        [stale, current], top_k=2, task="what is my salary?", rewritten=rewritten
    )
    assert earlier == ()
    assert sorted(included) == ["a", "b"] and excluded == {}
    assert "[redacted:money]" in bundle and "$145,000" not in bundle


def test_a_turn_rewritten_elsewhere_is_still_read() -> None:
    """A rewrite hides what it hides, no more: a turn whose address is redacted still states its
    salary, and the newer salary still leaves it out (reading no rewritten turn at all would
    keep a stale value the agent can read)."""
    stale = turn("a", f"{STALE_PAY} Mail me at ann@example.com.", 10, vector_rank=1)
    current = turn("b", CURRENT_PAY, 2, vector_rank=2)
    rewritten = {MemoryId("a"): (stale.heading, stale.content.replace("ann@example.com", "[x]"))}
    _, excluded, included, earlier = _assemble(
        [stale, current], task="what is my salary?", rewritten=rewritten
    )
    assert included == ["b"] and excluded["a"].reason == "superseded_in_bundle"
    assert [(d.current, d.earlier) for d in earlier] == [("b", "a")]


def test_the_rewrites_asked_for_are_those_of_the_admitted_read() -> None:
    """Selection asks the policy for the rewritten texts of the admitted candidates it reads,
    best ranked first, before it decides: never of a denied one."""
    stale = turn("a", STALE_PAY, 10, vector_rank=1)
    denied_one = turn("c", "My salary is $150,000 now.", 5, vector_rank=2)
    current = turn("b", CURRENT_PAY, 2, vector_rank=3)
    found = Found((stale, denied_one, current), (), 3)
    prepared = prepare(
        request(task="what is my salary?", top_k=2), found, profile=DEFAULT_PROFILE, now=NOW
    )
    asked: list[list[MemoryId]] = []

    def shown(memory_ids: Sequence[MemoryId]) -> Texts:
        asked.append(list(memory_ids))
        return {}

    denied = {MemoryId("c"): Exclusion(MemoryId("c"), "policy_denied", "rule r1")}
    selection = select(prepared, Verdict(denied=denied), ASSEMBLER, shown)
    assert asked == [["a", "b"]]
    assert [(d.current, d.earlier) for d in selection.earlier] == [("b", "a")]
