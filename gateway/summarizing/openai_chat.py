"""An OpenAI-compatible chat-completions summarizer (`GATEWAY_SUMMARIZER=openai`).

Its text is stored like any other summary and never recomputed (replay loads it), so the model
needs no determinism; the gateway still asks for temperature 0. Every way the server can fail is
a `SummarizerError` (503 `summarizer_unavailable`, fail closed: no context, no receipt, no
summary) whose detail is in our words; the server's own words are logged, never sent.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Protocol

import httpx

from gateway.errors import UnavailableError

__all__ = ["INSTRUCTIONS", "OpenAIChatSummarizer", "SummarizerError"]

_log = logging.getLogger(__name__)
_LOGGED_BODY_CHARS = 300

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
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.AsyncClient(
            base_url=base_url, headers=headers, timeout=timeout_seconds, transport=transport
        )
        self._model = model

    @property
    def version(self) -> str:
        """The model is what makes the text: it is the version stored with each summary."""
        return self._model

    async def fold(self, previous: str | None, turns: Sequence[FoldedTurn], share: int) -> str:
        lines = "\n".join(f"t{t.seq} {t.role}: {t.text}" for t in turns)
        prompt = f"Summary so far:\n{previous or '(none)'}\n\nNew turns:\n{lines or '(none)'}"
        body = {
            "model": self._model,
            "temperature": 0,
            "max_tokens": max(1, share),
            "messages": [
                {"role": "system", "content": INSTRUCTIONS.format(share=share)},
                {"role": "user", "content": prompt},
            ],
        }
        url = f"{self._client.base_url}chat/completions"
        try:
            response = await self._client.post("/chat/completions", json=body)
        except httpx.TimeoutException as exc:
            _log.warning("summarizer %s timed out: %r", url, exc)
            raise SummarizerError("the summarizer did not answer in time") from exc
        except httpx.HTTPError as exc:
            _log.warning("summarizer %s unreachable: %r", url, exc)
            raise SummarizerError("the summarizer could not be reached") from exc
        if response.is_error:
            _log.warning(
                "summarizer %s answered HTTP %d: %r",
                url,
                response.status_code,
                response.text[:_LOGGED_BODY_CHARS],
            )
            raise SummarizerError(f"the summarizer answered HTTP {response.status_code}")
        try:
            text = _completion_text(response.json())
        except (KeyError, IndexError, TypeError, ValueError) as exc:
            _log.warning(
                "summarizer %s answered no completion (%r): %r",
                url,
                exc,
                response.text[:_LOGGED_BODY_CHARS],
            )
            raise SummarizerError("the summarizer's answer is not a chat completion") from exc
        return text.strip()

    async def aclose(self) -> None:
        await self._client.aclose()


def _completion_text(answer: object) -> str:
    """The first choice's text; raises KeyError, IndexError or TypeError on anything else."""
    text = answer["choices"][0]["message"]["content"]  # type: ignore[index]
    if not isinstance(text, str):
        raise TypeError("the completion's content is not a string")
    return text
