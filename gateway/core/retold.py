"""A session digest shown beside the turns it retells (issue 33; assemble/2026-12-06.5 on).

Compile writes each session a digest (`gateway.core.digest`): its lines are sentences of the
session's turns, told again. When every line it tells is a sentence of a turn among the memories
in full, the digest tells the agent nothing those turns do not, yet it took its place in rank
order and its share of the budget (up to `digest.DIGEST_SHARE` tokens of an 800-token bundle): a
value said once, in a session nobody compiled a fact of, was crowded out by the same turns said
twice. Such a digest is packed after the other memories in full, so it takes only the room they
leave. A digest with any line of its own (a turn of its session not shown) keeps its place:
it is then the one way the agent reads that turn.

Read as the policy shows them, so a line's redaction is compared with the turn's.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from datetime import date

from gateway.core.digest import parse_digest
from gateway.core.model import Candidate, MemoryId
from gateway.core.ranking import Ranked
from gateway.core.remembered_turns import TURN
from gateway.core.summary import LINE

__all__ = ["retold_last"]

_SPACE = re.compile(r"\s+")


def retold_last(
    top: Sequence[Ranked],
    shown: Callable[[Sequence[MemoryId]], Mapping[MemoryId, tuple[str, str]]],
) -> list[Ranked]:
    """`top` (in rank order), the digests every line of which a turn in it says moved after
    the others, each part in its order. `shown` gives the policy's heading and content of those
    of the named memories it rewrites; it is asked only when compile wrote one of them."""
    if not any(_compiled_episode(r.candidate) for r in top):
        return list(top)
    texts = shown([r.candidate.memory_id for r in top])

    def content(candidate: Candidate) -> str:
        return texts.get(candidate.memory_id, (candidate.heading, candidate.content))[1]

    turns: dict[tuple[int, str], list[tuple[date, str]]] = {}
    for r in top:
        turn = TURN.match(r.candidate.heading)
        if turn is not None and r.candidate.source_type == "turn":
            said = (r.candidate.said_at.date(), _flat(content(r.candidate)))
            turns.setdefault((int(turn["seq"]), turn["role"]), []).append(said)

    def retold(candidate: Candidate) -> bool:
        digest = parse_digest(content(candidate)) if _compiled_episode(candidate) else None
        if digest is None:
            return False
        # Each line as the summary folded a turn (`summary.LINE`): its number, role, sentence.
        lines = [LINE.match(line) for line in digest.lines.splitlines() if line.strip()]
        return bool(lines) and all(
            line is not None
            and any(
                digest.first <= day <= digest.last and _flat(line[3]) in said
                for day, said in turns.get((int(line[1]), line[2]), ())
            )
            for line in lines
        )

    later = {r.candidate.memory_id for r in top if retold(r.candidate)}
    return [r for r in top if r.candidate.memory_id not in later] + [
        r for r in top if r.candidate.memory_id in later
    ]


def _compiled_episode(candidate: Candidate) -> bool:
    """Whether compile wrote the memory as an episode: a digest, when its content reads as one."""
    return candidate.source_type == "compile" and candidate.memory_type == "episodic"


def _flat(text: str) -> str:
    """Whitespace as one space: a digest folds a turn's lines into one sentence's."""
    return _SPACE.sub(" ", text).strip()
