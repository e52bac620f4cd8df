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
from gateway.shell.settings import Settings

__all__ = ["ExtractiveSummarizer", "Summarizer", "build_summarizer"]


class Summarizer(Protocol):
    """Folds turns into a summary within `share` tokens (ARCHITECTURE §11)."""

    @property
    def name(self) -> str: ...

    @property
    def version(self) -> str: ...

    async def fold(self, previous: str | None, turns: Sequence[Folded], share: int) -> str: ...

    async def aclose(self) -> None:
        """Release what it holds (a connection pool to a model server)."""


@dataclass(frozen=True, slots=True)
class ExtractiveSummarizer:
    """The default: `gateway.core.summary`, deterministic and model-free."""

    tokenizer: Tokenizer
    name: str = EXTRACTIVE[0]
    version: str = EXTRACTIVE[1]

    async def fold(self, previous: str | None, turns: Sequence[Folded], share: int) -> str:
        return summarize(previous, turns, share, self.tokenizer)

    async def aclose(self) -> None:
        return None


def build_summarizer(settings: Settings, tokenizer: Tokenizer) -> Summarizer:
    """The summarizer `GATEWAY_SUMMARIZER` names: extractive (default) or an OpenAI-compatible
    chat model at `GATEWAY_SUMMARIZER_BASE_URL` (default `GATEWAY_OPENAI_BASE_URL`)."""
    if settings.summarizer == "openai":
        from gateway.summarizing import OpenAIChatSummarizer

        return OpenAIChatSummarizer(
            settings.summarizer_base_url or settings.openai_base_url,
            settings.summarizer_model,
            settings.openai_api_key,
            timeout_seconds=settings.openai_timeout_seconds,
        )
    return ExtractiveSummarizer(tokenizer)
