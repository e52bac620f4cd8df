"""The extractive summarizer: a session's older turns folded into numbered lines, within a budget.

Deterministic and model-free (ARCHITECTURE §11): the same previous summary, turns and share give
the same bytes in any process. It keeps whole sentences only (never cut mid-sentence), scored by
what a later step is most likely to need — decisions and commitments, open questions, names,
numbers and dates — deduplicated, and laid out in the order they were said. Folding a summary
again (a summary of summaries) re-scores its lines beside the new ones: the summary never grows
past its share, and what falls out is the least informative.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from gateway.core.extraction.statements import sentences
from gateway.core.tokens import Tokenizer

__all__ = ["EXTRACTIVE", "LINE", "Folded", "summarize"]

# (name, version) stored with every summary. 2026-12-06.1: sentences split as the extractor
# splits them (`extraction.statements.sentences`), each line apart: a title, a decimal or an
# abbreviation ends none ("Dr. Okafor", "3.5 miles", "$1,650.50", "e.g. oat milk"), where
# 2026-12-01.1 cut at every period.
EXTRACTIVE = ("extractive", "2026-12-06.1")

# A summary's line, "- t3 user: the sentence": the turn's number, its role, the sentence.
LINE = re.compile(r"^- t(\d+) (\w+): (.*)$")
_NUMBER = re.compile(r"\d")
_NAME = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-z]{2,}")
_DATE = re.compile(
    r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b|"
    r"\b(?:mon|tues|wednes|thurs|fri|satur|sun)day\b|\b(?:today|tomorrow|yesterday)\b",
    re.IGNORECASE,
)
_DECISION = re.compile(
    r"\b(?:decid\w*|agree\w*|will|won't|going to|plan\w*|must|need\w*|should|deadline|"
    r"promis\w*|commit\w*|let's|prefer\w*|always|never|remember)\b|\b(?:i|we)'ll\b",
    re.IGNORECASE,
)
_MIN_CHARS = 12  # shorter fragments ("ok.", "thanks!") carry nothing worth keeping


@dataclass(frozen=True, slots=True)
class Folded:
    """A turn as it is folded: its seq, role and the text the policy let it show."""

    seq: int
    role: str
    text: str


@dataclass(frozen=True, slots=True)
class _Line:
    seq: int
    order: int
    text: str  # "- t12 user: ..."
    score: int
    tokens: int


def _score(sentence: str, role: str) -> int:
    score = 0
    score += 3 * bool(_DECISION.search(sentence))
    score += 3 * sentence.rstrip().endswith("?")
    score += 2 * bool(_NUMBER.search(sentence))
    score += 2 * bool(_DATE.search(sentence))
    score += min(2, len(_NAME.findall(sentence)))
    score += role == "user"  # what the user said is what the agent serves
    return score


def _key(sentence: str) -> str:
    return " ".join(re.findall(r"\w+", sentence.lower()))


def _sentences(text: str) -> list[str]:
    """The sentences of `text`, each line apart (a list's items are not one sentence)."""
    return [s for line in text.splitlines() for s in sentences(line) if len(s) >= _MIN_CHARS]


def _candidates(previous: str | None, turns: Sequence[Folded]) -> list[tuple[int, str, str]]:
    """(seq, role, sentence) in the order they were said: the previous summary's lines first."""
    found: list[tuple[int, str, str]] = []
    for line in (previous or "").splitlines():
        match = LINE.match(line)
        if match is not None:
            found.append((int(match.group(1)), match.group(2), match.group(3)))
    for turn in turns:
        found.extend((turn.seq, turn.role, s) for s in _sentences(turn.text))
    return found


def summarize(
    previous: str | None, turns: Sequence[Folded], share: int, tokenizer: Tokenizer
) -> str:
    """Fold `turns` into `previous` (a summary this function made, or None): the best whole
    sentences whose lines fit `share` tokens, one line each, in the order they were said."""
    # Deduplicated keeping the latest saying of a sentence: a repeated decision is current.
    latest: dict[str, int] = {}
    candidates = _candidates(previous, turns)
    for order, (_, _, sentence) in enumerate(candidates):
        key = _key(sentence)
        if key:
            latest[key] = order
    lines: list[_Line] = []
    for order, (seq, role, sentence) in enumerate(candidates):
        if latest.get(_key(sentence)) != order:
            continue
        text = f"- t{seq} {role}: {sentence}"
        lines.append(_Line(seq, order, text, _score(sentence, role), tokenizer.count(text) + 1))
    # Best first; among equals the more recent, since later turns revise earlier ones.
    chosen: list[_Line] = []
    room = share
    for line in sorted(lines, key=lambda x: (-x.score, -x.seq, -x.order)):
        if line.tokens <= room:
            chosen.append(line)
            room -= line.tokens
    chosen.sort(key=lambda x: x.order)
    text = "\n".join(line.text for line in chosen)
    # Counted apart, lines may merge into fewer tokens, never (for cl100k's newline) into more;
    # drop the weakest until the exact count fits all the same.
    while chosen and tokenizer.count(text) > share:
        weakest = min(chosen, key=lambda x: (x.score, x.seq, x.order))
        chosen.remove(weakest)
        text = "\n".join(line.text for line in chosen)
    return text
