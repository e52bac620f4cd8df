"""The `rules` extractor: episodes (turns) become typed facts, deterministically, without a model.

One clause gives at most one fact, and a fact states its own clause only ("Venue is $6,400,
catering budget is $9,000" is two facts, neither naming the other's value). What counts:

- the user's own statements: identity (name, employer, employment, role, team, location, plan),
  relations (roles such as manager or accountant, who owns a thing, where a named person lives,
  relationship states), preferences ("my favorite X is", "my go-to", "I always want", "X has
  overtaken Y as my favorite"), amounts, rates, days, times and versions of a named thing
  ("catering budget is $9,000", "750 requests per minute", "the wedding now on October 11",
  "staging is on Postgres 15"), counts ("I have two cats"), states ("auto-renew is turned on",
  "we took the house off the market"), places things are kept or moved to, intentions keyed by
  what they are for ("planning a trip to Japan for our anniversary", "going with ClickHouse for
  logs instead", "I'm going to learn Italian"), state changes ("switched to", "moved to",
  "dropped the price to"), procedures ("always / never …", "to deploy, run …", "from now on …")
  and decisions ("we decided", "going forward");
- a question's premise ("Now that I'm in Pittsburgh, any good climbing gyms?");
- values whose kind names their attribute (a phone by its brand, a school by its name's shape,
  a race by its kind, a programme, the team one plays for), a role by the cue only it has ("my
  first 1:1 with Marcus": a manager), a partner whatever the word for them (a shared
  anniversary names one, a breakup ends it), a named place's state ("since they reopened");
- an update that does not name what it changes, resolved against the known claims (the scope's
  live claims before the compile, then those found since): an amount with a cadence ("we're down
  to about $31,500 a month") and a race named alone ("running Berlin instead");
- a request to save a value, with the sentence that gives it ("Can you save my shipping
  address? 14 Elm Court, ...");
- the assistant's confirmations of an action ("Done. Your plan is now Premium.", "I've updated
  your doctor to ..."): from the sentence that opens one, its sentences saying what now holds.

What does not: questions beyond their premise, hedges ("maybe", "I think", "might"), reported
speech ("she said"), negations and the past that no longer holds ("I used to"), relative clauses
("which caps us at 10 seats" qualifies the plan). Over-extraction is the costlier mistake: a
wrong claim key supersedes a fact that still holds.

A fact is single-valued when its pattern names an attribute: that is its claim key, and a newer
fact for the key supersedes it. The attribute is the head of the noun phrase the value belongs
to, so that an original statement and its update meet on one key however they are phrased
("Base is $118,000" / "Final base is $126,500" → ``user.base``); a head that only says what kind
of value it is ("budget", "flag", "account", "region") gives way to the name or word before it
(``user.catering``, ``new_checkout.state``, ``craftly.state``). Other facts (procedures,
decisions, state changes without an attribute) carry none and are superseded only by a
near-identical newer text. The patterns were written while looking at the knowledge-update dev
set (bench/RESULTS.md, Compile).

The package, by what each module decides:

- `facts`: what goes in (`Episode`, a turn) and what comes out (`Fact`), and how a fact reads;
- `statements`: the sentences of a turn that may state facts (a user's, an assistant's
  confirmation), and `judgement`: the part of one that states something (no hedge, negation,
  reported speech; a question's premise);
- `vocabulary`: the regex building blocks and lexicons the patterns and names are made of;
- `patterns` (what a pattern is; procedures, decisions) and `attributes` (the single-valued
  attribute patterns, most specific first): the tables, tried in that order;
- `claim_keys`: an attribute's name from its noun phrase, and the claim key of a match;
- `clauses`: the clause a match stands in and the value it states;
- `matching`: a sentence's facts, one per clause, and the `extract` of 2026-12-03.1.

Version 2026-12-05.1 (`generalized`) reads what the table does not, by structure rather than
by phrasing: `content_words` (function words and stems), `typed_values` (a value and its
dimension: money, a unit's quantity, a noun's count, a record, a day, a state word; and
`asked_shapes`, the shapes read only for a question: spans of time, ordinals, places, names),
`holders` (whose a value is, by the subject of its clause: someone else's value is none of the
user's), `triples` (a clause's subject, attribute phrase and value), `resolution` (the claim a
statement is a value of: the known claim of its subject and dimension whose attribute phrase is
alike, lexically or, with an embedder, semantically), and `introductions` (identity from a
self-introduction).

Version 2026-12-06.1 (`readings.SECOND_READING`) reads introductions by `introducing`: the
cues that tie a name, an organization, a role or a plan to the speaker, over constituents read
by their shape (names in any Latin script, hyphenated or with initials; organizations with
their suffixes; roles in any case), in a question's statement before it asks too; and keys the
speaker's plan by a name one claim (`account.plan`). Measured on messages written blind:
`python -m bench introductions` (bench/RESULTS.md).

Version 2026-12-06.2 (`readings.THIRD_READING`, the default) reads a message's signature
by its parts (`signatures`: below the body, after a sign-off, or opening the message), the
sentence made plain before the cues read it, plans by the words plans are named with, and more
cues (`introducing_more`); what 2026-12-06.1 reads it reads, less what no introduction says.

Every version a compile job or a memory names is kept (:data:`EXTRACTS`): a stored job runs
with the version it was opened with, and the same sources through the same version give the
same facts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from types import MappingProxyType

from gateway.core.extraction import generalized, matching, readings
from gateway.core.extraction.facts import Episode, Fact
from gateway.core.extraction.resolution import PhraseSimilarity
from gateway.core.known_claims import Known

__all__ = [
    "EXTRACTS",
    "RULES",
    "RULES_CUES",
    "RULES_STRUCTURE",
    "RULES_TABLE",
    "Episode",
    "Extract",
    "Fact",
    "Known",
    "PhraseSimilarity",
    "extract",
]

Extract = Callable[[Sequence[Episode], Iterable[Known], PhraseSimilarity | None], list[Fact]]


def _table(
    episodes: Sequence[Episode], known: Iterable[Known], similar: PhraseSimilarity | None
) -> list[Fact]:
    del similar  # the table matches phrasings, not phrases by likeness
    return matching.extract(episodes, known)


# 2026-12-03.1: type lexicons (phones, schools, races), a role by its cue ("1:1 with Marcus"),
# partners as one slot, a named place's state, an amount or a race named without its noun
# resolved against the known claims, a request to save a value answered by the next sentence.
RULES_TABLE = ("rules", "2026-12-03.1")
# 2026-12-05.1: and statements split into subject, attribute phrase and typed value, resolved
# to known claims by similarity; self-introductions.
RULES_STRUCTURE = ("rules", "2026-12-05.1")
# 2026-12-06.1: and introductions read by their cues (`introducing`: "Ravi Iyer (Northgate
# Freight) here", a signature, "I work at Globex as the CFO", a question's statement before it
# asks), a relation of the speaker's ("Alice, my manager at Acme") introducing no one, the
# speaker's plan by a name one claim (`account.plan`).
RULES_CUES = ("rules", "2026-12-06.1")
# 2026-12-06.2: and a message's signature read by its parts (`signatures`: "Sunita Pillai, AP
# Clerk" below the body, "Thanks, Imogen Blackwood, IT lead, Harrowgate Council"), the
# sentence made plain before the cues read it (quoted words someone else's, an emoji a stop,
# any greeting one), plans by the words plans are named with ("we're on Starter"), more cues
# (`introducing_more`). The default.
RULES = ("rules", "2026-12-06.2")  # name, version: bump the version when an output can change


def _structure(
    episodes: Sequence[Episode], known: Iterable[Known], similar: PhraseSimilarity | None
) -> list[Fact]:
    return generalized.extract(episodes, known, similar, readings.FIRST_READING)


def _second(
    episodes: Sequence[Episode], known: Iterable[Known], similar: PhraseSimilarity | None
) -> list[Fact]:
    return generalized.extract(episodes, known, similar, readings.SECOND_READING)


def _third(
    episodes: Sequence[Episode], known: Iterable[Known], similar: PhraseSimilarity | None
) -> list[Fact]:
    return generalized.extract(episodes, known, similar, readings.THIRD_READING)


EXTRACTS: Mapping[str, Extract] = MappingProxyType(
    {
        RULES_TABLE[1]: _table,
        RULES_STRUCTURE[1]: _structure,
        RULES_CUES[1]: _second,
        RULES[1]: _third,
    }
)


def extract(
    episodes: Sequence[Episode],
    known: Iterable[Known] = (),
    similar: PhraseSimilarity | None = None,
) -> list[Fact]:
    """The facts of `episodes` by the default version (:data:`RULES`)."""
    return _third(episodes, known, similar)
