"""Which of two remembered turns in one bundle states the current value of an attribute (issue
33's second line of defence, after compile's supersession; ARCHITECTURE §12). Pure: candidates
in, decisions out.

Compile retires a stale turn when it recognizes the claim the turn states; a turn it never read
(no compile yet) or whose claim it did not resolve reaches the bundle live. Here the turns an
assembly may show are read again, oldest first, by the `rules` extractor of compile (the
attribute table, then subject, attribute phrase and typed value by structure:
`gateway.core.extraction`), each with the turns before it as its known claims. Two turns whose
statements resolve to one claim key with different values: the newer states the current value,
the older an earlier one, and the older is left out of the bundle (`superseded_in_bundle`),
with the other turns before the newer that state the earlier value of that claim (compile's
`value` rule, `supersession.states`: an assistant's "you're on the Starter plan"), unless they
name the current value too.

Conservative by construction, since leaving out a memory that still holds costs the agent a
fact:

- only remembered turns are read (their role from their heading). A compiled fact was judged
  by compile's supersession against the namespace's whole history (a newer fact of its claim
  key retires it in the store; two that cannot be ordered are an open conflict): read again
  here from its one clause, it would be judged on less. Any other memory states nothing here,
  since whose statement it is cannot be told;
- the extractor's structure keeps traps apart: another person's value, a second subject, a
  narrower claim ("on the data team"), a hedge, a goal or a hypothetical states no value of
  the user's attribute, and a value restated in another spelling is no change;
- two turns are compared only within one namespace and only when they were written at
  different instants (turns are written in the order they were said); an open conflict stays
  a conflict (its two sides, and any statement of its claim);
- the newer statement must read as replacing the older value: a change word, the assistant's
  confirmation of an action, two typed values of one dimension, or two names (`_replaces`);
- a turn that states the current value of any claim is never left out, even when it states an
  earlier value of another.

Under an assembler that reads the task as a question (`asked_values`), the question decides
too (`_answered`, rule `asked_value`): when it asks for a kind of value (a count, money, a span
of time, ...: `gateway.core.asked_values`), the user's newest turn with such a value in a
sentence about the question's words states the current one, and older turns whose values of
that dimension all differ are left out, whatever the extractor can read of their attribute,
with the assistant's echoes of those values and what compile made of them (a fact quoting one,
a digest retelling it). The same guards hold (one namespace, different instants, open
conflicts, a turn holding another claim's current value never left out); a turn whose only
claim is the one the question decides is not kept by it.

A question whose answer may be any phrase ("What kind of schedule do I work now?": "part-time")
is read by its sentences whole under assemble/2026-12-05.4 (`_restated`, rule `asked_value`):
the user's newest turn about it saying a change of their own is current, and at most two older
turns of theirs about the same words, saying nothing else it says of them, are left out.
Reading an update as chat tells it (assemble/2026-12-06.1, `Asked.updates`), a turn's
sentences say the question together, a name two of the user's turns say of it is its thing,
two different values are two whatever words they share (`_two_values`), and the assistant's
reply to an earlier statement goes with it (`_retellings`). Turns are ordered by when they were
said (`Candidate.said_at`: an imported history is written in one go, in any order).

The caller passes only the candidates the policy admits, in rank order, so no decision reads,
names or is moved by a memory the policy denies; the best ranked `READ_DEPTH` are read. Their
texts are those the agent would be shown, a redaction's rewrites applied
(`gateway.core.selection`): a value the policy hides is read as its marker, so two hidden values
are one and decide nothing, and no decision tells the agent whether they differ.
"""

from __future__ import annotations

import contextlib
import itertools
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Literal, NamedTuple

from gateway.core.asked_values import Asked, Said, Told, said, told
from gateway.core.extraction.facts import Episode, Fact
from gateway.core.extraction.generalized import extract
from gateway.core.extraction.resolution import CHANGE
from gateway.core.extraction.typed_values import (
    TypedValue,
    dimension_of,
    says_nothing,
    typed_values,
)
from gateway.core.model import Candidate, MemoryId
from gateway.core.supersession import jaccard, mentions, stale_phrases, states, words

__all__ = ["READ_DEPTH", "RULE", "EarlierValue", "earlier_values", "statement_of"]

