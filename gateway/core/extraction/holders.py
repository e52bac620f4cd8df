"""Whose a value is: the subject of the clause that states it, read by the sentence's structure
rather than by a listed phrasing (the subject of a statement: `triples`).

The subject is the nearest one before the value in its clause. The speaker ("I", "we", "my",
"our", or no subject at all when a user's sentence opens with a verb: "Got promoted, new base is
$168,000") holds the attribute; another person ("she", "my sister", "Emma's") does not, and
gives no statement: someone else's value is not the user's. A clause that names no subject
carries the speaker of the clause before ("I sold it, got $38,500").

A clause is cut at a semicolon, a dash, or a comma (not inside a number); each clause holds its
own values, so a second subject's value in the next clause is never this one's.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from gateway.core.extraction.content_words import FUNCTION_WORDS, stem

__all__ = [
    "OTHERS",
    "SPEAKER",
    "SPEAKER_OWNS",
    "THIRD_PERSONS",
    "TOKEN",
    "another_holder",
    "clauses",
    "has_subject",
    "names_another",
    "nearest_subject",
    "read_clauses",
    "speaker_holds",
]

_CLAUSE = re.compile(r"\s*(?:[;:—–]|\s-\s|,(?!\d{3})|\(|\))\s*")
TOKEN = re.compile(r"[A-Za-z][\w'’-]*")
SPEAKER = frozenset({"i", "i'm", "i've", "i'd", "i'll", "we", "we're", "we've", "we'd"})
SPEAKER_OWNS = frozenset({"my", "our", "me", "us"})
# Other people, by pronoun: "her base is $190,000" is hers, whatever the phrase.
THIRD_PERSONS = frozenset(
    {"he", "she", "they", "his", "her", "their", "him", "them", "hers", "he's", "she's"}
    | {"they're"}
)
OTHERS = THIRD_PERSONS - {"him", "them", "hers"} | frozenset(
    {"someone", "somebody", "everyone", "people", "you", "your", "you're", "it's", "its"}
)
# People a possessive names: "my sister has 3 kids" is the sister's count, not the user's.
_PEOPLE = frozenset(
    {
        *("sister", "brother", "mom", "mother", "dad", "father", "parent", "wife", "husband"),
        *("son", "daughter", "kid", "child", "children", "friend", "boss", "manager"),
        *("coworker", "colleague", "neighbor", "neighbour", "partner", "boyfriend"),
        *("girlfriend", "cousin", "aunt", "uncle", "grandma", "grandpa", "grandmother"),
        *("grandfather", "roommate", "client", "customer", "teacher", "coach", "doctor"),
        *("fiance", "fiancé", "fiancée", "spouse", "niece", "nephew", "family", "team"),
    }
)
_PEOPLE_STEMS = frozenset(stem(p) for p in _PEOPLE)
# Whoever shares something with the speaker: "my labmate", "my teammate" (not "my estimate").
_MATE = re.compile(
    r"(?:room|class|lab|team|house|flat|ship|play|work|bunk|suite|school|cell)mates?"
)

_SUBJECT_VERBS = frozenset(
    {"has", "have", "had", "is", "was", "got", "did", "does", "tried", "made", "owns", "said"}
)
# A sentence whose subject is elided opens with one of these ("Got promoted", "Sold the Tesla",
# "Just hit 172 pounds"); any word ending in -ed is taken as such a verb too.
_ELIDED = frozenset(
    {"got", "just", "finally", "sold", "bought", "hit", "ran", "paid", "made", "took", "spent"}
)
_ARTICLES = frozenset({"a", "an", "the", "one", "another", "some"})
# Words whose "'s" is "is" or "us", not a possessive: "It's", "That's", "Let's".
_CONTRACTED = frozenset(
    {"it", "that", "there", "what", "here", "let", "he", "she", "who", "where", "how", "this"}
)
_AUXILIARIES = frozenset({"are", "is", "was", "were", "have", "has", "had", "will", "just"})
# Prepositions of place: the possessive after one is an object's ("the gym near my office").
_PLACE_PREPOSITIONS = frozenset({"near", "behind", "beside", "across", "next"})


def clauses(sentence: str) -> list[str]:
    """The clauses of a sentence, each holding its own values."""
    return [c for c in _CLAUSE.split(sentence) if c.strip()]


def _person(word: str) -> bool:
    """Whether `word` after "my" names one of the speaker's people ("my sister", "my labmate"),
    not a group the speaker is of ("my team", "my family")."""
    named = stem(word) in _PEOPLE_STEMS or _MATE.fullmatch(word.casefold()) is not None
    return named and word not in {"team", "family"}


def nearest_subject(left: list[str], first_clause: bool, role: str) -> tuple[bool, int] | None:
    """The nearest subject before a value and where it stands: `(True, i)` the speaker (for the
    assistant's confirmation, the user it addresses: "your"), `(False, i)` someone else ("she",
    "my sister", "Emma has"), None when the clause names none."""
    owns = SPEAKER_OWNS if role == "user" else frozenset({"your", "you", "you're", "you've"})
    acted_on = _before_agent(left)
    if acted_on is not left and not acted_on and role == "user":
        return True, 0  # "they're bumping it to $1,975": the speaker's, set by another
    left = acted_on
    for index in range(len(left) - 1, -1, -1):
        speaker = _whose(left, index, owns, role)
        if speaker is not None:
            return speaker, index
    if first_clause and left:
        opening = left[0].casefold()
        if opening in _ELIDED or (opening.endswith("ed") and len(opening) > 4):
            return True, -1
    return None


def _before_agent(left: list[str]) -> list[str]:
    """What is said before a third person who sets a thing to the value ("they're bumping it
    to $1,975", "he finally moved them to Friday"): the value is the thing's, and the thing's
    holder, if named, is named before the one acting on it."""
    folded = [t.casefold().replace("’", "'") for t in left]
    if len(folded) < 4 or folded[-1] != "to" or folded[-2] not in {"it", "them"}:
        return left
    at = len(folded) - 4  # the word before the verb
    while at >= 0 and (folded[at].endswith("ly") or folded[at] in _AUXILIARIES):
        at -= 1
    return left[:at] if at >= 0 and folded[at] in THIRD_PERSONS else left


def _whose(left: list[str], index: int, owns: frozenset[str], role: str) -> bool | None:
    """Whether `left[index]` is the speaker as a subject (True), someone else (False), or no
    subject (None)."""
    folded = left[index].casefold().replace("’", "'")
    after = left[index + 1].casefold() if index + 1 < len(left) else ""
    if folded in owns:
        if index > 0 and left[index - 1].casefold() in _PLACE_PREPOSITIONS:
            return None  # "the gym near my office": the object of "near", not the subject
        return not _person(after)
    if _person(folded) and (index == 0 or (index == 1 and left[0].casefold() in _ARTICLES)):
        return False  # a person opening the clause: "a friend of mine pays $2,300"
    if folded == "her" and (not after or after in FUNCTION_WORDS):
        return None  # an object ("I've had her for 9 months"), not whose: "her base"
    if folded in OTHERS or (role != "user" and folded in SPEAKER | SPEAKER_OWNS):
        return False
    if folded.endswith("'s") and index > 0 and left[index - 1].casefold() in owns:
        return False  # "my sister's": another's
    if folded.endswith("'s") and left[index][0].isupper() and folded[:-2] not in _CONTRACTED:
        return False  # "Yusuf's defense is June 11": a name's; not "It's", "That's"
    if folded in SPEAKER and role == "user":
        return True
    if (
        left[index][0].isupper()
        and index > 0
        and after in _SUBJECT_VERBS
        and left[index - 1].casefold() not in owns  # "my Instagram is at 1300": mine
    ):
        return False  # a name as the subject: "Emma has tried 3"
    return None


_THINGS = frozenset({"it's", "its"})
# A question's verb before its subject: "does Moose", "is Yumi".
_ASKING = frozenset({"does", "did", "is", "was", "has", "will", "can", "should", "would"})


def names_another(text: str) -> bool:
    """Whether `text` (a question) is about a person other than the speaker: a third person's
    pronoun, one of the speaker's people ("my sister"), a name's possessive ("Yumi's"), a name
    as the question's subject ("how much does Moose weigh")."""
    tokens = TOKEN.findall(text)
    for index, token in enumerate(tokens):
        folded = token.casefold().replace("’", "'")
        if folded in THIRD_PERSONS or (index > 0 and token[0].isupper() and folded.endswith("'s")):
            return True
        if index > 0 and token[0].isupper() and tokens[index - 1].casefold() in _ASKING:
            return True  # "how much does Moose weigh now?": Moose is asked of
        if index > 0 and tokens[index - 1].casefold() in SPEAKER_OWNS and _person(folded):
            return True
    return False


def another_holder(sentence: str, value: str, role: str) -> str | None:
    """Who else holds `value`, said in `sentence` by `role`, by the subject of its clause: the
    word naming them ("her" in "my sister just got a raise, her base is $190,000", "sister" in
    "my sister has 3 cats"), or None when it is the speaker's or the clause names no one: the
    same reading that keeps another's value out of the speaker's statements (`triples`)."""
    for position, clause in enumerate(clauses(sentence)):
        at = clause.find(value)
        if at >= 0:
            left = TOKEN.findall(clause[:at])
            held = nearest_subject(left, position == 0 and role == "user", role)
            if held is None or held[0]:
                return None
            word = left[held[1]].casefold().replace("’", "'")
            if word in SPEAKER_OWNS and held[1] + 1 < len(left):
                word = left[held[1] + 1].casefold()  # "my sister": the sister
            return None if word in _THINGS else word  # "it's three cats now": no one else's
    return None


def speaker_holds(sentence: str, at: int, role: str) -> bool:
    """Whether the value at `at` in `sentence`, said by `role`, is the speaker's by the subject
    of its clause ("I see Dr. Okafor now"), of the clause before when its own names none ("I
    sold it, got $38,500"), or elided at the sentence's opening ("Upgraded to Premium")."""
    for read in read_clauses(sentence, role):
        if read.start <= at < read.start + len(read.text):
            left = TOKEN.findall(read.text[: at - read.start])
            held = nearest_subject(left, read.position == 0 and role == "user", role)
            if held is None:
                return read.carried and not has_subject(left)
            return held[0]
    return False


@dataclass(frozen=True, slots=True)
class _Read:
    """A clause as the sentence reads it: where it stands, and whether the speaker was the
    subject of the clause before ("I bought it, paid $X": the payment is the speaker's too)."""

    position: int
    text: str
    start: int
    carried: bool


def read_clauses(sentence: str, role: str) -> Iterator[_Read]:
    carried = False
    said = 0  # where the clause starts in the sentence
    for position, clause in enumerate(clauses(sentence)):
        said = max(sentence.find(clause, said), said)
        yield _Read(position, clause, said, carried)
        opening = TOKEN.findall(clause)
        if not _appositive(opening):  # "our team, the Net Ninjas, is 5-2": still the team
            speaks = nearest_subject(opening, position == 0 and role == "user", role)
            carried = (speaks is not None and speaks[0]) or (carried and not has_subject(opening))


def has_subject(tokens: list[str]) -> bool:
    """Whether a clause names a subject of its own (a pronoun, a possessive, a name)."""
    return any(
        t.casefold() in SPEAKER | SPEAKER_OWNS | OTHERS or (i > 0 and t[0].isupper())
        for i, t in enumerate(tokens)
    )


def _appositive(tokens: list[str]) -> bool:
    """A clause that is only a name ("the Net Ninjas") renames the subject before it."""
    named = tokens[1:] if tokens and tokens[0].casefold() == "the" else tokens
    return bool(named) and all(t[0].isupper() for t in named)
