"""The `rules` extractor of 2026-12-05.1: the attribute table of 2026-12-03.1, then statements
split into subject, attribute phrase and typed value (`triples`), each resolved to the claim it
states a value of by similarity (`resolution`), and self-introductions (`introductions`).

Per sentence that states something (`statements`, `judgement`):

1. the table's facts (`matching.facts_of`), each re-keyed to a known claim when its value has a
   dimension, its key is new and a known claim of that dimension is alike (the table spells
   "salary" and "base" as two keys; a raise states one);
2. a fact for each statement the table did not state: its value's dimension, its subject (the
   speaker, or a named thing's state) and its attribute phrase give its claim;
3. a bare level ("we're at 5 now") of a count the sentence names ("two more engineers joined");
4. identity from a self-introduction.

Version 2026-12-06.1 (`readings.SECOND_READING`) reads introductions by their cues (`introducing`), and
keys the speaker's plan, tier or subscription named by a name
("our plan is Business") `account.plan`, as an introduction keys it ("we're on the Business
plan"): one claim, so the newer supersedes the older. A plan that is an intention ("our plan
is to migrate") keeps its own key.

A clause that hedges, or states a goal, states no value: "I want to get down to 170 pounds" is
not a weight.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Sequence

from gateway.core.extraction.content_words import FUNCTION_WORDS, stem
from gateway.core.extraction.facts import Episode, Fact, build_fact
from gateway.core.extraction.holders import THIRD_PERSONS, another_holder
from gateway.core.extraction.judgement import HEDGE, SUBORDINATE, judged
from gateway.core.extraction.matching import facts_of
from gateway.core.extraction.named_values import named_change, named_claims
from gateway.core.extraction.readings import FIRST_READING, Reading
from gateway.core.extraction.resolution import ClaimRegistry, PhraseSimilarity
from gateway.core.extraction.statements import statements
from gateway.core.extraction.triples import Triple, triples
from gateway.core.extraction.typed_values import TypedValue, dimension_of, says_nothing
from gateway.core.extraction.vocabulary import CHANGE_VERBS
from gateway.core.known_claims import Known, KnownClaims
from gateway.core.supersession import CLAIM_KEY

__all__ = ["MAX_SENTENCE", "extract", "states_value"]

_GOAL = re.compile(
    r"\b(?:goal|target|aim|aiming|hope|hoping|wish|dream|ideal|ideally|trying to|try to|"
    r"need to|want|wants|plan to|planning to|going to|gonna|if|would|could|should|might|"
    r"maybe|recommend|suggest|average|typically|usually|each|per|every|thinking of|"
    r"meaning to|planning|love to|like to|tend to|tends to|i'd|we'd|tell me|give me|show me)\b",
    re.IGNORECASE,
)
_BARE = re.compile(
    r"\b(?:we're|we are|i'm|i am|it's|we've got|now) (?:at|up to|down to|to) "
    r"(?P<n>\d{1,6})(?![\w%$-]|[.,]\d)(?: (?P<after>[a-z]+))?",
    re.IGNORECASE,
)
_WORDS = re.compile(r"[A-Za-z][\w'-]*")
# The speaker's plan by a name (one or two capitalized words, as `introductions` reads one).
_ACCOUNT_PLAN_KEYS = frozenset({"user.plan", "user.tier", "user.subscription"})
_PLAN_NAME = re.compile(r"[A-Z][\w+-]*(?: [A-Z][\w+-]*)?$")
_LOWERCASE_WORD = re.compile(r"(?:^|\s)[a-z]")
# A sentence longer than this is pasted text (an essay, a table, code): people state a fact of
# their own in far fewer characters (the longest evidence sentence of fold A has 250).
MAX_SENTENCE = 1000


def _content_of(sentence: str, triple: Triple | None) -> str:
    """What a fact says: its own clause (a fact never restates its neighbours' values, which
    may be superseded), or the sentence for a fact of no one clause, cut at 240 characters."""
    text = triple.clause if triple is not None else sentence
    text = text[0].upper() + text[1:] if text else text
    return text if len(text) <= 240 else text[:239] + "…"


def states_value(triple: Triple) -> bool:
    """Whether a statement states its value: no hedge, no goal, no request in its clause up to
    the end of the part holding the value ("I weigh 185 pounds and I'd like to start lifting"
    states the weight; "I'd like to weigh 170 pounds" does not)."""
    cut = SUBORDINATE.search(triple.clause, triple.value.end)
    said = triple.clause[: cut.start()] if cut else triple.clause
    return HEDGE.search(said) is None and _GOAL.search(said) is None


class _Extraction:
    """One compile's claims so far: the table's (`KnownClaims`) and the statements' registry."""

    def __init__(
        self, known: Iterable[Known], similar: PhraseSimilarity | None, reading: Reading
    ) -> None:
        known = list(known)
        self.claims = KnownClaims(known)
        self.registry = ClaimRegistry(known, similar)
        self.reading = reading

    def add(self, fact: Fact) -> None:
        if fact.claim_key is not None and fact.value:
            self.claims.add(fact.claim_key, fact.value)
            self.registry.add(fact.claim_key, fact.value)

    def rekeyed(self, fact: Fact, triple: Triple | None, sentence: str) -> Fact:
        """A table fact whose key is new, re-keyed to the known claim its value is of: the
        claim the same value's statement resolves to, or, without one, its key's words less
        its value's own ("count.pound" of "172 pounds" names no attribute but the unit)."""
        if fact.claim_key is None or not fact.value or fact.claim_key in self.registry:
            return fact
        if triple is None:
            dimension = dimension_of(fact.value)
            if dimension is None or dimension in {"day", "clock", "state"}:
                return fact
            subject, _, rest = fact.claim_key.partition(".")
            own = {stem(w) for w in _WORDS.findall(fact.value)}
            words = tuple(w for w in (stem(w) for w in rest.split("_") if w) if w not in own)
            value = TypedValue(0, len(fact.value), fact.value, dimension, _size(fact.value))
            triple = Triple("user" if subject == "count" else subject, words, value, sentence)
        key = self.registry.resolve(triple, sentence)
        if key is None:
            return fact
        narrowed = triple.narrower and triple.value.dimension != "money"
        # A thing's state the table gave the user ("the gym near my office is closed": its
        # pattern reads "my office is ..."): the structure says whose it is.
        things = triple.value.dimension == "state" and triple.subject != "user" and _users(fact)
        if key in self.registry or things or (narrowed and CLAIM_KEY.match(key)):
            # A known claim, or what narrows it, which the table's key does not say.
            return dataclasses.replace(fact, claim_key=key)
        return fact

    def sentence_facts(
        self,
        sentence: str,
        stated: str,
        episode: Episode,
        confirmed: bool,
        before: str = "",
        speakers: str | None = None,
    ) -> list[Fact]:
        """The facts of one sentence of `episode` (`stated`: the part that states something),
        `before` being the sentence of the turn before it (a change announced there: "I
        switched. Dr. Lindqvist did my crown prep"); introductions read from `speakers`, the
        part that is the speaker's own words, when the reading tells it apart."""
        stating = [t for t in triples(stated, episode.role) if states_value(t)]
        found: list[Fact] = []
        values: list[str] = []
        for fact in facts_of(sentence, stated, episode, confirmed, self.claims):
            value = (fact.value or "").casefold()
            if says_nothing(value) or _anothers(fact, stated, episode.role):
                continue  # "still", "few", "both": no value, and it would retire every turn
            same = next((t for t in stating if _overlap(t.value.text.casefold(), value)), None)
            found.append(self.rekeyed(fact, same, stated))
            if value:
                values.append(value)
        stated_by_table = list(values)
        for triple in stating:
            text = triple.value.text.casefold()
            clause = triple.clause.casefold()
            if any(_overlap(text, v) or v in clause for v in stated_by_table):
                continue  # the table stated it, or another value of its clause: one a clause
            key = self.registry.resolve(triple, stated)
            if key is None or not CLAIM_KEY.match(key):
                continue
            kind = "state" if triple.value.dimension == "state" else "quantity"
            fact = build_fact(
                kind, "semantic", key, _content_of(stated, triple), episode, confirmed
            )
            found.append(dataclasses.replace(fact, value=triple.value.text))
            values.append(text)
        found.extend(self._bare_levels(stated, episode, confirmed, values))
        found.extend(self._named(stated, before, episode, found, values))
        if any(f.claim_key for f in found):
            # The table's fallback for a sentence it had no claim for ("... now": a state
            # change without a key) restates what a claim now says, values and all.
            found = [f for f in found if f.claim_key or not f.heading.startswith("state: ")]
        if episode.role == "user":
            own = stated if speakers is None else speakers
            found.extend(self.introduced(own, before, episode, found, values))
        return found

    def _named(
        self, stated: str, before: str, episode: Episode, found: list[Fact], values: list[str]
    ) -> Iterable[Fact]:
        """Names as values (`named_values`): a diet the speaker keeps, and a name's change whose
        sentence does not say of what ("Upgraded to Premium"), for claims the sentence has no
        fact of."""
        taken = {f.claim_key for f in found}
        change = named_change(stated, episode.role, self.registry.live(), before)
        for claim in [*named_claims(stated, episode.role), *([change] if change else [])]:
            if claim.claim_key in taken or any(_overlap(claim.value.casefold(), v) for v in values):
                continue
            taken.add(claim.claim_key)
            fact = build_fact(
                "identity", "semantic", claim.claim_key, _content_of(stated, None), episode, False
            )
            yield dataclasses.replace(fact, value=claim.value)

    def introduced(
        self,
        stated: str,
        before: str,
        episode: Episode,
        found: list[Fact],
        values: list[str],
        asking: bool = False,
    ) -> Iterable[Fact]:
        """Identity from a self-introduction (in a sentence that asks, with `asking`), for the
        claims the sentence has no fact of."""
        taken = {f.claim_key for f in found}
        for key, value in self.reading.introduce(stated, before, asking).items():
            if key not in taken and value.casefold() not in values:
                content = (
                    _claim_clause(stated, value)
                    if self.reading.clause_content
                    else _content_of(stated, None)
                )
                fact = build_fact("identity", "semantic", key, content, episode, False)
                yield dataclasses.replace(fact, value=value)

    def _bare_levels(
        self, stated: str, episode: Episode, confirmed: bool, values: list[str]
    ) -> Iterable[Fact]:
        """ "Two more engineers joined the platform team, we're at 5 now": a level without its
        noun, of the known count the sentence names."""
        if episode.role != "user":
            return
        stems = {stem(w) for w in _WORDS.findall(stated)}
        for match in _BARE.finditer(stated):
            after = (match.group("after") or "").casefold()
            if any(match.group("n") in v for v in values) or after not in FUNCTION_WORDS | {""}:
                continue
            key = self.registry.count_named(stems)
            if key is None:
                continue
            noun = key.rpartition(".")[2].removeprefix("count_").split("_")[0]
            value = f"{match.group('n')} {noun}s"
            fact = build_fact(
                "quantity", "semantic", key, _content_of(stated, None), episode, confirmed
            )
            yield dataclasses.replace(fact, value=value)


