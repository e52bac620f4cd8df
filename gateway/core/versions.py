"""Every version a receipt can name, in one place: the assemblers (the rules a bundle is
rendered and filled by), the session layouts (how a session context's budget is cut) and the
ranking profile. A receipt's `assembler` member names the versions that made it; exact replay
is promised for the versions this module lists, and refused for any other.

The rule: a change to the bytes a bundle or a session context is made of is a new version, and
a new version is a new frozen value (what differs is a field of it, read by the stages), chosen
once per request, never booleans threaded through the core. Of an earlier version this gateway
keeps what replaying its receipts reads again, and nothing more:

- assemblers: every field. Replay rebuilds the bundle through the same stages, which read
  them, so each assembler whose receipts replay is kept whole (:data:`ASSEMBLERS`).
- session layouts: the name and whether it judges the pinned texts. A layout's values cut the
  budget into shares, choose the memory request (its top_k, its index) and the retrievers'
  depth, and a receipt records what they decided: the turns and the summary by id, the memory
  request with its room, the candidates. Replay lays those out by the rules every layout
  listed shares (:func:`gateway.core.session.lay_out_session`) and reads of a layout only the
  one rule they do not share: whether the session's system prompt and task are shown as the
  policy shows them (redacted, or withheld) or as stored (:class:`LaidOut`). So only the
  current one (:data:`LAYOUT`) has values; the earlier ones are that rule
  (:data:`SESSION_LAYOUTS`). An unknown name is still refused: a later layout may lay out by
  other rules.
- ranking profiles: nothing. A receipt records its profile whole (the canonical form its digest
  is over) and replay rebuilds it with :meth:`RankingProfile.from_canonical`, so every profile a
  receipt names replays; only the one new requests rank by is named here (:data:`DEFAULT_PROFILE`).

One resolver, :meth:`Versions.resolve`, and one error, :class:`UnknownVersionError`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Generic, Literal, TypeVar

from gateway.core.errors import CoreError
from gateway.core.profile import RankingProfile
from gateway.core.replacing_turns import FIRST_WEIGHING, SECOND_WEIGHING, WEIGHING, Weighing

__all__ = [
    "ADMITTED",
    "ASKED",
    "ASSEMBLER",
    "ASSEMBLERS",
    "BUDGET_SIZED",
    "COMPACT",
    "CONFLICTS",
    "DEFAULT_PROFILE",
    "LABELS",
    "LAYOUT",
    "NAMES",
    "PARTNERS",
    "SESSION_LAYOUTS",
    "STATED",
    "STATEMENTS",
    "Assembler",
    "LaidOut",
    "SessionLayout",
    "UnknownVersionError",
    "VersionKind",
    "Versions",
]

V = TypeVar("V")
VersionKind = Literal["assembler", "session layout"]


class UnknownVersionError(CoreError, LookupError):
    """A receipt names a version this gateway does not build (of an assembler, a session
    layout): its bytes cannot be promised again, so replay refuses rather than rebuild them by
    other rules."""

    def __init__(self, kind: VersionKind, version: str) -> None:
        super().__init__(f"unknown {kind} version {version!r}")
        self.kind = kind
        self.version = version


@dataclass(frozen=True, slots=True)
class Versions(Generic[V]):
    """The versions of one kind this gateway replays, by the version string receipts name:
    what replay reads of each."""

    kind: VersionKind
    by_version: Mapping[str, V]

    def resolve(self, version: str) -> V:
        """What replay reads of ``version``; raises :class:`UnknownVersionError` when this
        gateway does not build it."""
        if version not in self.by_version:
            raise UnknownVersionError(self.kind, version)
        return self.by_version[version]


def _versions(kind: VersionKind, pairs: Iterable[tuple[str, V]]) -> Versions[V]:
    by_version = dict(pairs)
    return Versions(kind, MappingProxyType(by_version))


@dataclass(frozen=True, slots=True)
class Assembler:
    """Names the rendering and fill rules of a bundle (:mod:`gateway.core.assembly`): exact
    replay of a receipt is promised only by a gateway that still builds the version that wrote
    it."""

    version: str
    # Two delivered memories in an open conflict are rendered together under a "Conflicting
    # memories" heading, each with its writer and time, at the better one's position.
    conflicts_section: bool = False
    # A side of an open conflict among the top_k brings its admitted partner from below them:
    # one side alone would read as the settled value.
    conflict_partners: bool = False
    # A memory in full whose heading is `<label>: <opening words>` of its content shows the label
    # alone (render.shown_heading): a remembered turn's opening words were shown twice.
    heading_labels: bool = False
    # The ranking reads only the candidates the policy admits (preparation.rank_admitted): a
    # denied one moves no signal (context, lexical, rrf, the pool's statistics) of the others,
    # so the order and scores an agent sees say nothing of what its policy withholds.
    rank_admitted: bool = False
    # A request that names no top_k gets a full tier sized by the budget: the admitted
    # candidates in rank order while their relevance stays above the ranking profile's cut
    # (`RankingProfile.full_tier_cut`), as many as fit. (Before, no top_k meant 6.)
    budget_sized: bool = False
    # An index that does not fit its share whole points where the full tier stops: the most
    # relevant memories not shown in full (by the same ranking), then the rest in the index's
    # order, in the room the memories in full leave. One that fits whole stays whole.
    pointing_index: bool = False
    # Of two admitted candidates stating different values of one claim (as the compile
    # extractor reads them: `gateway.core.current_values`), the newer is current and the older
    # is left out (`superseded_in_bundle`), its decision recorded; when the older was among the
    # memories in full, the newer joins them.
    current_values: bool = False
    # And the task read as a question (`gateway.core.asked_values`): of the turns with a value of
    # the kind it asks for about what it asks, the user's newest is current, the older left out.
    asked_values: bool = False
    # And a question asking which or who (`asked_values`' kind `name`): of the turns naming a
    # name about what it asks, the user's newest that says a change is current.
    asked_names: bool = False
    # And such a question, or a yes or no, of the user's own or of what holds now, read whole
    # (`asked_values.told`): of the user's turns about what it asks, the newest that says a
    # change of their own is current, older ones saying nothing else it says are earlier.
    asked_statements: bool = False
    # And an update read as chat says it (`asked_values.Asked.updates`): across a turn's
    # sentences, of a thing by its name, a sentence saying its value changed whatever share of
    # the question's words it says, counts of the question's thing, no value in a question, and
    # the assistant's reply to an earlier statement with it.
    asked_updates: bool = False
    # A memory in full shows the day what it says became true (`Candidate.said_at`), not the
    # day it was written: an imported history's turns were all written today.
    said_days: bool = False
    # And, of a question of the user's own, the user's turns nearest it weighed for one
    # replacing another by this weighing (`gateway.core.replacing_turns`): an update told in
    # words no reading here knows.
    weighing: Weighing | None = None
    # A compiled session's digest every line of which a turn among the memories in full says is
    # packed after the others (`gateway.core.retold`): it takes only the room they leave.
    retold_last: bool = False


# 2026-12-01.1: per-bundle references ([m3]) and one short provenance line (render.py).
COMPACT = Assembler(version="assemble/2026-12-01.1")
# 2026-12-02.1: open conflicts shown together under "Conflicting memories" (ARCHITECTURE §12).
CONFLICTS = Assembler(version="assemble/2026-12-02.1", conflicts_section=True)
# 2026-12-02.2: and a conflict's other side joins the top_k when one side is in them.
PARTNERS = Assembler(
    version="assemble/2026-12-02.2", conflicts_section=True, conflict_partners=True
)
# 2026-12-02.3: and a heading's label alone when its words open the content.
LABELS = Assembler(
    version="assemble/2026-12-02.3",
    conflicts_section=True,
    conflict_partners=True,
    heading_labels=True,
)
# 2026-12-04.1: and the ranking reads only what the policy admits. A bundle none of whose
# retrieved candidates the policy denies has the bytes 2026-12-02.3 gave it.
ADMITTED = Assembler(
    version="assemble/2026-12-04.1",
    conflicts_section=True,
    conflict_partners=True,
    heading_labels=True,
    rank_admitted=True,
)
# 2026-12-04.2: and the defaults deliver the ranking: a full tier sized by the budget when no
# top_k is named, an index that points where it stops. A request with a top_k whose index
# fits whole has the bytes 2026-12-04.1 gave it.
BUDGET_SIZED = Assembler(
    version="assemble/2026-12-04.2",
    conflicts_section=True,
    conflict_partners=True,
    heading_labels=True,
    rank_admitted=True,
    budget_sized=True,
    pointing_index=True,
)
# 2026-12-05.1: and of two admitted memories stating different values of one claim, the older
# is left out and the newer shown (issue 33). A bundle in which no two admitted candidates do
# has the bytes 2026-12-04.2 gave it.
STATED = Assembler(
    version="assemble/2026-12-05.1",
    conflicts_section=True,
    conflict_partners=True,
    heading_labels=True,
    rank_admitted=True,
    budget_sized=True,
    pointing_index=True,
    current_values=True,
)
# 2026-12-05.2: and the task read as a question: of the turns answering it with values of the
# kind it asks for, the user's newest is current (issue 33). A bundle whose task asks for no
# value of these kinds, or that no two turns answer differently, has the bytes 2026-12-05.1
# gave it.
ASKED = replace(STATED, version="assemble/2026-12-05.2", asked_values=True)
# 2026-12-05.3: and a question asking which or who: of the turns naming a name about what it
# asks, the user's newest that says a change ("now", "switched", "instead") is current, older
# turns naming only other names are left out (issue 33). A bundle whose task asks no such
# question has the bytes 2026-12-05.2 gave it.
NAMES = replace(ASKED, version="assemble/2026-12-05.3", asked_names=True)
# 2026-12-05.4: and a question asking which, what, where or yes or no of the user's own or of
# what holds now, read by its sentences whole: the user's newest turn about it saying a change
# of their own is current, older turns of theirs about it saying nothing else it says are left
# out, two at most (issue 33); a name's change must be the user's own, a plural is a list only
# as its phrase's head, a preposition may open the question. A bundle whose task asks no
# question of which, what, who, where or yes or no has the bytes 2026-12-05.3 gave it.
STATEMENTS = replace(NAMES, version="assemble/2026-12-05.4", asked_statements=True)
# 2026-12-06.1: and an update read as chat says it (issue 33): a turn's sentences together, a
# name said again as the thing, a value said to have changed whatever share of the question it
# says, counts of the question's thing whatever noun counts them, no value in a sentence opening
# with a question word, two different values not one said twice for the words they share, and
# the assistant's reply to an earlier statement left out with it; and a memory in full shows
# the day what it says became true (a remembered turn's, a compiled fact's source's), not the
# day it was written. A bundle none of whose memories in full says when it became true, and
# whose task asks nothing `asked_values` reads, has the bytes 2026-12-05.4 gave it.
CHAT_UPDATES = replace(
    STATEMENTS, version="assemble/2026-12-06.1", asked_updates=True, said_days=True
)
# 2026-12-06.3: and, of a question of the user's own that `asked_values` reads, the user's four
# turns nearest it weighed for a newer one replacing an older (rule `weighed_turns`, issue 33;
# `gateway.core.replacing_turns`). A bundle whose task asks no such question has the bytes
# 2026-12-06.1 gave it.
WEIGHED = replace(CHAT_UPDATES, version="assemble/2026-12-06.3", weighing=FIRST_WEIGHING)
# 2026-12-06.4: and the weighing reads whether the older turn was said first of the user's
# eight turns nearest the question and how much each of the two says, fitted on a fourth hand's
# cases too (`replacing_turns.SECOND_WEIGHING`, issue 33). A bundle whose task asks no question
# of the user's own has the bytes 2026-12-06.3 gave it.
FIRST_SAID = replace(CHAT_UPDATES, version="assemble/2026-12-06.4", weighing=SECOND_WEIGHING)
# 2026-12-06.5: and the weighing fitted on each update case's stable reading too, its threshold
# keeping the value of 95 % of the questions whose answer never changed (`replacing_turns.
# WEIGHING`, issue 33); and a session digest retelling only turns shown in full beside it is
# packed after the other memories in full (`gateway.core.retold`). A bundle whose task asks no
# question of the user's own and that shows no such digest has the bytes 2026-12-06.3 gave it.
# The current one.
ASSEMBLER = replace(
    CHAT_UPDATES, version="assemble/2026-12-06.5", weighing=WEIGHING, retold_last=True
)
ASSEMBLERS: Versions[Assembler] = _versions(
    "assembler",
    (
        (a.version, a)
        for a in (
            COMPACT,
            CONFLICTS,
            PARTNERS,
            LABELS,
            ADMITTED,
            BUDGET_SIZED,
            STATED,
            ASKED,
            NAMES,
            STATEMENTS,
            CHAT_UPDATES,
            WEIGHED,
            FIRST_SAID,
            ASSEMBLER,
        )
    ),
)


@dataclass(frozen=True, slots=True)
class SessionLayout:
    """The rules a session context is cut by (:mod:`gateway.core.session`), named in its
    receipt (`version`) as :class:`Assembler` names the bundle's."""

    version: str
    # The summary's share of what the fixed prefix and the memory share leave: a third when
    # the summary is the only way back to the older turns; `recalling_summary_divisor` when the
    # step also recalls memories, which bring remembered turns back whole, by relevance.
    summary_divisor: int
    recalling_summary_divisor: int
    # Whether the memory bundle lists its index (its first tier, §6). In a session the summary
    # is that tier for the conversation; index lines of its remembered turns (all of one
    # confidence, so the oldest first) would repeat what the summary covers, and cost the
    # memory part room its whole memories need.
    memory_index: bool
    # How many memories the memory part may show in full (the bundle's top_k), and how many
    # each retriever returns for it (a bundle's is four times its top_k, at least 40).
    memory_top_k: int
    recall_depth: int
    # The session's system prompt and task pass the policy as its turns do (redacted, or
    # withheld when denied): they were shown as stored before 2026-12-04.1.
    judges_pinned: bool

    @property
    def laid_out(self) -> LaidOut:
        return LaidOut(self.version, self.judges_pinned)

    def summary_share(self, rest: int, recalling: bool) -> int:
        return rest // (self.recalling_summary_divisor if recalling else self.summary_divisor)


