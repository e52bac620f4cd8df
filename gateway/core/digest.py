"""A compiled session's digest: one episodic memory that recalls the session as a whole.

Folded chunk by chunk as compile reads the session (ARCHITECTURE §12): the previous digest's
lines and the new turns go through the extractive summarizer (gateway.core.summary, the same
fold a session's history uses), so a digest never grows past its share and an incremental
compile costs what its new turns cost. Pure: the same previous digest and turns give the same
bytes in any process.

The content opens with one line saying what it covers (``Session of 12 turns, 2024-01-02 to
2024-02-10.``), read back when the next chunk is folded in; the summary lines follow. Which
session is the memory's `source_ref`: an id in the content would cost tokens, and a random
id's count of them varies, so two digests of the same turns would not be the same length.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

from gateway.core.summary import EXTRACTIVE, Folded, summarize
from gateway.core.tokens import Tokenizer

__all__ = ["DIGEST", "DIGEST_SHARE", "Digest", "DigestTurn", "fold_digest", "parse_digest"]

# Bump when a digest's bytes can change for the same inputs; the summarizer's version is in it.
# 2026-12-05.1: the covering line names no session id (the digest's source_ref does).
DIGEST = ("digest", f"2026-12-05.1+{EXTRACTIVE[0]}/{EXTRACTIVE[1]}")
DIGEST_SHARE = 300  # tokens of summary lines: a few of a bundle's memories' worth

_COVERS = re.compile(
    r"^Session of (?P<turns>\d+) turns?, "
    r"(?P<first>\d{4}-\d{2}-\d{2}) to (?P<last>\d{4}-\d{2}-\d{2})\.$"
)


@dataclass(frozen=True, slots=True)
class DigestTurn:
    seq: int
    role: str
    text: str
    day: date


@dataclass(frozen=True, slots=True)
class Digest:
    turns: int
    first: date
    last: date
    lines: str  # the summarizer's "- t<seq> <role>: <sentence>" lines

    @property
    def heading(self) -> str:
        return f"Session digest, {self.first.isoformat()} to {self.last.isoformat()}"

    @property
    def content(self) -> str:
        covers = (
            f"Session of {self.turns} turn{'s' if self.turns != 1 else ''}, "
            f"{self.first.isoformat()} to {self.last.isoformat()}."
        )
        return f"{covers}\n{self.lines}" if self.lines else covers


def parse_digest(content: str) -> Digest | None:
    """The digest `content` renders, or None when it is not one (then it is not folded)."""
    covers, _, lines = content.partition("\n")
    match = _COVERS.match(covers)
    if match is None:
        return None
    return Digest(
        int(match.group("turns")),
        date.fromisoformat(match.group("first")),
        date.fromisoformat(match.group("last")),
        lines,
    )


_OPENING_CHARS = 240
_LAST_END = re.compile(r"^.*[.!?](?=\s|$)", re.DOTALL)


def _opening(text: str) -> str:
    """What a turn contributes: its opening, cut to whole sentences within `_OPENING_CHARS`
    (or the cut itself when its first sentence is longer). A digest is the gist; the long
    answers that make most of a session's text would only cost the fold its time."""
    if len(text) <= _OPENING_CHARS:
        return text
    head = text[:_OPENING_CHARS]
    whole = _LAST_END.match(head)
    return whole.group(0) if whole else head


def fold_digest(
    previous: Digest | None,
    turns: Sequence[DigestTurn],
    tokenizer: Tokenizer,
    *,
    covered: int,
    share: int = DIGEST_SHARE,
) -> Digest:
    """The digest of a session after a chunk of `covered` turns, of which `turns` (in seq
    order) are retold, folded into `previous` (the digest of the turns before, or None)."""
    folded = [Folded(t.seq, t.role, _opening(t.text)) for t in turns]
    lines = summarize(previous.lines if previous else None, folded, share, tokenizer)
    days = [t.day for t in turns] + ([previous.first, previous.last] if previous else [])
    return Digest(
        (previous.turns if previous else 0) + covered,
        min(days),
        max(days),
        lines,
    )
