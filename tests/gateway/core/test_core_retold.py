"""A session digest shown beside the turns it retells (issue 33, `assemble/2026-12-06.5`): packed
after the other memories in full when every line it tells is a turn among them, in its place
when any line is its own; read as the policy shows them; the versions before keep their order."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from datetime import timedelta

from gateway.core.assembly import assemble
from gateway.core.model import Candidate, MemoryId
from gateway.core.ranking import Ranked
from gateway.core.retold import retold_last
from gateway.core.tokens import load_tokenizer
from gateway.core.verdict import Verdict
from gateway.core.versions import ASSEMBLER, DEFAULT_PROFILE, FIRST_SAID, Assembler
from tests.gateway.core.core_samples import NOW, memory, request

DAY = (NOW - timedelta(days=3)).date().isoformat()


def said(memory_id: str, seq: int, role: str, text: str, *, days_ago: float = 3) -> Candidate:
    """A remembered turn of one session, said `days_ago`."""
    candidate = memory(
        memory_id,
        heading=f"{role}, turn {seq}: {text[:40]}",
        content=text,
        memory_type="episodic",
        created_days_ago=days_ago,
    )
    return dataclasses.replace(candidate, source_type="turn", source_ref=f"turn-{memory_id}")


def digest(memory_id: str, *lines: str, day: str = DAY) -> Candidate:
    """A compiled session's digest of the turns said on `day` (three days ago), telling
    `lines`."""
    candidate = memory(
        memory_id,
        heading=f"Session digest, {day} to {day}",
        content=f"Session of {len(lines)} turn{'s' * (len(lines) != 1)}, {day} to {day}.\n"
        + "\n".join(lines),
        memory_type="episodic",
        created_days_ago=3,
    )
    return dataclasses.replace(candidate, source_type="compile", source_ref="session-1")


ASKED = said("a", 1, "user", "How far ahead can I make pie crust?\nI host on Thursday.")
ANSWER = said("b", 2, "assistant", "Pie dough keeps for 2 to 3 days in the fridge.")
RETELLING = digest(
    "d",
    "- t1 user: How far ahead can I make pie crust?",
    "- t1 user: I host on Thursday.",  # the turn's second line, its whitespace folded
    "- t2 assistant: Pie dough keeps for 2 to 3 days in the fridge.",
)


def ranked(*candidates: Candidate) -> list[Ranked]:
    return [Ranked(c, 0.0, {}, 0, {}) for c in candidates]


def order(
    *candidates: Candidate, texts: Mapping[MemoryId, tuple[str, str]] | None = None
) -> list[str]:
    asked: list[list[MemoryId]] = []

    def shown(memory_ids: Sequence[MemoryId]) -> Mapping[MemoryId, tuple[str, str]]:
        asked.append(list(memory_ids))
        return texts or {}

    out: list[str] = [r.candidate.memory_id for r in retold_last(ranked(*candidates), shown)]
    # The policy's texts are asked of the memories in full only when a digest is among them.
    assert asked == ([[c.memory_id for c in candidates]] if "d" in out else [])
    return out


def test_a_digest_retelling_only_turns_in_full_is_packed_after_them() -> None:
    assert order(RETELLING, ASKED, ANSWER) == ["a", "b", "d"]
    assert order(ASKED, RETELLING, ANSWER) == ["a", "b", "d"]
    # Without the turns it retells, or with one of them missing, it keeps its place: it is then
    # the one way the agent reads that turn.
    assert order(RETELLING, ASKED) == ["d", "a"]
    assert order(ASKED, ANSWER) == ["a", "b"]
    # A line said on another day than the digest covers, or by the other role, is not the turn's.
    other_day = said("c", 2, "assistant", ANSWER.content, days_ago=30)
    assert order(RETELLING, ASKED, other_day) == ["d", "a", "c"]
    by_user = said("e", 2, "user", ANSWER.content)
    assert order(RETELLING, ASKED, by_user) == ["d", "a", "e"]
    # A digest whose content reads as none (a compiled episode of another shape) is not one.
    odd = dataclasses.replace(RETELLING, content="- t1 user: How far ahead can I make pie crust?")
    assert order(odd, ASKED, ANSWER) == ["d", "a", "b"]


def test_the_turns_and_the_digest_are_read_as_the_policy_shows_them() -> None:
    # The policy hides the answer's figures in the turn, not (say) in the digest: the digest's
    # line then tells what the turn shown does not, and keeps its place.
    texts = {MemoryId("b"): (ANSWER.heading, "Pie dough keeps for [redacted] in the fridge.")}
    assert order(RETELLING, ASKED, ANSWER, texts=texts) == ["d", "a", "b"]
    # Hidden alike in both, the digest again tells nothing the turns do not.
    hidden = "- t2 assistant: Pie dough keeps for [redacted] in the fridge."
    told = RETELLING.content.replace(RETELLING.content.split("\n")[3], hidden)
    texts[MemoryId("d")] = (RETELLING.heading, told)
    assert order(RETELLING, ASKED, ANSWER, texts=texts) == ["a", "b", "d"]


def _included(assembler: Assembler, budget: int) -> list[str]:
    # The digest is the nearest by both retrievers, the turns after it.
    first = dataclasses.replace(RETELLING, vector_rank=1, lexical_rank=1, lexical_score=0.9)
    out = assemble(
        request(task="pie crust ahead", budget_tokens=budget),
        [first, ASKED, ANSWER],
        [],
        total_live=3,
        profile=DEFAULT_PROFILE,
        tokenizer=load_tokenizer(),
        now=NOW,
        verdict=Verdict(),
        assembler=assembler,
    )
    return [i.memory_id for i in out.included]


def test_the_digest_takes_only_the_room_the_turns_leave() -> None:
    # Ranked first, the digest came first under the assembler before; now the turns do, and a
    # budget too small for all three leaves the digest out, not a turn.
    assert _included(FIRST_SAID, 800)[0] == "d"
    assert _included(ASSEMBLER, 800) == ["a", "b", "d"]
    assert "d" not in _included(ASSEMBLER, 190) and {"a", "b"} <= set(_included(ASSEMBLER, 190))
