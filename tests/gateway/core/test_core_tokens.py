"""Token counts: a long text counted line by line costs exactly what it costs whole."""

from __future__ import annotations

import tiktoken
from hypothesis import given, settings
from hypothesis import strategies as st

from gateway.core.tokens import _CACHED_CHARS, Tokenizer, _LineSeams, load_tokenizer

TOKENIZER = load_tokenizer()

# Characters the pre-tokenizer treats differently: line breaks and other whitespace (Unicode
# too), apostrophes (contractions), digits (runs of three), punctuation ("/" ends some patterns'
# punctuation runs), letters with and without case, marks, symbols.
_TRICKY = list("aZé日ß 9'’/.-_*#[]()\n\r\t\u00a0\u2028\u3000\x0b\x0c\x1c\u0301😀")
_TEXT = st.lists(st.sampled_from(_TRICKY) | st.sampled_from(["\n\n", "'s", "'ll", " \n", "- [m1]"]))


def _whole(text: str) -> int:
    return len(TOKENIZER.encode(text))


@settings(max_examples=3000, deadline=None)
@given(_TEXT)
def test_the_parts_between_seams_add_up_to_the_whole(parts: list[str]) -> None:
    text = "".join(parts)
    assert sum(_whole(part) for part in _LineSeams.split(text)) == _whole(text)
    assert "".join(_LineSeams.split(text)) == text


def test_a_long_bundle_shaped_text_counts_as_it_does_whole() -> None:
    lines = [
        f"- [m{i}] fact 0.{i % 10} {'note ' * (i % 7)}it's {i * 1234} km/h\n"
        f"  {'é' * (i % 3)}/path {'  ' * (i % 2)}\r\n{' ' * (i % 4)}"
        for i in range(400)
    ]
    text = "## Index\n\n" + "\n".join(lines) + "\n\n## Memories in full\n\n" + "x" * 5000
    assert len(text) > _CACHED_CHARS
    assert TOKENIZER.count(text) == _whole(text)
    assert TOKENIZER.count(text) == _whole(text)  # again, from the lines' cached counts


def test_only_the_pattern_the_argument_holds_for_is_cut() -> None:
    # gpt2's pattern, on cl100k's ranks: "  \n" before a word is cut differently in context.
    gpt2 = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
    base = TOKENIZER.encoding
    other = tiktoken.Encoding(
        "gpt2-on-cl100k",
        pat_str=gpt2,
        mergeable_ranks=base._mergeable_ranks,
        special_tokens={},
    )
    seamless = Tokenizer(name="gpt2-on-cl100k", encoding=other)
    text = ("foo \t  \nx" * 400)[:-1] + "y"
    parts = sum(len(other.encode_ordinary(p)) for p in _LineSeams.split(text))
    assert parts != len(other.encode_ordinary(text))  # the seams would be wrong here
    assert seamless.count(text) == len(other.encode_ordinary(text))
    assert TOKENIZER.count(text) == _whole(text)
