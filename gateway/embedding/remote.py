"""Any OpenAI-compatible `/v1/embeddings` server."""

from __future__ import annotations

import math
from collections.abc import Sequence

import httpx

from gateway.embedding.base import EmbeddingError

__all__ = ["OpenAIEmbedder"]


class OpenAIEmbedder:
    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None,
        dim: int,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(
            base_url=base_url, headers=headers, timeout=30.0, transport=transport
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
        try:
            response = self._client.post(
                "/embeddings", json={"model": self._model, "input": list(texts)}
            )
            response.raise_for_status()
            data = sorted(response.json()["data"], key=lambda item: item["index"])
        except (httpx.HTTPError, KeyError, TypeError, ValueError) as exc:
            raise EmbeddingError(f"embedding server failed: {exc}") from exc
        vectors: list[list[float]] = []
        for item in data:
            vector = [float(x) for x in item["embedding"]]
            if len(vector) != self._dim:
                raise EmbeddingError(
                    f"embedding server returned {len(vector)} dimensions; "
                    f"GATEWAY_EMBEDDING_DIM is {self._dim}"
                )
            norm = math.sqrt(sum(x * x for x in vector)) or 1.0
            vectors.append([x / norm for x in vector])
        if len(vectors) != len(texts):
            raise EmbeddingError("embedding server returned a different number of vectors")
        return vectors
