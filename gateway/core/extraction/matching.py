"""A sentence's facts: the tables tried in order, one fact per clause (the first pattern to match
in a clause wins it); a turn's facts, one value per claim; and `extract`."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Sequence

from gateway.core.extraction.attributes import ATTRIBUTES
from gateway.core.extraction.claim_keys import claim_key_of
from gateway.core.extraction.clauses import RELATIVE, clause_of, clause_span, value_of
from gateway.core.extraction.facts import Episode, Fact, build_fact
from gateway.core.extraction.judgement import HEDGE, SUBORDINATE, judged
from gateway.core.extraction.patterns import DECISIONS, PROCEDURES, Pattern
from gateway.core.extraction.statements import statements
from gateway.core.known_claims import Known, KnownClaims

__all__ = ["extract", "facts_of"]

_STATE_CHANGE = re.compile(
    r"\b(now|switched|moved|upgraded|downgraded|cancell?ed|sold|renewed|reinstated|resumed|"
    r"paused|turned (on|off)|enabled|disabled|reopened|retired)\b",
    re.IGNORECASE,
)


def _fact_of(
    pattern: Pattern,
    match: re.Match[str],
    stated: str,
    span: tuple[int, int],
    episode: Episode,
    confirmed: bool,
    claims: KnownClaims,
) -> Fact | None:
    groups = match.groupdict()
    claim_key = claim_key_of(pattern, groups, claims)
    if pattern.key and claim_key is None and not groups.get("previous"):
        return None  # an attribute pattern without a usable attribute
    raw = stated[match.end() :] if pattern.tail else groups.get("value") or groups.get("v2")
    value = " ".join(raw.split()) if pattern.typed and raw else value_of(raw)
    previous = groups.get("previous")
    said = clause_of(stated, *span)
    if previous:
        # A change is stated as what holds now ("to Y", "Y has overtaken the earlier one"): the
        # value it replaced is what it supersedes, not what it says.
        said = said.replace(f" from {previous} to ", " to ").replace(previous, "the earlier one")
    fact = build_fact(pattern.kind, pattern.memory_type, claim_key, said, episode, confirmed)
    return dataclasses.replace(fact, value=value, previous=value_of(previous))


def _gate_words(text: str) -> frozenset[str]:
    """The words patterns are gated on, and "#" when the text has a digit."""
    words = re.findall(r"[a-z]+", text.casefold())
    return frozenset([*words, "#"] if any(c.isdigit() for c in text) else words)


def facts_of(
    sentence: str, stated: str, episode: Episode, confirmed: bool, claims: KnownClaims
) -> list[Fact]:
    """The facts of one sentence (`stated` is the part of it that states something): every
    single-valued claim in it, one per clause (the first, most specific, pattern matching in a
    clause wins it), or failing that one fact without a claim key."""
    found: list[Fact] = []
    taken: list[tuple[int, int]] = []
    hedged = HEDGE.search(SUBORDINATE.split(stated, maxsplit=1)[0]) is not None
    present = _gate_words(stated)
    for pattern in (*PROCEDURES, *DECISIONS, *ATTRIBUTES):
        if (hedged and not pattern.intent) or (not pattern.key and found):
            continue
        if pattern.gate is not None and pattern.gate.isdisjoint(present):
            continue
        for match in pattern.regex.finditer(stated):
            span = clause_span(stated, match.start(), match.end())
            if any(span[0] < end and start < span[1] for start, end in taken) or (
                found and RELATIVE.match(stated, span[0])
            ):
                continue  # a clause is one fact; a relative clause qualifies, it states none
            fact = _fact_of(pattern, match, stated, span, episode, confirmed, claims)
            if fact is None:
                continue
            if not pattern.key:
                return [fact]
            found.append(fact)
            taken.append(span)
    if found or stated is not sentence or hedged:
        return found
    if _STATE_CHANGE.search(sentence) and re.match(r"^(i|we|my|our|your)\b", sentence, re.I):
        return [build_fact("state", "semantic", None, sentence, episode, confirmed)]
    return []


def _from_episode(episode: Episode, claims: KnownClaims) -> Iterable[Fact]:
    seen: set[str | None] = set()
    for sentence, confirmed in statements(episode):
        stated = judged(sentence)
        if stated is None:
            continue
        for fact in facts_of(sentence, stated, episode, confirmed, claims):
            # One value per claim per turn: the first statement of it (a turn restating a key
            # in a second sentence is elaborating, not changing it).
            if fact.claim_key is None or fact.claim_key not in seen:
                seen.add(fact.claim_key)
                if fact.claim_key is not None and fact.value:
                    claims.add(fact.claim_key, fact.value)
                yield fact


def extract(episodes: Sequence[Episode], known: Iterable[Known] = ()) -> list[Fact]:
    """The facts of `episodes`, in episode order then sentence order, given the live claims
    `known` before them (what an update that does not name its claim may refer to). Same
    input, same output."""
    claims = KnownClaims(known)
    return [fact for episode in episodes for fact in _from_episode(episode, claims)]