_CHANGE_VERB = re.compile(r"\b" + CHANGE_VERBS + r"\b", re.IGNORECASE)


def _anothers(fact: Fact, sentence: str, role: str) -> bool:
    """Whether a table fact is someone else's, which the table (reading a phrase, not whose it
    is) cannot tell: a value of the user's claim held by a pronoun ("her base is $190,000";
    only a pronoun, and only of a claim the table gives the user: "my manager is Beatriz",
    "Lindenhof ... since they reopened" are the table's to key), or a change without a claim
    whose verb's subject is another ("my brother just moved to Raleigh": his move)."""
    if fact.value and _users(fact):
        return another_holder(sentence, fact.value, role) in THIRD_PERSONS
    if fact.claim_key is None:
        verb = _CHANGE_VERB.search(sentence)
        return verb is not None and another_holder(sentence, verb.group(0), role) is not None
    return False


def _users(fact: Fact) -> bool:
    """Whether the table keyed `fact` as the user's own (its counts are the user's)."""
    return (fact.claim_key or "").partition(".")[0] in {"user", "count"}


def _overlap(a: str, b: str) -> bool:
    return bool(a) and bool(b) and (a in b or b in a)


def _size(value: str) -> float | None:
    found = re.search(r"\d[\d,]*(?:\.\d+)?", value)
    return float(found.group(0).replace(",", "")) if found else None


