"""Which of the user's turns best answering a question of their own is replaced by a newer one of
theirs, weighed (issue 33; rule `weighed_turns` of the assembly defence,
`gateway.core.current_values`: `FIRST_WEIGHING` from assemble/2026-12-06.3, `SECOND_WEIGHING`
from assemble/2026-12-06.4, `WEIGHING` from assemble/2026-12-06.5).

The defence's other rules decide by reading: a claim the extractor resolves, a value of the kind
the question asks, a sentence saying a change the reading knows. On text nobody wrote patterns
for, half the updates say none of these ("my old GP retired and I saw Dr. Okafor yesterday",
after "he's my GP"): both turns reach the bundle and the stale one reads as current. What such
an update still shows is where it stands: said later, on another day, by the user, among the
turns the ranking put nearest the question, and neither a question, a hedge nor another
person's news. This rule weighs those signals, each a closed class of English or a count
(`signals`: no word of any case), with weights fitted by logistic regression on labelled
bundles of the dev sets (`python -m bench replacing`: the fit, the sets it read and the sets it
did not, bench/RESULTS.md). Why it should hold on text nobody here read: no signal names an
attribute, a value or a phrase of an update; the weights were chosen on one set of hands and
measured on others; and what it weighs is how a person tells a change over time, not what they
tell.

The second weighing (2026-12-06.4) reads three more of those: whether the older turn is the
first said of the user's `WIDE` best-ranked turns, and how much each of the two says (its
content words). Fitted on a fourth set of hands too and chosen by leaving each fitted set out
in turn (`bench replacing`' "left out" column): a statement said first among the turns nearest
a question, and saying something, is the one a later statement replaces, whatever words either
uses; and a newer turn saying fewer than four content words ("thanks", "and only
horizontally?") replaces nothing (`Weighing.least_words`).

The third weighing (2026-12-06.5) reads the same signals, fitted on each update case and on its
stable reading too: the case as it reads had the value never changed (`bench.knowledge.stable`).
In the update sets what was said first was nearly always replaced, and a weighing fitted on them
alone learned that: at the defaults of `.4` the bundle kept the value of 59 % of the questions
whose answer never changed, against 96 % without a weighing (bench/RESULTS.md). Nearly half the
pairs fitted on are now of questions whose first answer still holds, and the threshold is the
lowest at which the fitted sets, each left out of the fit in turn, keep the value of 95 % of the
no-update cases: a newer turn must look like an update, not only come later.

Conservative where it can be: only a question of the user's own that asks what holds now is
read (`asked_values.asked`, asked of the speaker and of no one else); only the user's turns
among the best ranked `READ` of them; the newest of those is never left out, nor a turn another
decision keeps as current, nor either side of an open conflict, nor a turn with a value the
policy hid; and a pair is left out only above the weighing's threshold, a probability chosen on
the sets the fit read. What compile made of a turn left out (a fact quoting it, a digest
retelling it, of statements made no later than it and quoting nothing of the newer) goes with
it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from typing import NamedTuple

from gateway.core.asked_values import stems_of
from gateway.core.asking import Asking, stated_on
from gateway.core.earlier_value import WEIGHED, EarlierValue
from gateway.core.extraction.asked_shapes import proper_names
from gateway.core.extraction.holders import names_another
from gateway.core.extraction.judgement import HEDGE_NOT_INTENT
from gateway.core.extraction.resolution import CHANGE
from gateway.core.extraction.typed_values import HIDDEN
from gateway.core.model import Candidate, MemoryId
from gateway.core.remembered_turns import order, statement_of
from gateway.core.turn_answers import ASKING

__all__ = [
    "FIRST_WEIGHING",
    "READ",
    "SECOND_WEIGHING",
    "SIGNALS",
    "WEIGHING",
    "WIDE",
    "Signals",
    "Turn",
    "Weighing",
    "Weight",
    "replaced",
    "says_enough",
    "signals",
]

# The user's turns read, best ranked first: an update and what it replaces are both among the
# turns nearest the question when the ranking finds them at all.
READ = 4
# The user's turns among which the first said is told (`Turn.first`): the stale statement of a
# thing is said before its update, and before the later talk around it the ranking also finds.
WIDE = 8


@dataclass(frozen=True, slots=True)
class Turn:
    """A user's turn as the weighing reads it: what it says, the day it was said, its place
    among the user's turns the ranking put nearest the question (0 the nearest), and whether it
    was said first of the `WIDE` best ranked of them."""

    text: str
    said_on: date
    rank: int
    first: bool


class Signals(NamedTuple):
    """What the weighing reads of a pair of turns, older and newer (`signals`)."""

    older_rank: float
    newer_rank: float
    shared: float
    asked_older: float
    asked_newer: float
    asked_both: float
    change_newer: float
    another_older: float
    another_newer: float
    hedged_older: float
    hedged_newer: float
    asking_older: float
    asking_newer: float
    days_apart: float
    same_day: float
    number_older: float
    number_newer: float
    name_older: float
    name_newer: float
    # Read by `WEIGHING` (2026-12-06.4) on.
    first_older: float
    words_older: float
    words_newer: float


SIGNALS = Signals._fields


def signals(asked: frozenset[str], older: Turn, newer: Turn) -> Signals:
    """What the weighing reads of a pair: places in the ranking, how much of the question
    (`asked`: its stems) and of each other the two say, the closed classes an update is told or
    not told by, whether the older was said first, and how much each says."""
    a, b = stems_of(older.text), stems_of(newer.text)
    of_question = max(1, len(asked))
    days = (newer.said_on - older.said_on).days
    return Signals(
        older_rank=float(older.rank),
        newer_rank=float(newer.rank),
        shared=len(a & b) / max(1, len(a | b)),
        asked_older=len(a & asked) / of_question,
        asked_newer=len(b & asked) / of_question,
        asked_both=len(a & b & asked) / of_question,
        change_newer=_flag(CHANGE.search(newer.text)),
        another_older=_flag(names_another(older.text)),
        another_newer=_flag(names_another(newer.text)),
        hedged_older=_flag(HEDGE_NOT_INTENT.search(older.text)),
        hedged_newer=_flag(HEDGE_NOT_INTENT.search(newer.text)),
        asking_older=_flag(ASKING.search(older.text)),
        asking_newer=_flag(ASKING.search(newer.text)),
        days_apart=math.log1p(max(days, 0)),
        same_day=_flag(days == 0),
        number_older=_flag(any(c.isdigit() for c in older.text)),
        number_newer=_flag(any(c.isdigit() for c in newer.text)),
        name_older=_flag(proper_names(older.text)),
        name_newer=_flag(proper_names(newer.text)),
        first_older=_flag(older.first),
        words_older=math.log1p(len(a)),
        words_newer=math.log1p(len(b)),
    )


def says_enough(turn: Turn, least_words: int) -> bool:
    """Whether a turn says `least_words` content words or more."""
    return len(stems_of(turn.text)) >= least_words


def _flag(found: object) -> float:
    return 1.0 if found else 0.0


class Weight(NamedTuple):
    """One signal's weight in the weighing, and its mean and scale over the pairs fitted on."""

    signal: str
    weight: float
    mean: float
    scale: float


