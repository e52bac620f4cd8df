"""The question's decision by its sentences read whole, for a question whose answer may be any
phrase (issue 33; rule `asked_value` of `gateway.core.current_values`).

A question whose answer may be any phrase ("What kind of schedule do I work now?": "part-time")
is read by its sentences whole under assemble/2026-12-05.4 (`restated`, rule `asked_value`):
the user's newest turn about it saying a change of their own is current, and at most two older
turns of theirs about the same words, saying nothing else it says of them, are left out.
Reading an update as chat tells it (assemble/2026-12-06.1, `Asked.updates`), a turn's
sentences say the question together, a name two of the user's turns say of it is its thing,
two different values are two whatever words they share (`_two_values`), and the assistant's
reply to an earlier statement goes with it (`gateway.core.retellings`). Turns are ordered by
when they were said (`Candidate.said_at`: an imported history is written in one go, in any
order).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from gateway.core.asked_values import Asked
from gateway.core.asking import ON_TOPIC, Asking
from gateway.core.earlier_value import EarlierValue, leave_out
from gateway.core.extraction.typed_values import typed_values
from gateway.core.model import Candidate
from gateway.core.remembered_turns import order, statement_of
from gateway.core.retellings import retellings
from gateway.core.same_values import one_value
from gateway.core.supersession import mentions
from gateway.core.turn_answers import Told, told

__all__ = ["MAX_EARLIER", "restated"]

# Of a question read whole, the most older turns a change replaces (`restated`).
MAX_EARLIER = 2


def restated(asking: Asking, found: dict[str, EarlierValue]) -> None:
    """The question read whole (`asked_values.told`): of the user's turns with a sentence
    about its attribute (saying at least `ON_TOPIC` of what the best of theirs says), the newest
    whose sentence says a change of their own states the current answer. An older turn of the
    user's states an earlier one when it says at least `ON_TOPIC` of the question's words the
    current one says, and nothing else the current one says of them (where one value said
    twice would show: "still at Halvorsen, now leading dispatch"), and names no name the
    current one does not unless the current one names a new one beside its change; it is left
    out, with what compile made of it."""
    ordered, question, held, apart, _ = asking
    read = [
        (turn, statement[0], told(question, statement[1]))
        for turn in ordered
        if (statement := statement_of(turn)) is not None
    ]
    said_of = _said_of(question, read)
    best = _best(question, said_of, read)
    winner, told_now = next(
        (
            (turn, _about(question, said_of, tolds, best))
            for turn, who, tolds in reversed(read)
            if who == "user" and any(t.change for t in _about(question, said_of, tolds, best))
        ),
        (None, []),
    )
    if winner is None:
        return
    current = frozenset().union(*(t.rest for t in told_now))
    # What of the question the current answer is about: an older turn saying less than
    # `ON_TOPIC` of it is about another thing ("what's a good birthday dinner spot?" beside "my
    # 40th birthday project is learning the cello").
    topic = said_of(told_now)
    # A name said beside the change ("so I'm going with a ThinkPad instead of the Mac"): an
    # older turn naming another is replaced by it, where one naming a name the current one
    # does not, beside no new name, is the name reading's to decide.
    renamed = {n for t in told_now if t.change for n in t.near_names}
    earlier: set[str] = set()
    earlier_turns: list[Candidate] = []
    for turn, who, tolds in read:
        if order(turn) >= order(winner):
            break
        rest = frozenset().union(*(t.rest for t in tolds))
        # A turn holding the current value of a claim stays, unless that claim is the one the
        # question decides: its value said in the sentences about the question.
        holds = any(
            not any(mentions(t.sentence, value) for t in tolds)
            for value in held.get(turn.memory_id, ())
        )
        if (
            who != "user"
            or not tolds
            or holds
            or turn.memory_id in found
            or turn.created_at == winner.created_at
            or frozenset((turn.memory_id, winner.memory_id)) in apart
            or (rest & current and not (question.updates and _two_values(tolds, told_now)))
            or len(said_of(tolds) & topic) < ON_TOPIC * len(topic)
            or (
                any(not mentions(winner.content, n) for t in tolds for n in t.names)
                and not any(not mentions(turn.content, n) for n in renamed)
            )
        ):
            continue
        earlier_turns.append(turn)
        earlier |= rest
    # A value is replaced where it was said, once or twice; a question whose words the user
    # said in more older turns than that asks of a subject with many facts, not of one value.
    if len(earlier_turns) > MAX_EARLIER:
        return
    for turn in earlier_turns:
        leave_out(found, turn, winner, question.claim)
    if earlier:
        retellings(asking, read, (winner, current), (earlier_turns, earlier), found)


def _said_of(
    question: Asked, read: Sequence[tuple[Candidate, str, Sequence[Told]]]
) -> Callable[[Sequence[Told]], frozenset[str]]:
    """What sentences say of the question: its words; and, reading an update
    (`Asked.updates`), the names said in the question's sentences of two turns of the user's or
    more, which name its thing ("paused my membership at Summit Block climbing gym", then
    "reactivated my Summit Block membership"), casefolded."""
    if not question.updates:
        return lambda tolds: frozenset().union(*(t.said for t in tolds))
    by_turn = [
        {n.casefold() for t in tolds for n in t.names} for _, who, tolds in read if who == "user"
    ]
    named = frozenset(n for n in set().union(*by_turn) if sum(n in ns for ns in by_turn) > 1)
    return lambda tolds: frozenset().union(
        *(t.said for t in tolds), *({n.casefold() for n in t.names} & named for t in tolds)
    )


def _best(
    question: Asked,
    said_of: Callable[[Sequence[Told]], frozenset[str]],
    read: Sequence[tuple[Candidate, str, Sequence[Told]]],
) -> int:
    """How much of the question the user's sentence saying most of it says (reading an update,
    the turn: an update says its thing across its sentences), counted (not a rounded share,
    which would put one of three below half of two of three)."""
    users = [tolds for _, who, tolds in read if who == "user"]
    if question.updates:
        return max((len(said_of(tolds)) for tolds in users), default=0)
    return max((len(said_of([t])) for tolds in users for t in tolds), default=0)


def _about(
    question: Asked,
    said_of: Callable[[Sequence[Told]], frozenset[str]],
    tolds: Sequence[Told],
    best: int,
) -> list[Told]:
    """Of a turn's sentences, those about the question: saying at least `ON_TOPIC` of what the
    best of the user's says; reading an update, all of a turn's when they say so much together
    ("RAN THE LAKEFRONT HALF YESTERDAY. 1:54:12!!! new PR")."""
    if question.updates:
        return list(tolds) if len(said_of(tolds)) >= ON_TOPIC * best else []
    return [t for t in tolds if len(said_of([t])) >= ON_TOPIC * best]


def _two_values(older: Sequence[Told], newer: Sequence[Told]) -> bool:
    """Whether two turns' sentences say two values: each holds typed values and none of the
    older's is one of the newer's. Then the words they share are what the values are said in
    ("$85 an hour", "$110 an hour"), not one value said twice. Read only where they share
    words, so the values are found only then."""
    old = [v for t in older for v in typed_values(t.sentence)]
    new = [v for t in newer for v in typed_values(t.sentence)]
    return bool(old and new) and not any(one_value(a, b) for a in old for b in new)
