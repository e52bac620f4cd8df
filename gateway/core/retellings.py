"""What retells the earlier statements a question's sentences read whole decided on
(`gateway.core.restated_values`; issue 33), left out with them: what compile made of them (a
fact quoting one, a digest retelling it), told before the current one; and, reading an update
as chat tells it (assemble/2026-12-06.1, `Asked.updates`), the assistant's reply to an earlier
statement, which goes with it.
"""

from __future__ import annotations

import itertools
from collections.abc import Collection, Sequence

from gateway.core.asking import Asking, stated_on
from gateway.core.earlier_value import EarlierValue, leave_out
from gateway.core.model import Candidate
from gateway.core.remembered_turns import TURN
from gateway.core.supersession import mentions
from gateway.core.turn_answers import Told, told

__all__ = ["retellings"]


def retellings(
    asking: Asking,
    read: Sequence[tuple[Candidate, str, Sequence[Told]]],
    now: tuple[Candidate, frozenset[str]],
    before: tuple[Sequence[Candidate], Collection[str]],
    found: dict[str, EarlierValue],
) -> None:
    """What retells the earlier statements (`before`: the turns and what they said beside the
    question's words) and not the current one (`now`: its turn and what it says), left out with
    them: what compile made of them (a fact quoting one, a digest retelling it), told before the
    current one; and, reading an update, the assistant's reply to one ("I have a cleaning
    booked with Dr. Okafor this Thursday"), read so too or naming a name the earlier one said
    of the question and the current one does not."""
    question, compiled = asking.question, asking.compiled
    (winner, current), (earlier_turns, earlier) = now, before
    for memory in compiled:
        said_on = stated_on(memory)
        if memory.memory_id in found or said_on is None or said_on > winner.said_at.date():
            continue  # read a memory's sentences only when its day may make it earlier
        if _retells(told(question, memory.content), current, earlier):
            leave_out(found, memory, winner, question.claim)
    if not question.updates:
        return
    said_earlier = {turn.memory_id for turn in earlier_turns}
    named = {
        n
        for turn, _, tolds in read
        if turn.memory_id in said_earlier
        for t in tolds
        for n in t.names
        if not mentions(winner.content, n)
    }
    for reply, tolds in _replies(read, said_earlier):
        if reply.memory_id not in found and (
            _retells(tolds, current, earlier) or any(mentions(reply.content, n) for n in named)
        ):
            leave_out(found, reply, winner, question.claim)


def _retells(retold: Sequence[Told], current: frozenset[str], earlier: Collection[str]) -> bool:
    """Whether sentences about the question say what earlier statements said of it, beside its
    words, and nothing the current one says."""
    return (
        bool(retold)
        and not any(t.rest & current for t in retold)
        and any(t.rest & frozenset(earlier) for t in retold)
    )


def _replies(
    read: Sequence[tuple[Candidate, str, Sequence[Told]]], earlier: Collection[str]
) -> list[tuple[Candidate, Sequence[Told]]]:
    """The assistant's reply to each of the turns whose ids are `earlier`: the turn said next,
    if it is the assistant's and the next of its session (a turn's number)."""
    replies = []
    for (turn, _, _), (after, who, tolds) in itertools.pairwise(read):
        said, reply = TURN.match(turn.heading), TURN.match(after.heading)
        if (
            turn.memory_id in earlier
            and who == "assistant"
            and said is not None
            and reply is not None
            and int(reply.group("seq")) == int(said.group("seq")) + 1
        ):
            replies.append((after, tolds))
    return replies