RULE: Literal["stated_value"] = "stated_value"
ASKED: Literal["asked_value"] = "asked_value"
# Of the sentences with a value of the asked kind, those saying at least this share of what the
# best of them says of the question's attribute are about it (chosen on fold A of the dev sets,
# bench/RESULTS.md): one that says less may be another thing with a value of the same kind.
ON_TOPIC = 0.5
# Of a question read whole, the most older turns a change replaces (`_restated`).
MAX_EARLIER = 2
# The candidates read, best ranked first: reading costs a fraction of a millisecond a turn (the
# attribute table, then the statements' structure), and a bundle shows the best ranked.
READ_DEPTH = 40

_TURN = re.compile(r"^(?P<role>user|assistant), turn (?P<seq>\d+): ")


@dataclass(frozen=True, slots=True)
class EarlierValue:
    """A decision: `earlier` states a value of `claim_key` that `current`, newer, replaces.
    `score` is how alike the two memories' texts are (token-set Jaccard, dates aside, as the
    `similarity` rule of compile measures it; rounded to three places), for an auditor to weigh
    the decision by: the claim key decides it."""

    current: MemoryId
    earlier: MemoryId
    claim_key: str
    score: float
    rule: Literal["stated_value", "asked_value"] = RULE


def statement_of(candidate: Candidate) -> tuple[str, str] | None:
    """Who states a remembered turn and what it says (its role from the heading the session
    writer gave it); None for any other memory."""
    if candidate.source_type != "turn" or candidate.memory_type != "episodic":
        return None
    turn = _TURN.match(candidate.heading)
    return (turn.group("role"), candidate.content) if turn else None


def _order(candidate: Candidate) -> tuple[datetime, datetime, int, str]:
    """When a turn was said (`Candidate.said_at`: an imported history's turns are written
    today, in whatever order it was imported), then written, then its place in its session:
    turns appended in one request share an instant, and their ids are random within it, so the
    turn's number orders them as they were said (the same decisions whatever ids they drew).
    A turn remembered before turns carried their instant (`valid_from`) is ordered by its
    write alone, as the versions that decided over it did."""
    turn = _TURN.match(candidate.heading)
    return (
        candidate.said_at,
        candidate.created_at,
        int(turn.group("seq")) if turn else 0,
        candidate.memory_id,
    )


def _same(a: str, b: str) -> bool:
    """One value in two spellings: "Fridays" / "Friday" (case, a trailing period), or one
    amount of one dimension however the words after it run ("five bullets", "five bulleted
    statements")."""

    def folded(text: str) -> str:
        return re.sub(r"(?<=\w)s\b", "", " ".join(text.casefold().strip(" .!'\"").split()))

    if folded(a) == folded(b):
        return True
    typed_a, typed_b = typed_values(a), typed_values(b)
    return (
        len(typed_a) == len(typed_b) == 1
        and typed_a[0].dimension == typed_b[0].dimension
        and typed_a[0].size is not None
        and typed_a[0].size == typed_b[0].size
    )


def _one_value(a: TypedValue, b: TypedValue) -> bool:
    """Two typed values that are one: of one dimension and size ("about 6 months" / "six
    months"), or one text in two spellings."""
    if a.dimension == b.dimension and a.size is not None and a.size == b.size:
        return True
    if a.dimension == b.dimension == "name":  # "Mint" and "Mint Mobile", "Dr. Lin" and "Lin"
        return mentions(a.text, b.text) or mentions(b.text, a.text)
    return _same(a.text, b.text)


def _replaces(newer: Fact, older: Fact) -> bool:
    """Whether the newer statement reads as replacing the older value: it says it is a change
    ("now", "new", "switched", "instead", "down to": the words compile resolves an amount's
    change by; or "from X to Y"), it is the assistant's confirmation of an action, or the two
    values are alike in kind: typed values of one dimension ("185 pounds" then "172 pounds": a
    weight has one value at a time) or two names ("Pixel" then "iPhone"). A value read by the
    table alone, in common words and without any of these ("my partner is definitely key"),
    may be another thing said with the same words, not a new value."""
    who, _, said = newer.content.partition(": ")
    if who.endswith("the assistant confirmed") or newer.previous or CHANGE.search(said):
        return True
    new, old = newer.value or "", older.value or ""
    dimension = dimension_of(new)
    if dimension is not None:
        return dimension == dimension_of(old)
    return _named(new) and _named(old)