@dataclass(frozen=True, slots=True)
class LaidOut:
    """What replay reads of a session layout: its name, and the one rule the layouts listed do
    not share."""

    version: str
    judges_pinned: bool = False


# A step that recalls gives the summary a sixth and the memory bundle no index: the room goes
# to whole remembered turns (tuned on the 58 LongMemEval_S dev questions, bench/RESULTS.md).
# And the room the index would have had goes to more of them: up to 16 in full where a bundle
# shows 6, the lower ranked filling what the better ones leave. Six left a seventh of a 2,000
# budget unused on average and fell one evidence turn short of memory-only recall on those
# questions; 10 and 16 both passed it, 16 with room to spare. Each retriever returns 32:
# chosen on the tuning questions, where 32 kept 0.83 of the evidence turns at 2,000 against
# 0.80 with 40 and 0.81 with 24, and held-out LoCoMo kept 0.63 with each. The depth does not
# move the step's latency: the recall statement scores every match whatever it returns
# (bench/RESULTS.md, Sessions, seventh session).
# And (2026-12-04.1) the system prompt and task as the policy shows them. The current one.
LAYOUT = SessionLayout(
    "session/2026-12-04.1",
    summary_divisor=3,
    recalling_summary_divisor=6,
    memory_index=False,
    memory_top_k=16,
    recall_depth=32,
    judges_pinned=True,
)
SESSION_LAYOUTS: Versions[LaidOut] = _versions(
    "session layout",
    (
        (laid.version, laid)
        for laid in (
            # A third to the summary, the memory bundle with its index (6 in full, 40 deep).
            LaidOut("session/2026-12-01.1"),
            # A recalling step: a sixth to the summary, no index.
            LaidOut("session/2026-12-02.1"),
            # And 16 memories in full where a bundle shows 6.
            LaidOut("session/2026-12-02.2"),
            # And retrievers 32 deep, not 40.
            LaidOut("session/2026-12-03.1"),
            LAYOUT.laid_out,
        )
    ),
)

# 2026-12-01.1: relevance by BM25 and RRF (no raw cosine), recency from the newest candidate.
# 2026-12-02.2: the same, and the context signal (the neighbours in write order of strong hits).
# 2026-12-04.1: the same, and the full tier of a request without top_k admits a candidate while
# its relevance is at least a fifth of the best one's. Chosen on folds (`python -m bench
# defaults`, bench/RESULTS.md): the largest cut within half a point of no cut at every budget was
# 0.25 on one fold and 0.2 on the other; 0.2 holds on both, and on each held-out fold the
# defaults stay within two points of the ranking-only configuration.
DEFAULT_PROFILE = RankingProfile(
    version="rank/2026-12-04.1", recency_reference="newest", full_tier_cut=0.2
)
