"""Any OpenAI-compatible `/v1/embeddings` server.

Every way the server can fail (unreachable, too slow, an HTTP error, an answer that is not an
embeddings response) is an `EmbeddingError` whose detail says which, in our words: clients see
that, and the server's or the driver's own words are logged here, never sent.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence

import httpx

from gateway.embedding.base import EmbeddingError

__all__ = ["OpenAIEmbedder"]

_log = logging.getLogger(__name__)
NOT_EMBEDDINGS = "the embedding server's answer is not an embeddings response"
_LOGGED_BODY_CHARS = 300  # enough of an upstream error body to diagnose it


class OpenAIEmbedder:
    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None,
        dim: int,
        transport: httpx.BaseTransport | None = None,
        *,
        timeout_seconds: float = 30.0,
    ) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(
            base_url=base_url, headers=headers, timeout=timeout_seconds, transport=transport
        )
        self._model = model
        self._dim = dim

    @property
    def model(self) -> str:
        return self._model

    @property
    def dim(self) -> int:
        return self._dim

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        url = f"{self._client.base_url}embeddings"
        try:
            response = self._client.post(
                "/embeddings", json={"model": self._model, "input": list(texts)}
            )
        except httpx.TimeoutException as exc:
            _log.warning("embedding server %s timed out: %r", url, exc)
            raise EmbeddingError("the embedding server did not answer in time") from exc
        except httpx.HTTPError as exc:
            _log.warning("embedding server %s unreachable: %r", url, exc)
            raise EmbeddingError("the embedding server could not be reached") from exc
        if response.is_error:
            _log.warning(
                "embedding server %s answered HTTP %d: %r",
                url,
                response.status_code,
                response.text[:_LOGGED_BODY_CHARS],
            )
            raise EmbeddingError(f"the embedding server answered HTTP {response.status_code}")
        try:
            vectors = _vectors(response.json())
        except (KeyError, TypeError, ValueError) as exc:
            _log.warning(
                "embedding server %s answered no embeddings (%r): %r",
                url,
                exc,
                response.text[:_LOGGED_BODY_CHARS],
            )
            raise EmbeddingError(NOT_EMBEDDINGS) from exc
        for vector in vectors:
            if len(vector) != self._dim:
                raise EmbeddingError(
                    f"embedding server returned {len(vector)} dimensions; "
                    f"GATEWAY_EMBEDDING_DIM is {self._dim}"
                )
        if len(vectors) != len(texts):
            raise EmbeddingError("embedding server returned a different number of vectors")
        return vectors


def _vectors(answer: object) -> list[list[float]]:
    """The unit vectors of an embeddings response, in input order; raises KeyError, TypeError
    or ValueError on anything else (a vector that is empty, zero or not finite included)."""
    data = sorted(answer["data"], key=lambda item: item["index"])  # type: ignore[index]
    vectors: list[list[float]] = []
    for item in data:
        vector = [float(x) for x in item["embedding"]]
        norm = math.sqrt(sum(x * x for x in vector))
        if not vector or not math.isfinite(norm) or norm == 0.0:
            raise ValueError("an embedding is empty, zero or not finite")
        vectors.append([x / norm for x in vector])
    return vectors