def _from_episode(episode: Episode, extraction: _Extraction) -> Iterable[Fact]:
    seen: set[str | None] = set()
    before = ""
    said = list(statements(episode))
    reading = extraction.reading
    # The speaker's own words of each sentence (none quoted or forwarded), where the reading
    # tells them apart.
    own = reading.own_words([s for s, _ in said]) if reading.own_words else None
    for index, (sentence, confirmed) in enumerate(said):
        if len(sentence) > MAX_SENTENCE:
            continue  # pasted text, not a statement; and the table's patterns backtrack on it
        stated, before_this, before = judged(sentence), before, sentence
        asks = reading.introduced_in_questions and episode.role == "user"
        if stated is None and not asks:
            continue
        speaker = None if own is None or own[index] == sentence else own[index]
        facts = (
            extraction.introduced(
                sentence if speaker is None else speaker, before_this, episode, [], [], asking=True
            )
            if stated is None
            else extraction.sentence_facts(
                sentence,
                stated,
                episode,
                confirmed,
                before_this,
                None if speaker is None else (judged(speaker) or ""),
            )
        )
        for found in facts:
            fact = _account_plan(found) if extraction.reading.account_plan else found
            # One value per claim per turn: the first statement of it.
            if fact.claim_key is None or fact.claim_key not in seen:
                seen.add(fact.claim_key)
                if fact.claim_key is not None and fact.value:
                    spelled = extraction.registry.spelled(fact.claim_key, fact.value)
                    fact = dataclasses.replace(fact, value=spelled)
                extraction.add(fact)
                yield fact
    sign, signature = reading.sign, reading.signature
    if sign is not None and episode.role == "user" and said:
        sentences = own if own is not None else [s for s, _ in said]
        closing = sentences[-1]
        signs = signature(episode.text, sentences) if signature else {}
        for key, value in {**sign(closing, len(said) > 1), **signs}.items():
            if key not in seen:
                seen.add(key)
                fact = build_fact(
                    "identity", "semantic", key, _content_of(closing, None), episode, False
                )
                fact = dataclasses.replace(fact, value=value)
                extraction.add(fact)
                yield fact


