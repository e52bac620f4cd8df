"""Names as values: what kind of value a name is, and the claim a name's change is of when the
sentence does not say ("Upgraded to Premium yesterday" after "I'm on the Basic plan").

A number carries its dimension (`typed_values`: "172 pounds" is a weight however it is said); a
name does not: "Premium", "Denver" and "Dr. Okafor" say nothing by their letters of what they
are values of, and people rarely repeat the attribute when they change one ("Switched dentists,
I see Dr. Okafor now", "We just moved to Denver", "I'm pescatarian now"). So the claim is read
from what does not depend on the phrasing:

- the value's kind, from a closed class (plan tiers, diets), a shape (a title before a
  surname), or the place verb it follows ("moved to", "live in"); a known claim's kind from its
  value the same way, or from its attribute (a location holds places);
- the speaker's known claims of that kind: the one whose attribute the turn names
  ("dentists"), else the only one of a kind that names its attribute (a tier, a diet, a
  place). A person, titled or not, changes only the role the turn names ("Switched dentists, I
  see Dr. Okafor now", "a new manager, Marcus"): people hold many roles ("my thesis advisor,
  Dr. Smith" is no new partner);
- a change stated (`REPLACED`): a name of a known kind said in passing ("the Premium tier has
  4K") changes nothing, and neither does anyone else's ("my sister moved to Denver": the
  subject decides, `holders.speaker_holds`) nor a hedge ("thinking of upgrading to Premium").

A closed class whose kind names its attribute also gives the claim itself: "I'm vegetarian" is
the user's diet, said any way a speaker says what they are.

Why this should hold on text not read here: nothing matches a phrasing. The classes are of the
values (the diets and plan tiers there are), the kinds agree or not whatever the verb, and the
traps are kept apart by the structure the typed values use (subject, hedge, one value of the
kind per sentence).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from gateway.core.extraction.content_words import stem
from gateway.core.extraction.holders import speaker_holds
from gateway.core.extraction.judgement import HEDGE
from gateway.core.extraction.vocabulary import DAY, ROLE_HEADS

__all__ = ["REPLACED", "NamedClaim", "named_change", "named_claims"]

# A sentence that says a name replaced another: not the words of a level or an amount moving
# (`resolution.CHANGE`: "up to", "down to", "raised"), which "bring it up to the agency" says
# too, nor "just", "recently", which date and do not replace.
REPLACED = re.compile(
    r"\b(?:now|instead|anymore|new|switched|switching|changed|moved|relocated|upgraded|"
    r"downgraded|went with|going with|started|replaced|transferred)\b",
    re.IGNORECASE,
)
# What moves an event's day: "my defense got pushed to June 24", "they had to move Wren's
# tonsillectomy to July 11".
_MOVES = re.compile(
    r"\b(?:mov(?:e|es|ed|ing)|push(?:ed|es|ing)?|reschedul(?:e|ed|es|ing)|"
    r"postpon(?:e|ed|es|ing)|delay(?:ed|s|ing)?|extend(?:ed|s|ing)?|bump(?:ed|s|ing)?|"
    r"chang(?:e|ed|es|ing))\b[^,;]*?\bto $",
    re.IGNORECASE,
)
# Plan tiers, as products name them (capitalized: "premium coffee" is no plan).
_TIERS = frozenset(
    {
        *("Free", "Basic", "Starter", "Standard", "Plus", "Pro", "Premium", "Business"),
        *("Enterprise", "Family", "Ultimate", "Essentials", "Deluxe", "Unlimited", "Gold"),
        *("Silver", "Platinum", "Bronze"),
    }
)
_DIETS = (
    r"vegetarian|vegan|pescatarian|pescetarian|keto|paleo|omnivore|flexitarian|carnivore|"
    r"plant-based|gluten-free|dairy-free|lacto-vegetarian|ovo-vegetarian"
)
_DIET = re.compile(r"\b(?:" + _DIETS + r")\b", re.IGNORECASE)
# "I'm vegetarian", "I've gone vegan", "I'm mostly plant-based now": a diet the speaker keeps.
_KEEPS_DIET = re.compile(
    r"\b(?:i'm|i am|i've been|i have been|i've gone|i went|i became|i eat|i'm eating|we're|"
    r"we are|we've gone|we went)(?: (?:now|mostly|fully|strictly|basically|officially|a|an|"
    r"going|back|to being|also))* (?P<value>" + _DIETS + r")\b",
    re.IGNORECASE,
)
_TITLED = re.compile(r"\b(?-i:(?:Dr|Mr|Mrs|Ms|Mx|Prof)\.? [A-Z][\w'-]+(?: [A-Z][\w'-]+)?)")
_PLACE = re.compile(
    r"\b(?:moved|relocated|live|living|based|settled)(?: back)? (?:to|in) (?:the )?"
    r"(?P<value>(?-i:[A-Z][\w'-]+(?: [A-Z][\w'-]+){0,2}))"
)
_NAME = re.compile(r"(?<![\w'’-])(?-i:[A-Z][a-z][\w'’&-]*(?: [A-Z][a-z][\w'’&-]*){0,2})")
_DAY = re.compile(r"^(?:" + DAY + r")$", re.IGNORECASE)
_DATE = re.compile(r"\b(?:" + DAY + r")", re.IGNORECASE)
_CLAUSE_END = re.compile(r"[,;:—–]|\s-\s|\b(?:so|and|but|because)\b", re.IGNORECASE)
_TIER = re.compile(r"\b(?-i:(?:" + "|".join(sorted(_TIERS)) + r")(?: [A-Z][\w-]*)?)\b")
# A known claim whose attribute holds places.
_PLACE_ATTRIBUTES = frozenset({"location", "city", "hometown", "home", "residence"})
_WORDS = re.compile(r"[A-Za-z][\w'-]*")
_ABOUT_SPEAKER = re.compile(r"\b(?:my|me|i|i'm|i've|we|our|us)\b", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class NamedClaim:
    """A claim a name states: its key and the name."""

    claim_key: str
    value: str


@dataclass(frozen=True, slots=True)
class _Name:
    start: int
    text: str
    kind: str
    # Whether its kind names its attribute (a tier is a plan's, a diet the speaker's diet); a
    # person is of many roles, and changes a claim only where the turn names the role.
    specific: bool = True


def _head(key: str) -> str:
    """A claim key's attribute head noun: `user.primary_care_doctor` → "doctor"."""
    return key.rpartition(".")[2].rpartition("_")[2]


