"""What the `rules` extractor takes and gives: episodes (turns) in, facts out, and how a fact
reads (its heading, its content naming who said it and when, its confidence)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

__all__ = ["Episode", "Fact", "FactType", "build_fact"]

FactType = Literal["semantic", "procedural"]


@dataclass(frozen=True, slots=True)
class Episode:
    """One turn to compile: who said it, when, what, and the ids a fact from it names."""

    sources: tuple[str, ...]  # the turn id, and the memory id of its remembered copy if any
    role: str
    text: str
    occurred_at: datetime


@dataclass(frozen=True, slots=True)
class Fact:
    memory_type: FactType
    heading: str
    content: str
    confidence: float
    claim_key: str | None
    valid_from: datetime
    sources: tuple[str, ...]
    # The claim's value as stated ("Starter", "two cats") and, for a change "from X to Y", the
    # value it replaced: what a superseded raw turn is recognized by.
    value: str | None = None
    previous: str | None = None


def build_fact(
    kind: str,
    memory_type: FactType,
    claim_key: str | None,
    sentence: str,
    episode: Episode,
    confirmed: bool,
) -> Fact:
    """A fact stated by `sentence` of `episode`: headed by its claim key (or its kind),
    saying who stated it on which day; a claim key or a confirmation is surer than a bare
    statement."""
    day = episode.occurred_at.date().isoformat()
    who = "the assistant confirmed" if confirmed else "the user said"
    label = claim_key or kind
    opening = sentence if len(sentence) <= 120 else sentence[:119] + "…"
    return Fact(
        memory_type=memory_type,
        heading=f"{label}: {opening}"[:200],
        content=f"On {day} {who}: {sentence}",
        confidence=0.9 if confirmed or claim_key else 0.75,
        claim_key=claim_key,
        valid_from=episode.occurred_at,
        sources=episode.sources,
    )
