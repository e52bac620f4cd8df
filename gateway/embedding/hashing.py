"""The default embedder: deterministic feature hashing, zero download.

Words (lower-cased, stop words dropped, a light suffix strip) and word bigrams are hashed with
BLAKE2b, a stable digest: Python's `hash()` is salted per process and would break determinism.
Each feature adds ±weight to one coordinate (the signed hashing trick, Weinberger et al. 2009),
with sublinear term frequency (1 + log tf); the vector is L2-normalized so cosine distance in
pgvector behaves like a bag-of-words cosine with rare collisions.

Without corpus statistics there is no IDF, so each word gets a static rarity weight instead: BPE
merges are learned in order of pair frequency (Sennrich et al. 2016), so the cl100k_base id of
" word" grows as the word gets rarer. A word that is one token weighs
``(ln id - ln 200) / (ln 100000 - ln 200)`` clamped to [0.05, 1] ("the" ≈ 0.05, "much" ≈ 0.36,
"coffee" ≈ 0.78); a word of several tokens is rare and weighs 1. A bigram weighs a quarter of the
geometric mean of its words. Tuned on LongMemEval_S half A (bench/RESULTS.md).
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import math
import re
from collections import Counter
from collections.abc import Sequence

from gateway.core.tokens import load_tokenizer

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
_BIGRAM_WEIGHT = 0.25
# Rarity weights from cl100k_base ids: ids below _COMMON_ID are the most frequent words.
_COMMON_ID = 200
_VOCABULARY = 100_000
_MIN_WEIGHT = 0.05


# Words recur (97% of stems on LongMemEval turns were seen before): ~11% of the embedder's time.
# Caching the features' hash slots as well was slower on real turns, whose bigrams rarely recur.
@functools.lru_cache(maxsize=1 << 16)
def _stem(word: str) -> str:
    """A deliberately tiny suffix strip: enough to meet 'recipes'/'recipe', never clever."""
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


@functools.lru_cache(maxsize=1 << 16)
def _rarity(word: str) -> float:
    """A static stand-in for IDF: how late BPE merged `` word`` (1 for multi-token words)."""
    ids = load_tokenizer("cl100k_base").encode(" " + word)
    if len(ids) > 1:
        return 1.0
    low, high = math.log(_COMMON_ID), math.log(_VOCABULARY)
    return min(1.0, max(_MIN_WEIGHT, (math.log(max(ids[0], 1)) - low) / (high - low)))


def _features(text: str) -> dict[str, float]:
    """Each feature's weight: rarity x (1 + log tf) for words, scaled for bigrams."""
    raw = [w for w in _WORD.findall(text.lower()) if w not in _STOP]
    words = [_stem(w) for w in raw]
    rarity: dict[str, float] = {}
    for stem, word in zip(words, raw, strict=True):
        # Surface forms of one stem may differ in rarity; the rarest decides, independent of order.
        rarity[stem] = max(rarity.get(stem, 0.0), _rarity(word))
    features = {w: rarity[w] * (1.0 + math.log(n)) for w, n in Counter(words).items()}
    for (a, b), n in Counter(itertools.pairwise(words)).items():
        features[f"{a} {b}"] = (
            _BIGRAM_WEIGHT * math.sqrt(rarity[a] * rarity[b]) * (1.0 + math.log(n))
        )
    return features


class HashEmbedder:
    def __init__(self, dim: int = 384) -> None:
        self._dim = dim

    @property
    def model(self) -> str:
        # v2: rarity-weighted words (v1 weighed every word alike). A new name for a new vector
        # space: queries never compare vectors across names.
        return f"hash-v2-{self._dim}"

    @property
    def dim(self) -> int:
        return self._dim

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [self._embed_one(text) for text in texts]

    def _embed_one(self, text: str) -> list[float]:
        vector = [0.0] * self._dim
        for feature, weight in sorted(_features(text).items()):
            digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
            value = int.from_bytes(digest, "big")
            index = value % self._dim
            sign = 1.0 if (value >> 63) & 1 else -1.0
            vector[index] += sign * weight
        norm = math.sqrt(sum(v * v for v in vector))
        if norm == 0.0:
            # An empty or stop-word-only text still needs a valid unit vector for cosine distance.
            vector[0] = 1.0
            return vector
        return [v / norm for v in vector]