def _known_kind(key: str, value: str) -> str:
    """The kind of a known claim: by its attribute (a location holds places, a dentist is a
    person), or by its value as spelled alone (a diet, a title before a name, a tier)."""
    value = value.strip()
    if key.rpartition(".")[2] in _PLACE_ATTRIBUTES:
        return "place"
    if _head(key) in ROLE_HEADS or _TITLED.fullmatch(value):
        return "person"
    if _DIET.fullmatch(value):
        return "diet"
    if _DAY.match(value):
        return "day"
    return "tier" if value.split()[:1] and value.split()[0] in _TIERS else ""


def _names(sentence: str) -> list[_Name]:
    """The names a sentence states, each with its kind, by the most specific reading."""
    found: list[_Name] = []
    taken: list[range] = []

    def add(name: _Name) -> None:
        if not any(name.start in span for span in taken):
            found.append(name)
            taken.append(range(name.start, name.start + len(name.text)))

    for match in _PLACE.finditer(sentence):
        add(_Name(match.start("value"), match.group("value"), "place"))
    for match in _TITLED.finditer(sentence):
        add(_Name(match.start(), match.group(0), "person", specific=False))
    for match in _TIER.finditer(sentence):
        add(_Name(match.start(), match.group(0), "tier"))
    for match in _DIET.finditer(sentence):
        add(_Name(match.start(), match.group(0), "diet"))
    for match in _DATE.finditer(sentence):
        add(_Name(match.start(), match.group(0), "day", specific=False))
    for match in _NAME.finditer(sentence):
        if match.start() > 0 and not _DAY.match(match.group(0)):
            add(_Name(match.start(), match.group(0), "person", specific=False))
    return sorted(found, key=lambda name: name.start)


def _stated(sentence: str, name: _Name, role: str) -> bool:
    """The speaker's, and not hedged in what is said up to it: held by the speaker's clause
    ("I see Dr. Okafor now"), or a person opening a sentence about the speaker ("Dr. Lindqvist
    did my crown prep")."""
    if HEDGE.search(sentence, 0, name.start):
        return False
    if name.kind == "day":
        return True  # an event's day is the event's, whoever moves it ("they moved it to ...")
    if name.start == 0 and name.kind == "person":
        return _ABOUT_SPEAKER.search(sentence) is not None
    return speaker_holds(sentence, name.start, role)


def named_change(
    sentence: str, role: str, known: Mapping[str, str], before: str = ""
) -> NamedClaim | None:
    """The known claim (`known`: key to live value, newest last) a user's `sentence` states a
    new name for, or None: one name of a kind a known claim of the speaker's holds, differing
    from its value, in a sentence that states a change, or after one that does (`before`: the
    sentence before it in the turn, "... so I switched."); or an event's day its clause moves."""
    if role != "user":
        return None
    changed = REPLACED.search(f"{before} {sentence}") is not None
    stems = {stem(w.casefold()) for w in _WORDS.findall(f"{before} {sentence}")}
    values = {v.casefold() for v in known.values()}
    changes: list[NamedClaim] = []
    for name in _names(sentence):
        if not changed and name.kind != "day":
            continue  # a day is moved by a verb of its own clause; any other name needs a change
        if name.text.casefold() in values or not _stated(sentence, name, role):
            continue  # the value it had ("from Basic to Premium"), or not the speaker's
        if name.kind == "day":
            changes.extend(_moved(sentence, name, known))
            continue
        kinds = [
            key
            for key, value in known.items()
            if key.partition(".")[0] in {"user", "account"} and _known_kind(key, value) == name.kind
        ]
        named = [key for key in kinds if stem(_head(key)) in stems]
        if named:
            changes.append(NamedClaim(named[-1], name.text))
        elif name.specific and len(kinds) == 1:
            changes.append(NamedClaim(kinds[0], name.text))
    # Two new names in one sentence ("Premium or Pro"): which one holds is not stated.
    return changes[0] if len({c.value.casefold() for c in changes}) == 1 else None


def _moved(sentence: str, day: _Name, known: Mapping[str, str]) -> list[NamedClaim]:
    """An event's new day: the clause holding it moves something to it and names, before it,
    the event a known claim of a day is of ("my defense got pushed to June 24")."""
    start = max((m.end() for m in _CLAUSE_END.finditer(sentence, 0, day.start)), default=0)
    before = sentence[start : day.start]
    if not _MOVES.search(before):
        return []
    stems = {stem(w.casefold()) for w in _WORDS.findall(before)}
    events = [
        key
        for key, value in known.items()
        if _known_kind(key, value) == "day" and stem(_head(key)) in stems
    ]
    return [NamedClaim(events[-1], day.text)] if events else []


def named_claims(sentence: str, role: str) -> Iterable[NamedClaim]:
    """Claims a name's kind names by itself: the diet a speaker says they keep."""
    if role != "user":
        return
    for match in _KEEPS_DIET.finditer(sentence):
        if not HEDGE.search(sentence, 0, match.start("value")):
            yield NamedClaim("user.diet", match.group("value").casefold())
