"""Embedders: text → unit vector, with the model name and dimension stored beside every vector.

A query only ever compares vectors of the same model, so switching embedders never mixes spaces.
"""

from __future__ import annotations

from gateway.embedding.base import Embedder, EmbeddingError
from gateway.embedding.factory import build_embedder
from gateway.embedding.hashing import HashEmbedder

__all__ = ["Embedder", "EmbeddingError", "HashEmbedder", "build_embedder"]
