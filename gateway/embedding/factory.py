"""Build the configured embedder from settings."""

from __future__ import annotations

from gateway.embedding.base import Embedder
from gateway.embedding.hashing import HashEmbedder
from gateway.shell.settings import Settings

__all__ = ["build_embedder"]


def build_embedder(settings: Settings) -> Embedder:
    if settings.embedder == "sentence-transformers":
        from gateway.embedding.local import SentenceTransformerEmbedder

        return SentenceTransformerEmbedder()
    if settings.embedder == "openai":
        from gateway.embedding.remote import OpenAIEmbedder

        return OpenAIEmbedder(
            settings.openai_base_url,
            settings.openai_model,
            settings.openai_api_key,
            settings.embedding_dim,
            timeout_seconds=settings.openai_timeout_seconds,
        )
    return HashEmbedder(settings.embedding_dim)
