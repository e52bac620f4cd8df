"""The embedder protocol."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

__all__ = ["Embedder", "EmbeddingError"]


class EmbeddingError(Exception):
    """The embedder could not produce vectors (model missing, remote server failing)."""


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
