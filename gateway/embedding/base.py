"""The embedder protocol."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from gateway.domain.errors import UnavailableError

__all__ = ["Embedder", "EmbeddingError"]


class EmbeddingError(UnavailableError):
    """The embedder could not produce vectors (model missing, remote server failing).

    An `UnavailableError`, so that whoever embeds (a write, a disclosure) fails closed with 503
    `embedder_unavailable` and no content, without translating it. Its detail reaches clients:
    it says what failed in our words; the upstream's own words go to the log."""

    code = "embedder_unavailable"


class Embedder(Protocol):
    @property
    def model(self) -> str:
        """A stable name for the vector space, stored with every vector."""
        ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One L2-normalized vector per text, in order."""
        ...
