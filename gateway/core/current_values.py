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
too (rule `asked_value`): by the values of the kind it asks for (`gateway.core.answered_values`)
and, where the assembler reads them, by its sentences read whole
(`gateway.core.restated_values`), with what retells the earlier statements
(`gateway.core.retellings`). Turns are ordered by when they were said (`Candidate.said_at`: an
imported history is written in one go, in any order; `gateway.core.remembered_turns`); the
decisions are `gateway.core.earlier_value`'s `EarlierValue`.

The caller passes only the candidates the policy admits, in rank order, so no decision reads,
names or is moved by a memory the policy denies; the best ranked `READ_DEPTH` are read. Their
texts are those the agent would be shown, a redaction's rewrites applied
(`gateway.core.selection`): a value the policy hides is read as its marker, so two hidden values
are one and decide nothing, and no decision tells the agent whether they differ.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from gateway.core.answered_values import answered
from gateway.core.asked_values import Asked
from gateway.core.asking import Asking
from gateway.core.earlier_value import EarlierValue, words_of
from gateway.core.extraction.facts import Episode, Fact
from gateway.core.extraction.generalized import extract
from gateway.core.extraction.resolution import CHANGE
from gateway.core.extraction.typed_values import dimension_of, says_nothing
from gateway.core.model import Candidate, MemoryId
from gateway.core.remembered_turns import order, statement_of
from gateway.core.replacing_turns import Weighing, replaced
from gateway.core.restated_values import restated
from gateway.core.same_values import same
from gateway.core.supersession import jaccard, mentions, stale_phrases, states

__all__ = ["READ_DEPTH", "earlier_values"]

# The candidates read, best ranked first: reading costs a fraction of a millisecond a turn (the
# attribute table, then the statements' structure), and a bundle shows the best ranked.
READ_DEPTH = 40


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


def _in_one_namespace(
    candidates: Sequence[Candidate],
    apart: Collection[frozenset[str]],
    unsettled: Collection[str],
    question: Asked | None,
    weighing: Weighing | None,
) -> list[EarlierValue]:
    ordered = sorted((c for c in candidates if statement_of(c) is not None), key=order)
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
                or same(fact.value or "", newest.value or "")
                or not _replaces(newest, fact)
            ):
                continue
            score = round(jaccard(words_of(loser), words_of(winner)), 3)
            found[loser.memory_id] = EarlierValue(winner.memory_id, loser.memory_id, key, score)
    _echoes(ordered, stated, found, holders)
    if question is not None:
        held: dict[str, list[str]] = {}
        for facts in stated.values():
            held.setdefault(facts[-1].sources[0], []).append(facts[-1].value or "")
        compiled = [c for c in candidates if c.source_type == "compile"]
        _by_question(Asking(ordered, question, held, apart, compiled), candidates, found, weighing)
    return list(found.values())


def _by_question(
    asking: Asking,
    ranked: Sequence[Candidate],
    found: dict[str, EarlierValue],
    weighing: Weighing | None,
) -> None:
    """The question's decisions: by the values of the kind it asks for, then, where the
    assembler reads them, by its sentences read whole, then by weighing the user's turns
    nearest it (`ranked`: in rank order; a turn left out once stays so)."""
    answered(asking, found)
    if asking.question.statements:
        restated(asking, found)
    if asking.question.weighed and weighing is not None:
        replaced(asking, ranked, found, weighing)


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
            if order(turn) >= order(winner):
                break
            read = statement_of(turn)
            if read is None or turn.memory_id in found or turn.memory_id in holders:
                continue
            if current.value and mentions(read[1], current.value):
                continue  # it names the current value too ("from X to Y"): it shows the change
            if any(states(read[1], p, value, decision.claim_key) for p in stale_phrases(value)):
                score = round(jaccard(words_of(turn), words_of(winner)), 3)
                found[turn.memory_id] = EarlierValue(
                    winner.memory_id, turn.memory_id, decision.claim_key, score
                )


def earlier_values(
    admitted: Sequence[Candidate],
    apart: Collection[tuple[str, str]] = (),
    unsettled: Collection[str] = (),
    question: Asked | None = None,
    weighing: Weighing | None = None,
) -> tuple[EarlierValue, ...]:
    """The turns among the first `READ_DEPTH` of `admitted` (the candidates the policy admits,
    each once, best ranked first) that state an earlier value of a claim another of them states
    newer, each with the turn that states the current value; sorted by the earlier one's id.
    `apart`: pairs never decided between; `unsettled`: claim keys never decided (the sides and
    the claims of the open conflicts, which the bundle shows together as the rules could not
    order them); `question`: what the request's task asks for, read by
    `answered_values.answered` too when the assembler reads it; `weighing`: the assembler's
    weighing of the user's turns nearest a question of their own (`replacing_turns`), if any.
    Same input, same output."""
    pairs = {frozenset(pair) for pair in apart}
    # A namespace's turns apart from another's (another user's, another project's).
    namespaces: dict[str, list[Candidate]] = {}
    for candidate in admitted[:READ_DEPTH]:
        if statement_of(candidate) is not None or candidate.source_type == "compile":
            namespaces.setdefault(candidate.namespace, []).append(candidate)
    decisions = [
        decision
        for namespace in sorted(namespaces)
        for decision in _in_one_namespace(
            namespaces[namespace], pairs, unsettled, question, weighing
        )
    ]
    return tuple(sorted(decisions, key=lambda d: d.earlier))
