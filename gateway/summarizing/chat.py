"""One OpenAI-compatible `/v1/chat/completions` exchange, shared by the models the gateway may
call out to (the chat summarizer, the chat extractor). Every way the server can fail becomes the
caller's error type, with a detail in our words; the server's own words are logged, never sent.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import httpx

__all__ = ["ChatCompletions"]

_log = logging.getLogger(__name__)
_LOGGED_BODY_CHARS = 300


class ChatCompletions:
    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None,
        *,
        what: str,  # who is asking, in log lines and errors: "summarizer", "extractor"
        error: Callable[[str], Exception],
        timeout_seconds: float = 30.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.AsyncClient(
            base_url=base_url, headers=headers, timeout=timeout_seconds, transport=transport
        )
        self.model = model
        self._what = what
        self._error = error

    async def complete(self, system: str, user: str, **options: Any) -> str:
        """The first choice's text for one system + user exchange at temperature 0."""
        body = {
            "model": self.model,
            "temperature": 0,
            "messages": [
                {"role": "system", "content": system},
                {"role": "user", "content": user},
            ],
            **options,
        }
        url = f"{self._client.base_url}chat/completions"
        what = self._what
        try:
            response = await self._client.post("/chat/completions", json=body)
        except httpx.TimeoutException as exc:
            _log.warning("%s %s timed out: %r", what, url, exc)
            raise self._error(f"the {what} did not answer in time") from exc
        except httpx.HTTPError as exc:
            _log.warning("%s %s unreachable: %r", what, url, exc)
            raise self._error(f"the {what} could not be reached") from exc
        if response.is_error:
            _log.warning(
                "%s %s answered HTTP %d: %r",
                what,
                url,
                response.status_code,
                response.text[:_LOGGED_BODY_CHARS],
            )
            raise self._error(f"the {what} answered HTTP {response.status_code}")
        try:
            return _completion_text(response.json())
        except (KeyError, IndexError, TypeError, ValueError) as exc:
            _log.warning(
                "%s %s answered no completion (%r): %r",
                what,
                url,
                exc,
                response.text[:_LOGGED_BODY_CHARS],
            )
            raise self._error(f"the {what}'s answer is not a chat completion") from exc

    async def aclose(self) -> None:
        await self._client.aclose()


def _completion_text(answer: object) -> str:
    """The first choice's text; raises KeyError, IndexError or TypeError on anything else."""
    text = answer["choices"][0]["message"]["content"]  # type: ignore[index]
    if not isinstance(text, str):
        raise TypeError("the completion's content is not a string")
    return text