@dataclass(frozen=True, slots=True)
class Weighing:
    """A logistic model over `signals`, each centred and scaled as in the fit: one `Weight` a
    signal it reads (a field of `Signals`), and the probability above which the older turn is
    left out."""

    bias: float
    weights: tuple[Weight, ...]
    threshold: float
    # A newer turn saying fewer content words than this replaces nothing ("thanks", "oven finish
    # it is. and starters?"): from 2026-12-06.4.
    least_words: int = 0

    def may_replace(self, newer: Turn) -> bool:
        """Whether the newer turn says enough to be weighed as replacing one."""
        return says_enough(newer, self.least_words)

    def probability(self, read: Signals) -> float:
        """How likely the newer turn replaces the older, by the fitted weights."""
        z = self.bias + sum(
            w.weight * (getattr(read, w.signal) - w.mean) / w.scale for w in self.weights
        )
        return 1.0 / (1.0 + math.exp(-z))


# The weighing of assemble/2026-12-06.3, fitted by `python -m bench replacing` on five sets of
# the eleventh session, kept for exact replay.
FIRST_WEIGHING = Weighing(
    bias=-2.4391,
    weights=(
        Weight("older_rank", -0.1723, 1.341, 1.126),
        Weight("newer_rank", -0.0677, 1.6561, 1.0865),
        Weight("shared", 0.3601, 0.0222, 0.0446),
        Weight("asked_older", 0.3737, 0.2427, 0.3309),
        Weight("asked_newer", -0.3765, 0.1923, 0.2892),
        Weight("asked_both", -0.0053, 0.0531, 0.1609),
        Weight("change_newer", 0.4502, 0.2354, 0.4242),
        Weight("another_older", 0.0772, 0.2574, 0.4372),
        Weight("another_newer", -0.1289, 0.2805, 0.4492),
        Weight("hedged_older", 0.0188, 0.1633, 0.3696),
        Weight("hedged_newer", 0.0458, 0.171, 0.3765),
        Weight("asking_older", -0.1772, 0.1931, 0.3947),
        Weight("asking_newer", 0.0952, 0.2219, 0.4155),
        Weight("days_apart", 1.0684, 3.0095, 1.6359),
        Weight("same_day", 0.7059, 0.195, 0.3962),
        Weight("number_older", -0.1348, 0.2142, 0.4103),
        Weight("number_newer", -0.0523, 0.1623, 0.3688),
        Weight("name_older", 0.1244, 0.4236, 0.4941),
        Weight("name_newer", -0.1701, 0.3939, 0.4886),
    ),
    threshold=0.4,
)
# The weighing of assemble/2026-12-06.4, fitted on the update cases alone, kept for exact replay:
# it leaves out what was said first far more often than that was replaced (bench/RESULTS.md).
SECOND_WEIGHING = Weighing(
    bias=-4.6471,
    weights=(
        Weight("older_rank", -0.2256, 1.3892, 1.1194),
        Weight("newer_rank", 0.1201, 1.5549, 1.1115),
        Weight("shared", 0.1982, 0.0244, 0.0444),
        Weight("asked_older", -0.222, 0.2219, 0.3124),
        Weight("asked_newer", -0.795, 0.2208, 0.293),
        Weight("asked_both", 0.5156, 0.0593, 0.1655),
        Weight("change_newer", 0.266, 0.2746, 0.4463),
        Weight("another_older", 0.013, 0.2659, 0.4418),
        Weight("another_newer", -0.241, 0.3401, 0.4737),
        Weight("hedged_older", -0.2005, 0.1715, 0.3769),
        Weight("hedged_newer", -0.012, 0.2091, 0.4066),
        Weight("asking_older", 0.1404, 0.2062, 0.4046),
        Weight("asking_newer", 0.2534, 0.2187, 0.4134),
        Weight("days_apart", 0.0195, 3.2575, 1.6095),
        Weight("same_day", -0.1537, 0.159, 0.3656),
        Weight("number_older", 0.2895, 0.2225, 0.416),
        Weight("number_newer", -0.4569, 0.2177, 0.4127),
        Weight("name_older", 0.1106, 0.422, 0.4939),
        Weight("name_newer", -0.5749, 0.4586, 0.4983),
        Weight("first_older", 2.5572, 0.3921, 0.4882),
        Weight("words_older", 1.1388, 2.0771, 0.6201),
        Weight("words_newer", 1.0784, 2.2145, 0.4945),
    ),
    threshold=0.4,
    least_words=4,
)
# The weighing of assemble/2026-12-06.5, fitted by `python -m bench replacing` on the update
# cases and their stable readings, its threshold the lowest keeping the value of 95 % of the
# no-update cases (bench/RESULTS.md); regenerated there, never by hand.
WEIGHING = Weighing(
    bias=-4.5647,
    weights=(
        Weight("older_rank", 0.4524, 1.2874, 1.1311),
        Weight("newer_rank", 0.3082, 1.6772, 1.075),
        Weight("shared", 0.3183, 0.0226, 0.0446),
        Weight("asked_older", -0.2347, 0.2549, 0.3431),
        Weight("asked_newer", -0.3232, 0.1721, 0.2696),
        Weight("asked_both", 0.1995, 0.0518, 0.1574),
        Weight("change_newer", 0.2885, 0.2018, 0.4013),
        Weight("another_older", 0.0063, 0.2715, 0.4447),
        Weight("another_newer", -0.3176, 0.3138, 0.464),
        Weight("hedged_older", -0.09, 0.1738, 0.3789),
        Weight("hedged_newer", 0.0456, 0.1976, 0.3982),
        Weight("asking_older", -0.2549, 0.2124, 0.409),
        Weight("asking_newer", 0.0532, 0.2615, 0.4394),
        Weight("days_apart", 0.0566, 3.2205, 1.6576),
        Weight("same_day", 0.0751, 0.1717, 0.3771),
        Weight("number_older", -0.2545, 0.2493, 0.4326),
        Weight("number_newer", 0.0331, 0.1733, 0.3785),
        Weight("name_older", 0.153, 0.4358, 0.4959),
        Weight("name_newer", -0.3903, 0.3946, 0.4888),
        Weight("first_older", 1.6044, 0.4142, 0.4926),
        Weight("words_older", 0.465, 2.073, 0.6059),
        Weight("words_newer", 1.0943, 2.1243, 0.4607),
    ),
    threshold=0.5,
    least_words=4,
)


