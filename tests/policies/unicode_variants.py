"""Ways to write a secret that look the same to a reader and are not ASCII: the variants the
Unicode detector tests draw (hypothesis strategies) and name (the probe's families)."""

from __future__ import annotations

import string

from hypothesis import strategies as st

from policies.textnorm import CONFUSABLES

# Digit sets of every kind: fullwidth, mathematical (bold, double-struck, sans-serif,
# monospace), Arabic-Indic, extended Arabic-Indic, Devanagari, Bengali, Thai.
DIGIT_BASES = [0xFF10, 0x1D7CE, 0x1D7D8, 0x1D7E2, 0x1D7F6, 0x660, 0x6F0, 0x966, 0x9E6, 0xE50]
# Format characters (Cf) and other invisibles: zero-width space, non-joiner, joiner, word
# joiner, BOM, soft hyphen, Mongolian vowel separator, invisible times, combining grapheme
# joiner, Hangul filler.
INVISIBLE = [
    "\u200b",
    "\u200c",
    "\u200d",
    "\u2060",
    "\ufeff",
    "\u00ad",
    "\u180e",
    "\u2062",
    "\u034f",
    "\u3164",
]
DASHES = ["\u2010", "\u2011", "\u2012", "\u2013", "\u2014", "\u2015", "\u2212", "\ufe63", "\uff0d"]
SPACES = ["\u00a0", "\u2007", "\u202f", "\u3000", "\u2009", "\u2002", "\u205f"]
DOTS = ["\uff0e", "\u2024", "\ufe52"]
ATS = ["\uff20", "\ufe6b"]
# Combining marks (Mn, and an enclosing Me) and a variation selector.
MARKS = ["\u0301", "\u0308", "\u0323", "\u0335", "\u20dd", "\ufe0f"]

# Per ASCII letter, the look-alikes that fold to it: the confusables table, fullwidth and
# mathematical bold forms.
LOOKALIKES: dict[str, list[str]] = {letter: [] for letter in string.ascii_letters}
for source, target in CONFUSABLES.items():
    if target in LOOKALIKES:
        LOOKALIKES[target].append(source)
for index, letter in enumerate(string.ascii_uppercase):
    LOOKALIKES[letter] += [chr(0xFF21 + index), chr(0x1D400 + index)]
for index, letter in enumerate(string.ascii_lowercase):
    LOOKALIKES[letter] += [chr(0xFF41 + index), chr(0x1D41A + index)]


def digit(value: str, base: int) -> str:
    return chr(base + int(value))


def _case(draw: st.DrawFn, secret: str) -> str:
    """An IBAN in upper, lower or mixed case."""
    case = draw(st.sampled_from(["upper", "lower", "mixed"]))
    if case == "lower":
        return secret.lower()
    if case == "mixed":
        return "".join(c.lower() if draw(st.booleans()) else c for c in secret)
    return secret


_SWAPS = {" ": SPACES, "-": DASHES, ".": DOTS, "@": ATS, **LOOKALIKES}


def _swapped(draw: st.DrawFn, char: str, digit_base: int | None) -> str:
    """`char`, or a look-alike of its kind (a digit of `digit_base`'s script, mostly)."""
    swap = draw(st.integers(0, 3)) == 0
    if char.isdigit():
        base = draw(st.sampled_from(DIGIT_BASES)) if swap else digit_base
        return char if base is None else digit(char, base)
    if swap and char in _SWAPS:
        return draw(st.sampled_from(_SWAPS[char]))
    return char


@st.composite
def disguised(draw: st.DrawFn, secret: str, detector: str) -> str:
    """`secret` (ASCII) rewritten: each character maybe swapped for a look-alike of its kind,
    maybe followed by a combining mark; invisible characters inside it (never at its ends,
    where they are not part of the secret); an IBAN maybe in lower or mixed case."""
    if detector == "iban":
        secret = _case(draw, secret)
    digit_base = draw(st.sampled_from([None, *DIGIT_BASES]))  # one script per secret, mostly
    out: list[str] = []
    for char in secret:
        out.append(_swapped(draw, char, digit_base))
        if char.isalnum() and draw(st.integers(0, 7)) == 0:
            out[-1] += draw(st.sampled_from(MARKS))
    for _ in range(draw(st.integers(0, 3))):
        if len(out) > 1:
            at = draw(st.integers(1, len(out) - 1))
            out.insert(at, draw(st.sampled_from(INVISIBLE)))
    return "".join(out)


# The probe's families, one example each: (family, detector, text, the secret in it).
def _digits(text: str, base: int) -> str:
    return "".join(digit(c, base) if c.isdigit() else c for c in text)


CARD = "4111 1111 1111 1111"
PHONE = "415-555-0134"
EMAIL = "ann@example.com"
IBAN = "DE89 3704 0044 0532 0130 00"
FAMILIES: list[tuple[str, str, str]] = [
    ("zero-width space", "card", CARD.replace(" ", " \u200b")),
    ("zero-width non-joiner", "email", "ann\u200c@exam\u200cple.com"),
    ("zero-width joiner", "phone", PHONE.replace("-", "\u200d-")),
    ("word joiner", "iban", IBAN.replace(" ", "\u2060 ")),
    ("BOM", "card", "4111\ufeff1111\ufeff1111\ufeff1111"),
    ("fullwidth digits", "card", _digits(CARD, 0xFF10)),
    ("mathematical digits", "phone", _digits(PHONE, 0x1D7CE)),
    ("Arabic-Indic digits", "phone", _digits(PHONE, 0x660)),
    ("extended Arabic-Indic digits", "card", _digits(CARD, 0x6F0)),
    ("fullwidth at", "email", "ann\uff20example.com"),
    ("small at", "email", "ann\ufe6bexample.com"),
    ("Cyrillic homoglyphs in an email", "email", "\u0430nn@\u0435x\u0430mple.\u0441\u043em"),
    ("Cyrillic homoglyphs in an IBAN", "iban", "D\u041589 3704 0044 0532 0130 00"),
    ("Greek homoglyphs in a token", "api_token", "\u0391KIAIOSFODNN7EXAMPLE"),
    ("combining marks", "email", "a\u0301nn@exa\u0308mple.com\u0323"),
    ("soft hyphens", "card", "4111\u00ad1111\u00ad1111\u00ad1111"),
    ("no-break spaces", "card", CARD.replace(" ", "\u00a0")),
    ("figure spaces", "phone", "415\u2007555\u20070134"),
    ("narrow no-break spaces", "iban", IBAN.replace(" ", "\u202f")),
    ("ideographic spaces", "card", CARD.replace(" ", "\u3000")),
    ("en dashes in a card number", "card", CARD.replace(" ", "\u2013")),
    ("em dashes in a phone number", "phone", PHONE.replace("-", "\u2014")),
    ("minus signs in a card number", "card", CARD.replace(" ", "\u2212")),
    ("dots in a card number", "card", CARD.replace(" ", ".")),
    ("fullwidth dots in a phone number", "phone", PHONE.replace("-", "\uff0e")),
    ("lower-case IBAN", "iban", IBAN.lower()),
    (
        "fullwidth letters in a token",
        "api_token",
        "\uff53\uff4b-proj-abcdefghijklmnopqrstuvwxyz0123",
    ),
]
