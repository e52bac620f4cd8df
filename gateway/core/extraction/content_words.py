"""The words an attribute is named by, and those it is not: English function words (and light
adverbs), which name no attribute, and a crude stem, by which two statements' content words meet
however they are inflected ("tried"/"try", "videos"/"video"). Closed classes of English, shared
by the readers of values (`typed_values`, `asked_shapes`), of statements (`holders`, `triples`,
`generalized`, `resolution`, `named_values`) and of questions (`gateway.core.asked_values`).
"""

from __future__ import annotations

import functools

__all__ = ["FUNCTION_WORDS", "stem"]

# English function words and light adverbs: what an attribute's name is not made of.
FUNCTION_WORDS = frozenset(
    {
        *("a", "an", "the", "this", "that", "these", "those", "my", "our", "your", "his", "her"),
        *("their", "its", "i", "we", "you", "he", "she", "they", "it", "me", "us", "them"),
        *("is", "are", "was", "were", "be", "been", "being", "am", "'m", "'re", "'s", "'ve"),
        *("have", "has", "had", "do", "does", "did", "got", "get", "gets", "will", "would"),
        *("and", "or", "but", "so", "of", "in", "on", "at", "to", "for", "from", "with", "by"),
        *("as", "about", "into", "over", "than", "then", "now", "just", "already", "still"),
        *("currently", "actually", "really", "finally", "officially", "also", "too", "very"),
        *("far", "up", "down", "out", "around", "roughly", "approximately", "only", "even"),
        *("all", "some", "any", "more", "most", "much", "many", "lot", "lots", "total"),
        *("since", "until", "after", "before", "while", "when", "where", "which", "who"),
        *("what", "how", "why", "there", "here", "if", "because", "like", "including", "per"),
        *("i'm", "i've", "we're", "we've", "it's", "i'd", "i'll", "we'll", "not", "no", "yes"),
        *("by", "way", "anyway", "btw", "well", "oh", "hey", "hi", "thanks", "new", "current"),
        *("at", "least", "almost", "nearly", "about", "recently", "lately", "today", "ago"),
        *("few", "both", "several", "each", "either", "neither", "other", "others", "same"),
    }
)


@functools.lru_cache(maxsize=1 << 16)  # pure, and most words of a conversation recur
def stem(word: str) -> str:
    """A crude stem, enough to meet "tried"/"try", "videos"/"video", "making"/"make"."""
    word = word.casefold().removesuffix("'s").removesuffix("’s")
    for suffix, instead in (("ies", "y"), ("ied", "y"), ("ing", ""), ("ed", ""), ("es", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)] + instead
            break
    else:
        if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
            word = word[:-1]
    return word.rstrip("e") if len(word) > 3 else word
