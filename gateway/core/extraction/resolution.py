"""Which claim a statement is a value of: the known claim of the same subject and dimension
whose attribute phrase is most alike, or a new one.

A claim key spells its attribute (`user.weight_weigh`, `user.salary`, `count_video`), so a
known claim's attribute is read back from its key, and its dimension from its value. Two
statements are of one claim when they share subject and dimension and:

- their attribute phrases are alike: the share of the shorter phrase's stems the other has
  (lexical), or, when the gateway has an embedder, the cosine of the two phrases (semantic,
  `PhraseSimilarity`), at least `ALIKE`;
- or one of them names no attribute of its own ("I'm down to 172 pounds now"), and the
  dimension is specific (a unit, a noun counted): a weight is the user's weight;
- or, for money, whose dimension says little, the newer states a change ("new", "now", "down
  to", "raised", ...) and the amount is within `AMOUNT_FACTOR` of the known one.

Two statements whose phrases both name something and share nothing are kept apart: "3
engineers on the platform team" and "2 engineers on the data team" are two claims, and so are
"2 cups of flour" and "3 cups of sugar". That is the trap rule, by structure.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from gateway.core.extraction.content_words import stem
from gateway.core.extraction.triples import DATE_WORD, Triple
from gateway.core.extraction.typed_values import dimension_of, partitive
from gateway.core.known_claims import AMOUNT_FACTOR, Known, money

__all__ = ["ALIKE", "CHANGE", "ClaimRegistry", "PhraseSimilarity", "key_for", "lexical"]

PhraseSimilarity = Callable[[str, str], float]
# Attribute phrases at least this alike name one attribute. Half the shorter phrase: "tried
# making it at home" and "making it at home" meet, "completed videos" and "watched videos" do
# not on their words alone (they meet by their dimension when one names nothing else).
ALIKE = 0.5
CHANGE = re.compile(
    r"\b(?:new|now|anymore|instead|these days|currently|down to|up to|went (?:up|down)|"
    r"promoted|latest|most recent|recently|just|cut|cutting|"
    # said as done or as under way: "raised", "they're raising it to"
    r"(?:rais|increas|decreas|chang|updat|reduc|lower|bump|switch|drop)(?:ed|ing|ped|ping)|"
    r"moved)\b",
    re.IGNORECASE,
)
_GENERIC = frozenset({"money", "day", "clock", "state"})
# Dimensions a speaker has one value of whatever the verb: a weight, a height, a record.
_PERSONAL = frozenset({"weight", "length", "record"})


def lexical(a: tuple[str, ...], b: tuple[str, ...]) -> float:
    """The share of the shorter phrase's stems the other has (0 when either is empty)."""
    left, right = set(a), set(b)
    if not left or not right:
        return 0.0
    return len(left & right) / min(len(left), len(right))


def _slug(words: Iterable[str]) -> str:
    return "_".join(re.sub(r"[^a-z0-9]+", "", w) for w in words if re.sub(r"[^a-z0-9]", "", w))


def key_for(triple: Triple) -> str:
    """A new claim's key: its subject, its dimension with its attribute's last words (money:
    its attribute's words alone), and `_in_` what narrows it."""
    words = _slug(triple.words[-2:])
    dimension = triple.value.dimension
    if dimension == "money":
        name = words or "amount"
    elif dimension == "state":
        name = "state"
    else:
        name = f"{dimension}_{words}" if words else dimension
    if triple.narrower:
        name += "_in_" + _slug(triple.narrower[:2])
    return f"{triple.subject}.{name}"[:64].rstrip("_.")


@dataclass(frozen=True, slots=True)
class _Held:
    key: str
    subject: str
    dimension: str | None
    words: tuple[str, ...]
    narrower: tuple[str, ...]
    size: float | None
    partitive: bool


def _held(key: str, value: str) -> _Held:
    subject, _, rest = key.partition(".")
    subject = "user" if subject == "count" else subject  # the table's counts are the user's
    # A count said without its noun ("two of them") is of the noun its key names.
    named = re.match(r"count_[a-z0-9]+", rest)
    dimension = dimension_of(value) or (named.group(0) if named else None)
    drop = set((dimension or "").split("_")) | {"count", "amount", "state"}
    soft, _, narrow = rest.partition("_in_")
    words = tuple(stem(w) for w in soft.split("_") if w and w not in drop)
    narrower = tuple(w for w in narrow.split("_") if w)
    return _Held(key, subject, dimension, words, narrower, money(value), partitive(value))


