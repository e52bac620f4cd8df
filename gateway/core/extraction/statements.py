"""The sentences of a turn that may state facts: all of the user's (a request to save a value read
with the sentence that gives it), the assistant's only from its confirmation of an action on."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from gateway.core.extraction.facts import Episode

__all__ = ["sentences", "statements"]

# A sentence ends at . ! or ? before a letter, a digit or an opening quote (people type to a
# chatbot in lower case: "ugh, my rate goes up to $172. can you write ...?" is two sentences),
# but not after a title ("Dr. Abernathy") or a common abbreviation ("e.g. oat milk").
# (A leading character class lets the engine skip to candidates; titles are checked after.)
_SENTENCE = re.compile(r"([.!?]) (?=[\"'(]?[A-Za-z0-9$])")  # on whitespace-folded text
_TITLE = re.compile(
    r"(?:^|\s)(?:Dr|Mr|Ms|Mrs|St|Jr|vs|Prof|e\.g|i\.e|etc|approx|a\.m|p\.m|incl|no)\.$",
    re.IGNORECASE,
)
_CONFIRMATION = re.compile(
    r"^(done|updated|confirmed|noted|all set|got it|changed|booked|rebooked|switched|saved)\b",
    re.IGNORECASE,
)
_OPENS_ANYWHERE = re.compile(
    r"(?:^|[.!?]\s+)(?:done|updated|confirmed|noted|all set|got it|changed|booked|rebooked|"
    r"switched|saved|i've|i have)\b",
    re.IGNORECASE,
)
# An assistant sentence that reports its own action on the user's records ("I've updated your
# primary care doctor to ..."), wherever it stands in the turn.
_ACTION = re.compile(
    r"^(?:i've|i have) (?:updated|changed|set|moved|switched|noted|saved|added|rebooked)\b",
    re.IGNORECASE,
)


def sentences(text: str) -> list[str]:
    """The sentences of `text`, whitespace folded."""
    sentences: list[str] = []
    parts = _SENTENCE.split(" ".join(text.split()))  # text, its end mark, text, ...
    pieces = [
        parts[i] + (parts[i + 1] if i + 1 < len(parts) else "") for i in range(0, len(parts), 2)
    ]
    for piece in pieces:
        if sentences and _TITLE.search(sentences[-1]):
            sentences[-1] += " " + piece  # "Dr." ends no sentence
        elif piece.strip():
            sentences.append(piece.strip())
    return sentences


# "Can you save my shipping address? 14 Elm Court, ...": a request naming what the next
# sentence is the value of.
_SAVE_REQUEST = re.compile(
    r"^(?:can|could|would|will) you (?:please )?(?:save|store|remember|note|update|change|set|"
    r"keep|add) (?P<owner>my|our) (?P<attr>[a-z][a-z -]{1,30}?)(?: (?:as|to|for me|on file))?\?$",
    re.IGNORECASE,
)


def _answered_requests(sentences: Sequence[str]) -> Iterable[str]:
    """The sentences of a user's turn, a request to save a value and the sentence giving it
    read as one statement ("My shipping address is 14 Elm Court, ...")."""
    index = 0
    while index < len(sentences):
        request = _SAVE_REQUEST.match(sentences[index])
        answer = sentences[index + 1] if index + 1 < len(sentences) else None
        if request and answer and not answer.endswith("?"):
            owner = request.group("owner").capitalize()
            yield f"{owner} {request.group('attr')} is {answer}"
            index += 2
            continue
        yield sentences[index]
        index += 1


def statements(episode: Episode) -> Iterable[tuple[str, bool]]:
    """The sentences of a turn that may state facts, each with whether it is the assistant's
    confirmation: all of the user's; the assistant's only from a confirmation of an action on
    ("Done. Your plan is now Premium.", "... Noted: Wingspan is your new favorite.")."""
    if episode.role == "user":
        yield from ((sentence, False) for sentence in _answered_requests(sentences(episode.text)))
        return
    if episode.role != "assistant" or _OPENS_ANYWHERE.search(episode.text) is None:
        return  # no sentence of it can open a confirmation: not worth splitting
    confirmed = False
    for sentence in sentences(episode.text):
        opening = _CONFIRMATION.match(sentence)
        if not confirmed and (opening or _ACTION.match(sentence)):
            confirmed = True
            rest = sentence[opening.end() :].lstrip(" .:,!-—") if opening else sentence
            if not rest:
                continue  # "Done." opens; the sentences after it say what now holds
            sentence = rest  # noqa: PLW2901  what follows "Noted:" is the statement
        if confirmed and re.search(r"\b(now|your|is|are)\b", sentence, re.I):
            yield sentence, True