# Where a clause opens: after a stop, a colon, a dash, or "and"/"but" between clauses.
_CLAUSE_OPENS = re.compile(r"[,;:.!?]\s+|\s+(?:and|but|so)\s+|\s[-–—]\s")


def _claim_clause(sentence: str, value: str) -> str:
    """The clause of `sentence` that states `value`, up to it (the sentence when it is not
    there as said)."""
    at = sentence.find(value)
    if at < 0:
        return _content_of(sentence, None)
    opens = [m.end() for m in _CLAUSE_OPENS.finditer(sentence, 0, at)]
    clause = sentence[max(opens, default=0) : at + len(value)].strip()
    return _content_of(clause, None)


def _account_plan(fact: Fact) -> Fact:
    """A fact of the speaker's plan named by a name, keyed as the account's plan; and an
    account's plan read with words around its name, its name alone."""
    key, value = fact.claim_key, fact.value or ""
    if key == "account.plan" and _LOWERCASE_WORD.search(value):
        # A plan's name is its capitalized words: "renewal of our Corporate" names Corporate.
        named = _PLAN_NAME.search(value)
        return dataclasses.replace(fact, value=named.group(0)) if named else fact
    if key not in _ACCOUNT_PLAN_KEYS or not _PLAN_NAME.fullmatch(value):
        return fact
    heading = f"account.plan{fact.heading.removeprefix(key)}"[:200]  # as `build_fact` heads it
    return dataclasses.replace(fact, claim_key="account.plan", heading=heading)


def extract(
    episodes: Sequence[Episode],
    known: Iterable[Known] = (),
    similar: PhraseSimilarity | None = None,
    reading: Reading = FIRST_READING,
) -> list[Fact]:
    """The facts of `episodes`, in episode order then sentence order, given the live claims
    `known` before them and, when the gateway has an embedder, a phrase similarity (`similar`)
    for attribute phrases that share no word, as `reading` reads them (the default: version
    2026-12-05.1's, which assemblies read turns by). Same input, same output."""
    extraction = _Extraction(known, similar, reading)
    return [fact for episode in episodes for fact in _from_episode(episode, extraction)]