def replaced(
    asking: Asking,
    ranked: Sequence[Candidate],
    found: dict[str, EarlierValue],
    weighing: Weighing,
) -> None:
    """Of the user's `READ` best ranked turns (`ranked`: the namespace's candidates in rank
    order) not already decided on, an older one whose pairing with a newer one weighs above the
    `weighing`'s threshold is left out, with the newer as current (the one it weighs highest
    with)."""
    question = asking.question
    kept = {decision.current for decision in found.values()}
    wide = [
        c
        for c in ranked
        if (said := statement_of(c)) is not None and said[0] == "user" and c.memory_id not in found
    ][:WIDE]
    first = min(wide, key=order).memory_id if wide else None
    # A turn with a value the policy hid is not weighed: leaving it out, or leaving one out for
    # it, would be read as a decision about the hidden value.
    users = [c for c in wide[:READ] if not HIDDEN.search(c.content)]
    turns = {
        c.memory_id: Turn(c.content, c.said_at.date(), rank, c.memory_id == first)
        for rank, c in enumerate(users)
    }
    best: dict[MemoryId, tuple[float, Candidate]] = {}
    for older in users:
        if older.memory_id in kept:
            continue
        for newer in users:
            if (
                order(newer) <= order(older)
                or frozenset((older.memory_id, newer.memory_id)) in asking.apart
                or not weighing.may_replace(turns[newer.memory_id])
            ):
                continue
            read = signals(question.stems, turns[older.memory_id], turns[newer.memory_id])
            p = weighing.probability(read)
            if p > weighing.threshold and p > best.get(older.memory_id, (0.0, newer))[0]:
                best[older.memory_id] = (p, newer)
    for memory_id in sorted(best):
        p, newer = best[memory_id]
        found[memory_id] = EarlierValue(
            newer.memory_id, memory_id, question.claim, round(p, 3), WEIGHED
        )
        older = next(c for c in users if c.memory_id == memory_id)
        # What compile made of the older turn goes with it, as with the defence's other rules.
        for memory in asking.compiled:
            said_on = stated_on(memory)
            if (
                memory.memory_id not in found
                and said_on is not None
                and said_on <= older.said_at.date()
                and _retells(memory.content, older.content, newer.content)
            ):
                found[memory.memory_id] = EarlierValue(
                    newer.memory_id, memory.memory_id, question.claim, round(p, 3), WEIGHED
                )


# Where a compiled memory quotes what was said: a fact's "On 2024-06-04 the user said: ...", a
# digest's "- t1 user: ..." line.
_QUOTED = re.compile(r"^(?:- t\d+ (?:user|assistant): |On \d{4}-\d{2}-\d{2} the user said: )")


def _retells(compiled: str, earlier: str, current: str) -> bool:
    """Whether a compiled memory retells the earlier turn and not the current one: a line it
    quotes, of four words or more, is said in the earlier turn, and none in the current one."""
    quoted = [
        _QUOTED.sub("", line).strip().casefold()
        for line in compiled.splitlines()
        if _QUOTED.match(line)
    ]
    quoted = [q for q in quoted if len(q.split()) >= 4]
    earlier, current = earlier.casefold(), current.casefold()
    return any(q in earlier for q in quoted) and not any(q in current for q in quoted)
