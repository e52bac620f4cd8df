"""The default embedder: deterministic feature hashing, zero download.

Words (lower-cased, stop words dropped, a light suffix strip) and word bigrams are hashed with
BLAKE2b, a stable digest: Python's `hash()` is salted per process and would break determinism.
Each feature adds ±weight to one coordinate (the signed hashing trick, Weinberger et al. 2009),
with sublinear term frequency (1 + log tf); the vector is L2-normalized so cosine distance in
pgvector behaves like a bag-of-words cosine with rare collisions.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import re
from collections import Counter
from collections.abc import Sequence

__all__ = ["HashEmbedder"]

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_STOP = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "me",
        "more",
        "most",
        "my",
        "myself",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
        "would",
        "could",
        "also",
        "get",
        "got",
        "im",
        "ive",
        "id",
    ]
)
_BIGRAM_WEIGHT = 0.5


def _stem(word: str) -> str:
    """A deliberately tiny suffix strip: enough to meet 'recipes'/'recipe', never clever."""
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def _features(text: str) -> Counter[str]:
    words = [_stem(w) for w in _WORD.findall(text.lower()) if w not in _STOP]
    features: Counter[str] = Counter(words)
    features.update(f"{a} {b}" for a, b in itertools.pairwise(words))
    return features


class HashEmbedder:
    def __init__(self, dim: int = 384) -> None:
        self._dim = dim

    @property
    def model(self) -> str:
        return f"hash-v1-{self._dim}"

    @property
    def dim(self) -> int:
        return self._dim

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [self._embed_one(text) for text in texts]

    def _embed_one(self, text: str) -> list[float]:
        vector = [0.0] * self._dim
        for feature, count in sorted(_features(text).items()):
            digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
            value = int.from_bytes(digest, "big")
            index = value % self._dim
            sign = 1.0 if (value >> 63) & 1 else -1.0
            weight = _BIGRAM_WEIGHT if " " in feature else 1.0
            vector[index] += sign * weight * (1.0 + math.log(count))
        norm = math.sqrt(sum(v * v for v in vector))
        if norm == 0.0:
            # An empty or stop-word-only text still needs a valid unit vector for cosine distance.
            vector[0] = 1.0
            return vector
        return [v / norm for v in vector]