def _same(a: str, b: str) -> bool:
    def folded(text: str) -> str:
        return re.sub(r"(?<=\w)s\b", "", text.casefold().strip(" .!'\""))

    return folded(a) == folded(b)


def _apart(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """Both narrowed, to different things ("on the platform team", "on the data team"): two
    claims. One narrowed to part of the other ("on the team") is not apart from it."""
    left, right = set(a), set(b)
    return bool(left) and bool(right) and not left <= right and not right <= left


class ClaimRegistry:
    """The claims known so far (a compile's starting claims, then each fact found), newest
    last, and the claim a new statement is a value of."""

    def __init__(self, known: Iterable[Known] = (), similar: PhraseSimilarity | None = None):
        self._held: dict[str, _Held] = {}
        self._values: dict[str, str] = {}
        self._similar = similar
        for claim in known:
            self.add(claim.claim_key, claim.value)

    def __contains__(self, key: object) -> bool:
        return key in self._held

    def count_named(self, stems: set[str]) -> str | None:
        """The newest known count of the user's whose noun is among `stems` (a sentence's)."""
        for held in reversed(self._held.values()):
            noun = (held.dimension or "").removeprefix("count_")
            if held.subject == "user" and held.dimension != noun and noun in stems:
                return held.key
        return None

    def spelled(self, key: str, value: str) -> str:
        """`value` as the known claim `key` spells it when it is the same value ("Friday" for
        "Fridays", "Pixel" for "pixel"): a restatement is no change, and retires nothing."""
        held = self._values.get(key)
        if held is not None and _same(held, value):
            return held
        return value

    def add(self, key: str, value: str) -> None:
        self._held.pop(key, None)
        self._held[key] = _held(key, value)
        self._values.pop(key, None)
        self._values[key] = value

    def live(self) -> Mapping[str, str]:
        """The known claims' values by key, newest last."""
        return MappingProxyType(self._values)

    def _alike(self, a: tuple[str, ...], b: tuple[str, ...]) -> float:
        score = lexical(a, b)
        if self._similar is not None and a and b and score < ALIKE:
            score = max(score, self._similar(" ".join(a), " ".join(b)))
        return score

    def resolve(self, triple: Triple, sentence: str) -> str | None:
        """The key of the claim `triple` states a value of: a known one (above), or a new one;
        None for an amount of money whose phrase names nothing ("I'm paying $1,975") and that
        no known claim takes: a wrong claim retires a value that still holds."""
        dimension = triple.value.dimension
        same = [
            h
            for h in reversed(self._held.values())
            if h.subject == triple.subject
            and h.dimension == dimension
            and not _apart(triple.narrower, h.narrower)
        ]
        best: tuple[float, _Held] | None = None
        for held in same:
            score = self._alike(triple.words + triple.narrower, held.words + held.narrower)
            if score >= ALIKE and (best is None or score > best[0]):
                best = (score, held)
        if best is not None:
            return best[1].key
        for held in same if dimension not in _GENERIC else ():
            # A noun's count, a weight, a height, a record of the speaker's: the verbs around
            # it vary ("weigh", "down to"; "completed", "watched"), the dimension does not.
            # Of other units ("times", "miles") only when one phrase names nothing else. Not
            # a count of part of a set: "walked 2 of my dogs" says nothing of how many I have.
            if triple.value.partitive or held.partitive:
                continue
            if (
                dimension.startswith("count_")
                or dimension in _PERSONAL
                or not triple.words
                or not held.words
                or lexical(triple.words, held.words) > 0
            ):
                return held.key
        if (
            dimension == "money"
            # "$1,975 a month for the new studio": the studio's; "starting March 1st" only
            # says from when.
            and not [w for w in triple.narrower if not DATE_WORD.fullmatch(w)]
            and CHANGE.search(sentence)
            and triple.value.size
        ):
            near = [
                (abs(math.log(triple.value.size / h.size)), h)
                for h in same
                if h.size and abs(math.log(triple.value.size / h.size)) <= math.log(AMOUNT_FACTOR)
            ]
            if near:
                return min(near, key=lambda pair: pair[0])[1].key
        if dimension == "money" and triple.verbal:
            return None
        return key_for(triple)