def _named(value: str) -> bool:
    """A name: every word capitalized or with a capital inside ("iPhone", "Team Nimbus")."""
    tokens = value.split()
    return bool(tokens) and all(any(c.isupper() for c in t) for t in tokens)


def _words(candidate: Candidate) -> frozenset[str]:
    return words(f"{candidate.heading}\n{candidate.content}")


def _in_one_namespace(
    candidates: Sequence[Candidate],
    apart: Collection[frozenset[str]],
    unsettled: Collection[str],
    question: Asked | None,
) -> list[EarlierValue]:
    ordered = sorted((c for c in candidates if statement_of(c) is not None), key=_order)
    by_id = {c.memory_id: c for c in ordered}
    episodes = []
    for turn in ordered:
        read = statement_of(turn)
        if read is not None:
            episodes.append(Episode((turn.memory_id,), read[0], read[1], turn.said_at))
    # Each fact names its turn (its episode's only source); in episode order, so the last of a
    # claim key is the newest turn's.
    stated: dict[str, list[Fact]] = {}
    for fact in extract(episodes):
        if fact.claim_key is not None and fact.value:
            stated.setdefault(fact.claim_key, []).append(fact)
    holders = {facts[-1].sources[0] for facts in stated.values()}
    found: dict[str, EarlierValue] = {}
    for key in sorted(stated.keys() - set(unsettled)):
        newest = stated[key][-1]
        winner = by_id[MemoryId(newest.sources[0])]
        for fact in stated[key][:-1]:
            loser = by_id[MemoryId(fact.sources[0])]
            if (
                loser.memory_id in holders
                or loser.memory_id in found
                or loser.created_at == winner.created_at
                or frozenset((loser.memory_id, winner.memory_id)) in apart
                or _same(fact.value or "", newest.value or "")
                or not _replaces(newest, fact)
            ):
                continue
            score = round(jaccard(_words(loser), _words(winner)), 3)
            found[loser.memory_id] = EarlierValue(winner.memory_id, loser.memory_id, key, score)
    _echoes(ordered, stated, found, holders)
    if question is not None:
        held: dict[str, list[str]] = {}
        for facts in stated.values():
            held.setdefault(facts[-1].sources[0], []).append(facts[-1].value or "")
        compiled = [c for c in candidates if c.source_type == "compile"]
        _by_question(_Asking(ordered, question, held, apart, compiled), found)
    return list(found.values())


class _Asking(NamedTuple):
    """What the question's decisions read: the remembered turns in the order they were said,
    the question, the current values of claims each turn holds (by memory id), the pairs never
    decided between, and what compile wrote."""

    ordered: Sequence[Candidate]
    question: Asked
    held: Mapping[str, Sequence[str]]
    apart: Collection[frozenset[str]]
    compiled: Sequence[Candidate]


def _by_question(asking: _Asking, found: dict[str, EarlierValue]) -> None:
    """The question's decisions: by the values of the kind it asks for, then, where the
    assembler reads them, by its sentences read whole (a turn left out once stays so)."""
    _answered(asking, found)
    if asking.question.statements:
        _restated(asking, found)


def _answered(asking: _Asking, found: dict[str, EarlierValue]) -> None:
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
            if _order(turn) < _order(winner)
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
            and not any(_one_value(v, c) for v in values for c in current)
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
                _leave_out(found, turn, winner, question.claim)
        # What compile made of the earlier statements: a fact quoting one, a session's digest
        # retelling it (compile could not read the newer one, or the fact would be retired).
        for memory in compiled:
            said_on = _stated_on(memory)
            if (
                memory.memory_id not in found
                and said_on is not None
                and said_on <= winner.said_at.date()
                and any(mentions(memory.content, value) for value in earlier)
                and not any(mentions(memory.content, c.text) for c in current)
                and question.touches(memory.content)
            ):
                _leave_out(found, memory, winner, question.claim)


def _restated(asking: _Asking, found: dict[str, EarlierValue]) -> None:
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
        if _order(turn) >= _order(winner):
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
        _leave_out(found, turn, winner, question.claim)
    if earlier:
        _retellings(asking, read, (winner, current), (earlier_turns, earlier), found)


