"""An OpenAI-compatible chat-completions summarizer (`GATEWAY_SUMMARIZER=openai`).

Its text is stored like any other summary and never recomputed (replay loads it), so the model
needs no determinism; the gateway still asks for temperature 0. Every way the server can fail is
a `SummarizerError` (503 `summarizer_unavailable`, fail closed: no context, no receipt, no
summary) whose detail is in our words; the server's own words are logged, never sent.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import httpx

from gateway.domain.errors import UnavailableError
from gateway.summarizing.chat import ChatCompletions

__all__ = ["INSTRUCTIONS", "OpenAIChatSummarizer", "SummarizerError"]

INSTRUCTIONS = (
    "You maintain the running summary of a conversation between a user and an assistant. "
    "Fold the new turns into the summary so far. Keep decisions, commitments, open questions, "
    "names, numbers and dates; drop pleasantries; never invent anything. Write short plain "
    "sentences, one per line, each starting with '- '. Stay within {share} tokens."
)


class FoldedTurn(Protocol):
    """A turn to fold (`gateway.core.summary.Folded` is one)."""

    @property
    def seq(self) -> int: ...

    @property
    def role(self) -> str: ...

    @property
    def text(self) -> str: ...


class SummarizerError(UnavailableError):
    code = "summarizer_unavailable"


class OpenAIChatSummarizer:
    name = "openai-chat"

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None,
        *,
        timeout_seconds: float = 30.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._chat = ChatCompletions(
            base_url,
            model,
            api_key,
            what="summarizer",
            error=SummarizerError,
            timeout_seconds=timeout_seconds,
            transport=transport,
        )

    @property
    def version(self) -> str:
        """The model is what makes the text: it is the version stored with each summary."""
        return self._chat.model

    async def fold(self, previous: str | None, turns: Sequence[FoldedTurn], share: int) -> str:
        lines = "\n".join(f"t{t.seq} {t.role}: {t.text}" for t in turns)
        prompt = f"Summary so far:\n{previous or '(none)'}\n\nNew turns:\n{lines or '(none)'}"
        text = await self._chat.complete(
            INSTRUCTIONS.format(share=share), prompt, max_tokens=max(1, share)
        )
        return text.strip()

    async def aclose(self) -> None:
        await self._chat.aclose()
