"""What of a user's turn is the speaker's own words, and a sentence of them as the cues of an
introduction read it (rules/2026-12-06.2): each a convention of written text, not of a case.

Someone else's words (`own_words`): words in quotation marks, across sentences too ("Can you
translate this? 'Hi, I'm Ben, the new intern. See you all!'"); a forwarded or quoted message and
a role-play in which the speaker takes a part, to a rule of dashes or the end (`elsewhere`).

A sentence made plain (`plain`): text given to work on after an ask that says nothing of the
speaker is left out ("Translate this into Dutch: Welcome, I'm ..."); a symbol that is not
punctuation (an emoji, a pictograph) or an emoticon ends a clause as a stop would ("I'm Chiara
from Verdanza Foods 🌱 we'd love ..."); an honorific after the words that name the speaker is no
part of the name ("I am Mr. Horace Whitfield"); any greeting opening a sentence, whatever its
words and mark ("hallo,", "Hi there —", "Hey guys,", "Hi IT team,"), is the one greeting the cues
know, and never a name ("Yo, saw your booth"); a closing line of parts is left to the signature
reader (`signatures`).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Sequence

from gateway.core.extraction.introducing import UPPER

__all__ = ["OPENING_GREETING", "THANKS", "elsewhere", "own_words", "plain"]

# Where someone else's words start: a forwarded or quoted message, a role-play in which the
# speaker takes a part ("Let's role-play: ... I'm the store manager"; not "pretend you're my
# interviewer", which leaves the speaker themselves). They run to a rule of dashes or the end.
_ELSEWHERE = re.compile(
    r"-{3,} ?(?:forwarded|original) message ?-*|begin forwarded message:?|\bon \w.{4,80} "
    r"wrote:|\brole[- ]?play|\blet's pretend\b|\bpretend (?:to be|i'm|i am)\b|\bimagine "
    r"(?:i'm|i am)\b",
    re.IGNORECASE,
)
_RULE = re.compile(r"(?<!\S)[-_=]{5,}(?=\s|$)")


def elsewhere(text: str) -> list[tuple[int, int]]:
    """The spans of `text` that are someone else's words (`_ELSEWHERE`), each to the next rule
    of dashes ("----------") or the end."""
    spans: list[tuple[int, int]] = []
    at = 0
    while (start := _ELSEWHERE.search(text, at)) is not None:
        rule = _RULE.search(text, start.end())
        end = rule.end() if rule else len(text)
        spans.append((start.start(), end))
        at = end
    return spans


_QUOTE_MARK = re.compile("[\"“”‘’'«»]")
# Text given to work on after an ask that says nothing of the speaker ("Translate this into
# Dutch and summarize it in 10 bullets: Welcome, I'm ...", "Check this out: Zhao, X. (2021)").
_GIVEN = re.compile(r"^(?P<ask>(?:[^:\s]+ ){3,}[^:\s]+):\s")
_SPEAKER = re.compile(r"\b(?:i|i'm|im|i've|i'd|my|me|we|we're|our|us)\b", re.IGNORECASE)
_EMOTICON = re.compile(r"(?<!\w)[:;]-?[)(DPp](?!\w)")
# An honorific after the words that name the speaker: "I am Mr. Horace Whitfield".
_HONORIFIC = re.compile(
    rf"\b(?P<cue>(?i:i'm|i am|im|this is|my name is|it's)) (?:Mr|Mrs|Ms|Mx|Miss|Dr|Prof)\.? "
    rf"(?=[{UPPER}])"
)
OPENING_GREETING = re.compile(
    r"^(?:(?:hi|hello|hey|hallo|hiya|heya|howdy|greetings|yo|sup|dear|good day|"
    r"good (?:morning|afternoon|evening)|morning|afternoon|evening)"
    r"(?: (?:there|all|everyone|folks|guys|team|[A-Z][\w-]*(?: team)?))?)\s*[,!:.—–-]+\s*",
    re.IGNORECASE,
)
_SIGNING_OFF = re.compile(
    r"^(?:sincerely|regards|kind regards|best regards|warm regards|best wishes|yours "
    r"(?:truly|sincerely|faithfully)|cheers|thanks|many thanks|thank you),",
    re.IGNORECASE,
)
THANKS = re.compile(r"^(?:thx|thnx|thanx|tks|ty)\b", re.IGNORECASE)


def _quoted(text: str) -> list[tuple[int, int]]:
    """The spans of `text` in quotation marks: an opening mark after a space, a colon or a
    bracket and before a letter or a digit, closed by the next mark not between letters (an
    apostrophe: "don't", "O'Brien"); an opening mark never closed quotes nothing ("rock 'n'
    roll" aside, "'cause")."""
    spans: list[tuple[int, int]] = []
    opened: int | None = None
    for found in _QUOTE_MARK.finditer(text):
        at = found.start()
        before = text[at - 1] if at else " "
        after = text[at + 1] if at + 1 < len(text) else " "
        if before.isalpha() and after.isalpha():
            continue
        if opened is None and (before.isspace() or before in ":([") and after.isalnum():
            opened = at
        elif opened is not None and not after.isalnum():
            spans.append((opened, at + 1))
            opened = None
    return spans


def own_words(sentences: Sequence[str]) -> list[str]:
    """Each of a turn's `sentences` less what is someone else's: words in quotation marks
    (across sentences too), and a forwarded message or a role-play (`elsewhere`)."""
    text = "\n".join(sentences)
    kept = list(text)
    for start, end in [*_quoted(text), *elsewhere(text)]:
        kept[start:end] = [c if c == "\n" else " " for c in kept[start:end]]
    return [" ".join(line.split()) for line in "".join(kept).split("\n")]


def _symbol(char: str) -> bool:
    return unicodedata.category(char) in {"So", "Sk", "Cs", "Co"} or char in "\u200d\ufe0f"


_STOP = re.compile(r"\s*\x00[\x00\s]*")


def _stops(text: str) -> str:
    """`text` with its symbols and emoticons marked as stops (`\\x00`)."""
    text = _EMOTICON.sub("\x00", text)
    if text.isascii():  # of ASCII, only "^" and "`" are symbols: no character to look up
        return text.replace("^", "\x00").replace("`", "\x00")
    return "".join("\x00" if _symbol(c) else c for c in text)


@functools.lru_cache(maxsize=4096)
def plain(sentence: str) -> str:
    """`sentence` (the speaker's own words: `own_words`) as the cues read it: no text given to
    work on, a symbol or an emoticon a stop, no honorific, one greeting."""
    signing_off = _SIGNING_OFF.match(sentence)
    if signing_off and "," in sentence[signing_off.end() :]:
        return ""  # a closing line of parts is a signature's, read by them (`signatures`)
    text = sentence
    given = _GIVEN.match(text)
    if given and not _SPEAKER.search(given.group("ask")):
        text = given.group("ask")
    text = _STOP.sub(". ", _stops(text)).strip()
    text = _HONORIFIC.sub(r"\g<cue> ", text)
    text = OPENING_GREETING.sub("Hi, ", text)
    return " ".join(THANKS.sub("Thanks", text).split())