def _retellings(
    asking: _Asking,
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
        said_on = _stated_on(memory)
        if memory.memory_id in found or said_on is None or said_on > winner.said_at.date():
            continue  # read a memory's sentences only when its day may make it earlier
        if _retells(told(question, memory.content), current, earlier):
            _leave_out(found, memory, winner, question.claim)
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
            _leave_out(found, reply, winner, question.claim)


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
        said, reply = _TURN.match(turn.heading), _TURN.match(after.heading)
        if (
            turn.memory_id in earlier
            and who == "assistant"
            and said is not None
            and reply is not None
            and int(reply.group("seq")) == int(said.group("seq")) + 1
        ):
            replies.append((after, tolds))
    return replies


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
    return bool(old and new) and not any(_one_value(a, b) for a in old for b in new)


_ISO_DAY = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")


def _stated_on(memory: Candidate) -> date | None:
    """The last day a compiled memory says its statements were made on: a fact's "On
    2023-08-16 the user said", a digest's "Session digest, 2023-08-11 to 2023-08-16"."""
    first_line = memory.content.partition("\n")[0]
    days: list[date] = []
    for y, m, d in _ISO_DAY.findall(f"{memory.heading} {first_line}"):
        with contextlib.suppress(ValueError):  # "2023-13-45" names no day
            days.append(date(int(y), int(m), int(d)))
    return max(days, default=None)


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


def _leave_out(
    found: dict[str, EarlierValue], turn: Candidate, winner: Candidate, claim: str
) -> None:
    score = round(jaccard(_words(turn), _words(winner)), 3)
    found[turn.memory_id] = EarlierValue(winner.memory_id, turn.memory_id, claim, score, ASKED)


def _echoes(
    ordered: Sequence[Candidate],
    stated: dict[str, list[Fact]],
    found: dict[str, EarlierValue],
    holders: Collection[str],
) -> None:
    """The other turns before the current one that state a value decided earlier (compile's
    `value` rule, `supersession.states`: "your plan is Starter" after the plan became Pro),
    left out with it; a turn that holds a current value stays."""
    decided = [(d, stated[d.claim_key]) for d in list(found.values())]
    for decision, facts in decided:
        current = facts[-1]
        earlier = next(f for f in facts if f.sources[0] == decision.earlier)
        value = earlier.value or ""
        if says_nothing(value) or (current.value and mentions(current.value, value)):
            continue
        winner = next(c for c in ordered if c.memory_id == decision.current)
        for turn in ordered:
            if _order(turn) >= _order(winner):
                break
            read = statement_of(turn)
            if read is None or turn.memory_id in found or turn.memory_id in holders:
                continue
            if current.value and mentions(read[1], current.value):
                continue  # it names the current value too ("from X to Y"): it shows the change
            if any(states(read[1], p, value, decision.claim_key) for p in stale_phrases(value)):
                score = round(jaccard(_words(turn), _words(winner)), 3)
                found[turn.memory_id] = EarlierValue(
                    winner.memory_id, turn.memory_id, decision.claim_key, score
                )


def earlier_values(
    admitted: Sequence[Candidate],
    apart: Collection[tuple[str, str]] = (),
    unsettled: Collection[str] = (),
    question: Asked | None = None,
) -> tuple[EarlierValue, ...]:
    """The turns among the first `READ_DEPTH` of `admitted` (the candidates the policy admits,
    each once, best ranked first) that state an earlier value of a claim another of them states
    newer, each with the turn that states the current value; sorted by the earlier one's id.
    `apart`: pairs never decided between; `unsettled`: claim keys never decided (the sides and
    the claims of the open conflicts, which the bundle shows together as the rules could not
    order them); `question`: what the request's task asks for, read by `_answered` too when
    the assembler reads it. Same input, same output."""
    pairs = {frozenset(pair) for pair in apart}
    # A namespace's turns apart from another's (another user's, another project's).
    namespaces: dict[str, list[Candidate]] = {}
    for candidate in admitted[:READ_DEPTH]:
        if statement_of(candidate) is not None or candidate.source_type == "compile":
            namespaces.setdefault(candidate.namespace, []).append(candidate)
    decisions = [
        decision
        for namespace in sorted(namespaces)
        for decision in _in_one_namespace(namespaces[namespace], pairs, unsettled, question)
    ]
    return tuple(sorted(decisions, key=lambda d: d.earlier))
