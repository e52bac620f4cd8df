"""Summarizers: fold a session's older turns into its state (ARCHITECTURE §11).

The default is extractive and deterministic (`gateway.core.summary`). A summary is stored and
never recomputed, so a summarizer's output needs no determinism of its own: replay loads it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from gateway.core.summary import EXTRACTIVE, Folded, summarize
from gateway.core.tokens import Tokenizer

__all__ = ["ExtractiveSummarizer", "Summarizer"]


class Summarizer(Protocol):
    """Folds turns into a summary within `share` tokens (ARCHITECTURE §11)."""

    @property
    def name(self) -> str: ...

    @property
    def version(self) -> str: ...

    async def fold(self, previous: str | None, turns: Sequence[Folded], share: int) -> str: ...


@dataclass(frozen=True, slots=True)
class ExtractiveSummarizer:
    """The default: `gateway.core.summary`, deterministic and model-free."""

    tokenizer: Tokenizer
    name: str = EXTRACTIVE[0]
    version: str = EXTRACTIVE[1]

    async def fold(self, previous: str | None, turns: Sequence[Folded], share: int) -> str:
        return summarize(previous, turns, share, self.tokenizer)
