"""The question's decision by the values of the kind it asks for (issue 33; rule `asked_value`
of `gateway.core.current_values`).

Under an assembler that reads the task as a question (`asked_values`), the question decides
too (`answered`, rule `asked_value`): when it asks for a kind of value (a count, money, a span
of time, ...: `gateway.core.asked_values`), the user's newest turn with such a value in a
sentence about the question's words states the current one, and older turns whose values of
that dimension all differ are left out, whatever the extractor can read of their attribute,
with the assistant's echoes of those values and what compile made of them (a fact quoting one,
a digest retelling it). The same guards hold (one namespace, different instants, open
conflicts, a turn holding another claim's current value never left out); a turn whose only
claim is the one the question decides is not kept by it.
"""

from __future__ import annotations

from collections.abc import Sequence

from gateway.core.asked_values import Asked
from gateway.core.asking import ON_TOPIC, Asking, stated_on
from gateway.core.earlier_value import EarlierValue, leave_out
from gateway.core.extraction.typed_values import TypedValue
from gateway.core.model import Candidate
from gateway.core.remembered_turns import order, statement_of
from gateway.core.same_values import one_value
from gateway.core.supersession import mentions
from gateway.core.turn_answers import Said, said

__all__ = ["answered"]


def answered(asking: Asking, found: dict[str, EarlierValue]) -> None:
    """The question's own reading (`gateway.core.asked_values`): of the turns with a value of
    the kind the question asks for in a sentence about its attribute, the user's newest with a
    value of a dimension (a count of followers, money) states its current value; an older turn
    (the user's, or the assistant's) whose values of that dimension all differ from it states an
    earlier one and is left out, with the older turns that name one of those earlier values and
    say something of the attribute (the assistant's "based on your pre-approval of $350,000")."""
    ordered, question, held, apart, compiled = asking
    about = _answering(ordered, question)
    newest: dict[str, tuple[Candidate, list[TypedValue]]] = {}
    for turn, who, answers in about:
        # A name has no dimension to say it replaces another: its sentence must say a change.
        current = [s.value for s in answers if s.value.dimension != "name" or s.change]
        for dimension in {v.dimension for v in current} if who == "user" else ():
            newest[dimension] = (turn, [v for v in current if v.dimension == dimension])
    winners = {turn.memory_id for turn, _ in newest.values()}
    for dimension in sorted(newest):
        winner, current = newest[dimension]
        older = [
            (turn, [s.value for s in answers if s.value.dimension == dimension])
            for turn, _, answers in about
            if order(turn) < order(winner)
            and turn.memory_id not in winners
            and turn.created_at != winner.created_at
            and frozenset((turn.memory_id, winner.memory_id)) not in apart
            # A turn saying nothing of the question holds no answer and echoes none.
            and question.may_touch(turn.content)
            and not any(mentions(turn.content, c.text) for c in current)
        ]
        # A turn states an earlier value when its values of the dimension all differ.
        stale = {
            turn.memory_id: bool(values)
            and not any(one_value(v, c) for v in values for c in current)
            for turn, values in older
        }
        earlier = [v.text for turn, values in older if stale[turn.memory_id] for v in values]
        for turn, values in older:
            echoes = any(mentions(turn.content, value) for value in earlier) and question.touches(
                turn.content
            )
            # A turn holding the current value of a claim is never left out, unless the claim
            # is the one the question decides: every value it holds is one decided earlier.
            holds = any(
                not any(mentions(value, v.text) or mentions(v.text, value) for v in values)
                for value in held.get(turn.memory_id, ())
            )
            if (stale[turn.memory_id] or echoes) and not holds and turn.memory_id not in found:
                leave_out(found, turn, winner, question.claim)
        # What compile made of the earlier statements: a fact quoting one, a session's digest
        # retelling it (compile could not read the newer one, or the fact would be retired).
        for memory in compiled:
            said_on = stated_on(memory)
            if (
                memory.memory_id not in found
                and said_on is not None
                and said_on <= winner.said_at.date()
                and any(mentions(memory.content, value) for value in earlier)
                and not any(mentions(memory.content, c.text) for c in current)
                and question.touches(memory.content)
            ):
                leave_out(found, memory, winner, question.claim)


def _answering(
    ordered: Sequence[Candidate], question: Asked
) -> list[tuple[Candidate, str, list[Said]]]:
    """Each remembered turn, who said it, and its values of the asked kind in sentences about
    the question's attribute: saying at least `ON_TOPIC` of what the best of the user's says."""
    read: list[tuple[Candidate, str, Sequence[Said]]] = []
    for turn in ordered:
        statement = statement_of(turn)
        if statement is not None:
            read.append((turn, statement[0], said(question, statement[1], statement[0])))
    best = max((s.anchor for _, who, all_ in read if who == "user" for s in all_), default=0.0)
    return [
        (
            turn,
            who,
            # Reading an update, a user's sentence saying its value changed answers too,
            # however few of the question's words it says ("my rate goes up to $172 a month").
            [
                s
                for s in all_
                if (best and s.anchor >= ON_TOPIC * best)
                or (question.updates and s.change and who == "user")
            ],
        )
        for turn, who, all_ in read
    ]
