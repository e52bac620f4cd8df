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
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from gateway.core.known_claims import Known, KnownClaims
from gateway.core.supersession import CLAIM_KEY

__all__ = ["RULES", "Episode", "Fact", "Known", "extract"]

# 2026-12-03.1: type lexicons (phones, schools, races), a role by its cue ("1:1 with Marcus"),
# partners as one slot, a named place's state, an amount or a race named without its noun
# resolved against the known claims, a request to save a value answered by the next sentence.
RULES = ("rules", "2026-12-03.1")  # name, version: bump the version when an output can change

FactType = Literal["semantic", "procedural"]


@dataclass(frozen=True, slots=True)
class Episode:
    """One turn to compile: who said it, when, what, and the ids a fact from it names."""

    sources: tuple[str, ...]  # the turn id, and the memory id of its remembered copy if any
    role: str
    text: str
    occurred_at: datetime


@dataclass(frozen=True, slots=True)
class Fact:
    memory_type: FactType
    heading: str
    content: str
    confidence: float
    claim_key: str | None
    valid_from: datetime
    sources: tuple[str, ...]
    # The claim's value as stated ("Starter", "two cats") and, for a change "from X to Y", the
    # value it replaced: what a superseded raw turn is recognized by.
    value: str | None = None
    previous: str | None = None


# A sentence ends at . ! or ? before a capital, a digit or an opening quote, but not after a title
# ("Dr. Abernathy") or a common abbreviation.
# (A leading character class lets the engine skip to candidates; titles are checked after.)
_SENTENCE = re.compile(r"([.!?]) (?=[\"'(]?[A-Z0-9$])")  # on whitespace-folded text
_TITLE = re.compile(r"(?:^|\s)(?:Dr|Mr|Ms|Mrs|St|Jr|vs|Prof)\.$")
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
# Intentions are facts about a plan ("I'm going to learn Italian", "we're planning a trip"):
# these words hedge everything except an intent pattern.
_INTENT_WORDS = r"plan to|planning to|going to"
_HEDGE = re.compile(
    r"\b(maybe|perhaps|might|probably|possibly|i think|i guess|not sure|thinking about|"
    r"considering|wondering|if|would|could|should|hoping|hope to|want to|wants to|"
    + _INTENT_WORDS
    + r")\b",
    re.IGNORECASE,
)
_HEDGE_NOT_INTENT = re.compile(
    r"\b(maybe|perhaps|might|probably|possibly|i think|i guess|not sure|thinking about|"
    r"considering|wondering|if|would|could|should|hoping|hope to)\b",
    re.IGNORECASE,
)
_REPORTED = re.compile(
    r"\b(s?he|they|someone|somebody|people) (said|says|told|thinks|asked|mentioned)\b|"
    r"\baccording to\b|\b(said|says) that\b",
    re.IGNORECASE,
)
_NEGATED = re.compile(
    # Any word ending in n't ("haven't", "can't"), found by its ending: a leading \w* would
    # be tried at every letter.
    r"\b(?:not|no longer|never|used to)\b|n['’]t\b",
    re.IGNORECASE,
)
_NOT_FACT_WORDS = re.compile(r"\b(any tips|any ideas|what should|how do|can you|could you)\b", re.I)
# A question opening with a premise states that premise: "Now that I'm in Pittsburgh, any good
# climbing gyms?", "Since I'm on the Gold HMO now, do I need a referral?"
_PREMISE = re.compile(r"^(?P<premise>(?:now that|since) [^,?]{3,120}),", re.IGNORECASE)

_NUMBER_WORDS = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
}
# Words that follow a number without being the thing counted ("5 different ways").
_ADJECTIVES = (
    r"(?:different|other|separate|little|more|new|main|big|small|few|extra|additional|key|"
    r"major|great|good|best|top|simple|easy|quick|important|common|basic|similar|large|"
    r"times|ways|steps|tips|ideas|things|options|examples|reasons|types|kinds|of)"
)
_DIGITS = r"\d{1,3}(?:,\d{3})+|\d{1,7}"
_NUMBER = r"(?P<n>" + _DIGITS + "|" + "|".join(_NUMBER_WORDS) + r")"
# Typed values: what a stated quantity, date, time or version looks like in running text.
_MONEY = r"[$€£¥]\s?(?:" + _DIGITS + r")(?:\.\d+)?(?:\s?(?:k|m|million|billion|thousand)\b)?"
_MONTH = (
    r"(?-i:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|"
    r"Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)"
)
_WEEKDAY = r"(?-i:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)s?"
_DAY = (
    r"(?:(?:" + _WEEKDAY + r"),? )?" + _MONTH + r"\.? \d{1,2}(?:st|nd|rd|th)?\b(?!:)"
    r"|" + _WEEKDAY
)
_CLOCK = r"\d{1,2}:\d{2}(?:\s?[ap]\.?m\b\.?)?|\d{1,2}\s?[ap]\.?m\b\.?"
_VERSION = r"(?-i:[A-Z][\w+#-]*)(?: (?-i:[A-Z][\w+#-]*))? v?\d+(?:\.\d+)*\b"
_TYPED = "(?:" + "|".join((_MONEY, _CLOCK, _DAY, _VERSION)) + ")"
# Type lexicons: values whose kind names the attribute they are a value of.
_PHONES = r"(?-i:iPhone|Pixel|Galaxy|OnePlus|Xperia|Fairphone|Motorola|Nokia|Xiaomi|Huawei)"
_SCHOOL = (
    r"(?-i:(?:UC|CU|SUNY|CUNY|Cal) [A-Z][\w-]+|University of [A-Z][\w-]+(?: [A-Z][\w-]+)?|"
    r"[A-Z][\w-]+(?: [A-Z][\w-]+){0,2} (?:University|College|State|Institute|Tech|Polytechnic))"
)
_RACES = r"Marathon|Half Marathon|Half|Triathlon|Ultra|Ironman|10K|5K"
_RACE_KINDS = frozenset({"marathon", "half_marathon", "half", "triathlon", "ultra", "ironman"})
# A partner is one slot whatever the word: a boyfriend becomes a fiancé, then a husband.
_PARTNER_ROLES = frozenset(
    {
        "boyfriend",
        "girlfriend",
        "partner",
        "husband",
        "wife",
        "fiance",
        "fiancé",
        "fiancee",
        "fiancée",
        "spouse",
    }
)
_NAME = r"(?-i:(?:Dr\. |Team )?[A-Z][\w'&.-]*(?: [A-Z][\w'&.-]*){0,3})"
# A noun phrase naming what a value belongs to ("catering budget", "primary database region",
# "escalations for the payments service"); its head is found by `_attribute`.
_NOT_NOUN = r"(?!(?:and|but|so|or|the|a|an|my|our|your|his|her|their|with|i|we|you|it)\b)"
_NOT_INNER = r"(?!(?:and|but|so|or|my|our|your|his|her|their|with|i|we|you|it)\b)"
_SUBJECT = (
    r"(?P<attr>"
    + _NOT_NOUN
    + r"[a-z][\w'-]*(?: "
    + _NOT_INNER
    + r"(?:[a-z][\w'-]*|(?-i:[A-Z][\w-]*)))"
    r"{0,5}?)"
)
_DETERMINER = r"(?:^|(?<=[,:;] )|\b(?:my|our|your|the|his|her|their|and|so|then) )"
_PREPOSITIONS = frozenset(
    {"in", "at", "for", "on", "of", "with", "from", "to", "by", "since", "about", "off", "into"}
)
_PRONOUNS = frozenset(
    {"i", "me", "we", "us", "you", "he", "she", "they", "him", "her", "and", "it", "its"}
)
_STOP_ATTRIBUTES = frozenset(
    {
        *("it", "this", "that", "these", "those", "there", "here", "them", "which", "what"),
        *("one", "ones", "thing", "things", "way", "time", "have", "has", "be", "do", "get"),
    }
)
# Words that qualify an attribute without naming it ("the final base", "our weekly deploy").
_MODIFIERS = frozenset(
    {
        "the",
        "a",
        "an",
        "new",
        "current",
        "old",
        "final",
        "actual",
        "official",
        "default",
        "standard",
        "usual",
        "monthly",
        "weekly",
        "daily",
        "nightly",
        "yearly",
        "annual",
        "total",
    }
)
_ARTICLES = frozenset({"the", "a", "an", "new", "current", "old"})
# Heads that say what kind of value an attribute holds rather than whose: "catering budget" is
# the catering's, "new_checkout feature flag" is new_checkout's, "seller account on Craftly"
# is Craftly's.
_GENERIC_HEADS = frozenset(
    {
        "budget",
        "cost",
        "price",
        "bill",
        "fee",
        "amount",
        "date",
        "day",
        "time",
        "region",
        "line",
        "account",
        "flag",
        "feature",
        "setting",
        "option",
        "job",
        "status",
        "number",
        "version",
        "service",
    }
)


@dataclass(frozen=True, slots=True)
class _Pattern:
    kind: str  # what the fact is about, for its heading
    regex: re.Pattern[str]
    # Claim key template: {attr}, {owner} from the groups; "" for no claim key; "{amount}" or
    # "{race}" for the known claim the value updates (`KnownClaims`), no fact when none is.
    key: str
    memory_type: FactType = "semantic"
    tail: bool = False  # the value is what follows the match
    head: bool = False  # the attribute is its phrase's head noun, not its last three words
    intent: bool = False  # states an intention: "planning to", "going to" do not hedge it
    typed: bool = False  # the value group is a typed value (an amount, a day), kept whole
    # Words a sentence must have one of before the pattern is tried ("#": a digit): a set
    # lookup, where most sentences state nothing and the patterns backtrack.
    gate: frozenset[str] | None = None


def _p(
    kind: str,
    pattern: str,
    key: str,
    memory_type: FactType = "semantic",
    *,
    tail: bool = False,
    head: bool = False,
    intent: bool = False,
    typed: bool = False,
    gate: str | None = None,
) -> _Pattern:
    regex = re.compile(pattern, re.IGNORECASE)
    needs = frozenset(gate.split()) if gate else None
    return _Pattern(kind, regex, key, memory_type, tail, head, intent, typed, needs)


_PROCEDURES = (
    _p("procedure", r"^(always|never|from now on|going forward)\b", "", "procedural"),
    _p("procedure", r"^to [a-z]+[^,]*, (run|use|open|call|type|go)\b", "", "procedural"),
)
_DECISIONS = (_p("decision", r"\bwe (decided|agreed|chose)\b", ""),)
_CHANGE_VERBS = (
    r"(?:switched|moved|changed|migrated|upgraded|downgraded|dropped|raised|lowered|cut|"
    r"reduced|increased|bumped|pushed|rescheduled|updated|brought)"
)
# Single-valued attributes, most specific first. A `value` group (or, with `tail`, the words
# after the match) is the fact's value; a `previous` group the value it replaced ("from X").
_ATTRIBUTES = (
    _p("identity", r"\bmy name is (?P<value>[A-Z][\w'-]*(?: [A-Z][\w'-]*)*)", "user.name"),
    _p(
        "identity",
        # "I'm a contractor for Brightline" / "they hired me full-time": how the user works.
        r"\b(?:i'm|i am|i work as|i'm now|i became) (?:a |an )?(?P<value>(?:full-time |part-time )?"
        r"(?:contractor|freelancer|consultant|intern|employee|temp))\b"
        r"|\bhired me (?:on )?(?:as (?:a |an )?)?(?P<v2>full-time|part-time|permanently|"
        r"permanent|contractor|freelancer)\b",
        "user.employment",
        gate="contractor contractors freelancer consultant intern employee temp hired",
    ),
    _p(
        "identity",
        r"\bi (?:work|started working) (?:at|for) (?P<value>[A-Z][\w&'-]*(?: [A-Z][\w&'-]*)*)",
        "user.employer",
        gate="work working",
    ),
    _p("identity", r"\b(hired me|i joined|i'm joining) [A-Z]?", "user.employer"),
    _p(
        "identity",
        r"\b(?:i'm|i am)(?: officially| now)?(?: (?:a|an) [\w -]{2,40}?)? on the "
        r"(?P<value>[\w -]+ team)\b",
        "user.team",
    ),
    _p(
        "identity",
        r"\b(?:i live|we live|i moved|we moved|i'm now|now that i'm|now that we're|"
        r"i've been|we've been) (?:in|to) "
        r"(?P<value>[A-Z][\w'-]*(?: [A-Z][\w'-]*)*)",
        "user.location",
    ),
    _p(
        "identity",
        r"\b(?:on|to|onto) the (?P<value>[\w -]{1,30}?) (?:plan|tier)\b",
        "account.plan",
    ),
    _p(
        "identity",
        # "I'm on the Silver PPO", "we're now on Premium": a subscription or coverage held.
        r"\b(?:i'm|i am|we're|we are)(?: now| currently| still)? on (?:the |a )?"
        r"(?P<value>(?-i:[A-Z][\w+-]*(?: [A-Z][\w+-]*){0,2}))(?! team)\b",
        "account.plan",
    ),
    _p(
        "identity",
        # "My Pixel keeps dying", "the iPhone camera is great", "got a new Galaxy": the phone
        # the user has, by its brand (a type lexicon: the brand names the attribute).
        # After "the" only with a model number or a part: "the Guide to the Galaxy" is a book.
        r"\b(?:my|(?:got|bought|switched to|upgraded to)(?: an?| the)?)(?: new)? "
        r"(?P<value>" + _PHONES + r")\b"
        r"|\bthe (?:new )?(?P<v2>" + _PHONES + r")(?= [A-Z]?\d| (?:camera|battery|screen|display|"
        r"charger|case|keyboard|update)s?\b)",
        "user.phone_model",
        gate="iphone pixel galaxy oneplus xperia fairphone motorola nokia xiaomi huawei",
    ),
    _p(
        "identity",
        # "got into UC Davis", "move-in weekend at Oregon State", "enrolled at Carleton
        # College": the school someone of the household attends, by its name's shape.
        r"\b(?:got into|accepted (?:at|to|into)|admitted to|enrolled (?:at|in)|attending|"
        r"committed to|transferring to|transferred to|freshman at|sophomore at|"
        r"move-in (?:day|weekend) at|orientation at)(?: the)? (?P<value>" + _SCHOOL + r")\b",
        "user.school",
        gate="into accepted admitted enrolled attending committed transferring transferred "
        "freshman sophomore move orientation",
    ),
    _p(
        "plan",
        # "I got into the Chicago Marathon", "signed up for the Berlin Half": the race the user
        # is in, keyed by its kind.
        r"\b(?:got into|signed up for|registered for|entered|training for|running)(?: the)? "
        r"(?P<value>(?-i:[A-Z][\w'-]+(?: (?!Half\b)[A-Z][\w'-]+)?)) (?P<attr>(?-i:"
        + _RACES
        + r"))\b",
        "user.{attr}",
        intent=True,
        gate="into signed registered entered training running",
    ),
    _p(
        "plan",
        # "So I'm running Berlin instead!": a race named without its kind replaces the race
        # known (the newest claim keyed by a race's kind).
        r"\b(?:running|racing) (?:the )?(?P<value>(?-i:[A-Z][\w'-]+(?: [A-Z][\w'-]+)?))"
        r" instead\b",
        "{race}",
        intent=True,
        gate="instead",
    ),
    _p(
        "plan",
        # "I'm planning to apply to MBA programs", "First week of my data science bootcamp":
        # the programme the user is applying to or in.
        r"\b(?:apply(?:ing)? to|applied to|enroll(?:ed|ing)? in|start(?:ed|ing)?|doing|"
        r"join(?:ed|ing)?|of|in) (?:an? |the |my )?(?:part-time |full-time |online )?"
        r"(?P<value>(?:[a-z-]+ ){0,2}?(?:bootcamp|apprenticeship)|(?-i:MBA|PhD|MFA|MSc)"
        r"|(?:master's|masters|degree|certificate) program)(?:me)?s?\b",
        "user.program",
        intent=True,
        gate="bootcamp apprenticeship mba phd mfa msc program programs",
    ),
    _p(
        "identity",
        # "I play center back for the Riverside Rovers", "First match with Eastside Athletic":
        # the team the user plays for.
        r"\bi play (?:[a-z]+ ){0,3}?for (?:the )?(?P<value>(?-i:[A-Z][\w'-]*(?: [A-Z][\w'-]*){0,3}))"
        r"|\b(?:first|my|our) (?:match|game|season|practice) (?:with|for) (?:the )?"
        r"(?P<v2>(?-i:[A-Z][\w'-]*(?: [A-Z][\w'-]*){0,3}))",
        "user.sports_team",
        gate="play match game season practice",
    ),
    _p(
        "relation",
        # "my manager, Priya", "my accountant is Roger Hollis", "a new accountant: Anjali Mehta",
        # "our building's property manager is now listed as ...".
        r"\b(?:my|our|your|a|the)(?: [\w']+'s)? (?:new )?(?P<attr>manager|boss|accountant|"
        r"primary care doctor|doctor|dentist|therapist|landlord|property manager|boyfriend|"
        r"girlfriend|partner|husband|wife|fiancée?|lawyer|coach|tutor|mentor|vet|realtor)"
        r"(?:,| is| was|:| named| to)?(?: now)?(?: listed as)? (?P<value>" + _NAME + ")",
        "user.{attr}",
    ),
    _p(
        "relation",
        # "my first 1:1 with Marcus", "I now report to Dana": the user's manager, by the
        # meeting or the line only a manager has with them.
        r"\b(?:1:1|1-on-1|one-on-one)s? with (?P<value>" + _NAME + r")"
        r"|\bi(?:'m| am)? (?:now )?report(?:ing)? (?:directly )?to (?P<v2>" + _NAME + ")",
        "user.manager",
        gate="with report reporting",
    ),
    _p(
        "relation",
        # "Tariq is taking me to a jazz club for our three-month anniversary": whoever shares
        # the user's anniversary is their partner.
        r"^(?!(?:it|this|that|there|today|tomorrow|tonight|next|last|what|we|i)\b)"
        r"(?P<value>(?-i:[A-Z][a-z]+)) (?:is|was|and i|took|takes|surprised|booked|planned)\b"
        r"[^.!?]{0,80}?\b(?:our|my) (?:[\w-]+ )?anniversary"
        r"|\bwith (?P<v2>(?-i:[A-Z][a-z]+))\b[^.!?]{0,60}?\bour (?:[\w-]+ )?anniversary",
        "user.partner",
        gate="anniversary",
    ),
    _p(
        "relation",
        # "Jonah and I broke up": the partner claim ends, and the partner's name with it.
        r"\b(?-i:[A-Z][a-z]+) and i (?:just |finally )?(?P<value>broke up|split up|divorced)\b"
        r"|\bi (?:just |finally )?(?P<v2>broke up|split up) with (?-i:[A-Z][a-z]+)\b",
        "user.partner",
        typed=True,
        gate="broke split divorced",
    ),
    _p(
        "relation",
        # "the notifications service is owned by Team Atlas", "the catalog now lists the
        # notifications service as owned by Team Nimbus": who owns a thing.
        _DETERMINER + _SUBJECT + r" (?:is |are |was |as )(?:now )?(?:owned|run|managed|maintained|"
        r"handled|led) by (?P<value>" + _NAME + ")",
        "{attr}.owner",
        head=True,
        gate="by",
    ),
    _p(
        "relation",
        # "My sister Aoife lives in Melbourne", "Aoife just started her new job in Auckland":
        # where a named person lives or works.
        r"\b(?P<attr>(?-i:[A-Z][a-z]+)) (?:just |now |recently )?(?:lives|moved|relocated|"
        r"(?:started|took|got|landed) (?:a |her |his |their )?(?:new )?job)(?: now)? (?:in|to) "
        r"(?P<value>(?-i:[A-Z][\w'-]*(?: [A-Z][\w'-]*)*))",
        "{attr}.location",
    ),
    _p(
        "relation",
        # "Daniel and I got engaged", "we got married", "my parents reconciled".
        r"\b(?:(?P<owner>my|our) (?P<attr>[a-z]+)|we|i|[A-Z]\w+ and i)"
        r"(?: (?:have|has) been| are| is| were| got| just got| just| finally)?"
        r" (?P<value>engaged|married|divorced|separated|reconciled|back together|broke up|"
        r"split up)\b",
        "{attr}.relationship",
        typed=True,
        gate="engaged married divorced separated reconciled together broke split",
    ),
    _p(
        "state",
        # "My favorite bakery, Lindenhof, is closed for renovations", "at Lindenhof this
        # morning, the first time since they reopened": a named place's state.
        r"\b(?:my|our|the) [a-z][\w -]{1,30}?, (?P<attr>(?-i:[A-Z][\w'&-]*(?: [A-Z][\w'&-]*){0,2})),"
        r" (?:is|was|has been|got)(?: now| officially| temporarily| finally)? "
        r"(?P<value>closed|reopened|open again|shut down)\b"
        r"|\b(?:at|to|from|of) (?P<a2>(?-i:[A-Z][\w'&-]*(?: [A-Z][\w'&-]*){0,2}))\b[^.;!?]{0,60}?"
        r"\bsince (?:they|it) (?P<v2>reopened|closed|shut down)\b",
        "{attr}.state",  # the whole name: "Blue Door" is not a door
        typed=True,
        gate="closed reopened shut",
    ),
    _p(
        "state",
        # "Our house on Juniper Lane is officially on the market", "we took the house off the
        # market".
        _DETERMINER + _SUBJECT + r" (?:is|was|are|got|has been)(?: now| officially| back)?"
        r" (?P<value>on the market|off the market)\b"
        r"|\b(?:took|pulled|put) (?:the |our |my )?(?P<a2>[a-z][\w -]{1,30}?) "
        r"(?P<v2>on the market|off the market)\b",
        "{attr}.state",
        head=True,
        typed=True,
        gate="market",
    ),
    _p(
        "state",
        # "auto-renew is turned on" / "My seller account on Craftly got suspended": a state.
        _DETERMINER + _SUBJECT + r" (?:is|was|got|has been|stays|remains)(?: now| still)?"
        r" (?P<value>turned on|turned off|enabled|disabled|paused|resumed|suspended|reinstated|"
        r"closed|reopened|cancell?ed|active|inactive)\b",
        "{attr}.state",
        head=True,
        typed=True,
        gate="turned enabled disabled paused resumed suspended reinstated closed reopened cancelled canceled active inactive",
    ),
    _p(
        "state",
        r"\b(?:i|we|you) (?P<value>turned off|turned on|enabled|disabled|paused|resumed|"
        r"suspended|reinstated|reopened)(?: the| our| my)? (?P<attr>[a-z][\w-]*(?: [\w-]+){0,2}?)"
        r"(?= (?:on|for|in|last|this|yesterday|today|that|which|so|because|to|until)\b|[,.;!]|$)",
        "{attr}.state",
        head=True,
        typed=True,
        gate="turned enabled disabled paused resumed suspended reinstated reopened",
    ),
    _p(
        "preference",
        r"\bmy (?:all-time |new |current )?favou?rite (?P<attr>[a-z ]{2,40}?) (?:is|are)\b",
        "user.favorite_{attr}",
        tail=True,
    ),
    _p(
        "preference",
        # "Severance has overtaken The Expanse as my favorite show".
        r"\b(?P<value>(?-i:[A-Z][\w'-]*(?: [A-Z][\w'-]*)*)) (?:has |have )?(?:overtaken|"
        r"replaced|beaten|dethroned|surpassed) (?P<previous>(?-i:[A-Z][\w'-]*(?: [A-Z][\w'-]*)*))"
        r" as "
        r"(?:my|our) (?:new )?(?:all-time )?favou?rite (?P<attr>[a-z ]{2,40}?)\b(?=[.,!;]|$)",
        "user.favorite_{attr}",
    ),
    _p(
        "preference",
        r"(?:\b(?P<value>(?-i:[A-Z][\w'-]*(?: [A-Z][\w'-]*)*)) |\b)(?:is|as|'s) (?:now )?"
        r"(?:my|your) (?:new )?favou?rite (?P<attr>[a-z ]{2,40}?)\b(?=[.,!;]| now\b|$)",
        "user.favorite_{attr}",
    ),
    _p(
        "preference",
        r"\bmy (?:go-to|usual|standard|regular) (?P<attr>[a-z ]{2,30}?) (?:is|are)\b",
        "user.usual_{attr}",
        tail=True,
        head=True,
    ),
    _p(
        "preference",
        r"\b(?:is|'s) (?:now )?(?:my|your) (?:new )?(?:go-to|usual|standard|regular) "
        r"(?P<attr>[a-z ]{2,30}?)\b(?=[.,!;]| now\b|$)",
        "user.usual_{attr}",
        head=True,
    ),
    _p(
        "preference",
        # "I always want an aisle seat", "book me window seats".
        r"\b(?:i (?:always|usually|only) (?:want|take|choose|pick|get|book)|i prefer|book me|"
        r"reserve me) (?:an? |the )?(?P<value>(?!to\b|it\b|them\b)[a-z-]+ (?P<attr>[a-z]{3,20}?))"
        r"s?\b",
        "user.preferred_{attr}",
    ),
    _p(
        "quantity",
        # "750 requests per minute": a rate, keyed by what is counted per what.
        r"\b(?P<value>" + _DIGITS + r")(?P<unit> (?P<attr>[a-z]{3,20}) (?:per|an?|/) "
        r"(?P<per>second|minute|hour|day|week|month|year))\b",
        "rate.{attr}_per_{per}",
        gate="#",
    ),
    _p(
        "quantity",
        # "I have two cats", "we're at 17 houseplants", "a team of 6 engineers", "runs 12
        # nodes"; spans of time are not things one has.
        r"\b(?:have|own|at|now it's|there are|is|are|of|runs|run|to)(?: now| still)? (?P<value>"
        + _NUMBER
        + r" (?P<attr>(?!(?:day|week|month|year|hour|minute|second|time|percent)s?\b|"
        + _ADJECTIVES
        + r"\b)(?-i:[a-z]{3,30})))\b",
        "count.{attr}",
        gate="# one two three four five six seven eight nine ten eleven twelve",
    ),
    _p(
        "quantity",
        # "listed it on Marketplace for $14,900": an asking price.
        r"\b(?:listed|priced|advertised|selling)\b[^.;]{0,40}? (?:for|at) (?P<value>"
        + _MONEY
        + ")",
        "user.price",
        typed=True,
        gate="#",
    ),
    _p(
        "schedule",
        # "Booked a dental cleaning for March 14", "we deploy the backend every Tuesday".
        r"\b(?:booked|scheduled|set up|made) (?:a |an |my |the |our )?(?P<attr>[a-z][a-z -]{1,30}?)"
        r" (?:for|on) (?P<value>" + _DAY + ")",
        "user.{attr}",
        head=True,
        typed=True,
        gate="booked scheduled set made",
    ),
    _p(
        "schedule",
        r"\b(?:we|i|they) (?P<attr>[a-z]{3,20}) (?:[\w-]+ ){0,4}?(?:every|on) (?P<value>"
        + _WEEKDAY
        + r")\b",
        "user.{attr}",
        head=True,
        gate="monday mondays tuesday tuesdays wednesday wednesdays thursday thursdays friday fridays saturday saturdays sunday sundays",
    ),
    _p(
        "schedule",
        r"\b(?:leaving|leave|departing|depart|departs|leaves|flying out)(?: from)?"
        r"(?: (?-i:[A-Z]\w+))?(?: on)? (?P<value>" + _DAY + ")",
        "user.departure",
        typed=True,
        gate="leaving leave leaves departing depart departs flying",
    ),
    _p(
        "attribute",
        # "catering budget is $9,000", "Sessions are Mondays", "staging is on Postgres 15",
        # "her wedding date: September 20", "the wedding now on October 11".
        _DETERMINER + _SUBJECT + r"(?: (?:is|are|was|were|came to|comes to|runs|run|stays|"
        r"goes|go)(?: (?:now|still|officially|currently|set|scheduled|booked))*"
        r"| now|:)(?: (?:about|around|roughly|approximately|at|on|for|to|in))? (?P<value>"
        + _TYPED
        + r")",
        "{owner}.{attr}",
        head=True,
        typed=True,
        gate="# monday mondays tuesday tuesdays wednesday wednesdays thursday thursdays friday fridays saturday saturdays sunday sundays jan january feb february mar march apr april may jun june jul july aug august sep sept september oct october nov november dec december",
    ),
    _p(
        "quantity",
        # "Now that I'm paying $1,975 a month", "we're down to about $31,500 a month now": an
        # amount with a cadence and without its noun updates the known amount it is near.
        r"\b(?:paying|spending|down to|up to|sitting at|we're at|i'm at|it's at|now at)"
        r"(?: (?:about|around|roughly|approximately|only|just))? (?P<value>" + _MONEY + r")"
        r"(?= (?:a|per|each|every) (?:month|year|week)\b|/(?:mo|month|yr|year|wk)\b)"
        r"(?![^.;,]{0,14}\b(?:for|on)\b)",
        "{amount}",
        typed=True,
        gate="#",
    ),
    _p(
        "attribute",
        # "escalations for the payments service go to Sven Eriksson".
        _DETERMINER + _SUBJECT + r" (?:now )?go(?:es)? to (?P<value>" + _NAME + ")",
        "{owner}.{attr}",
        head=True,
        gate="go goes",
    ),
    _p(
        "plan",
        # "we're planning a trip to Japan in October for our anniversary", "we're doing
        # Portugal instead for the anniversary": an intention keyed by what it is for.
        r"\b(?:planning|plan|doing|going|heading|booked|booking|taking)\b[^.;]{0,60}?"
        r"(?:\bto |\bdoing |\bvisit )?(?P<value>(?-i:[A-Z][\w-]+(?: [A-Z][\w-]+)?))"
        r"[^.;]{0,40}? for (?:our|my|the|his|her) (?P<attr>[a-z]+)\b",
        "plan.{attr}",
        intent=True,
        gate="for",
    ),
    _p(
        "plan",
        # "migrate application logs ... to a self-hosted Elasticsearch cluster" / "going with
        # ClickHouse for logs instead": what a thing is moving to.
        r"\b(?:migrate|move|moving|migrating|switch|switching)(?: our| the| my)? "
        r"(?P<attr>[a-z][a-z -]{1,30}?) (?:off [^.;]{1,50}? )?to (?:a |an |the )?"
        r"(?:[\w-]+ ){0,2}?(?P<value>(?-i:[A-Z][\w-]+))"
        r"|\bgoing with (?P<v2>(?-i:[A-Z][\w-]+)) for (?:the |our )?(?P<a2>[a-z][a-z -]{1,30}?)"
        r"(?: instead)?\b(?=[.,;!]| instead|$)",
        "plan.{attr}",
        head=True,
        intent=True,
        gate="migrate migrating move moving switch switching going",
    ),
    _p(
        "plan",
        # "I'm going to learn Italian", "I'm learning Korean now".
        r"\b(?:learn|learning|studying|study) (?P<value>(?-i:[A-Z][a-z]+))\b",
        "user.learning",
        intent=True,
        gate="learn learning study studying",
    ),
    _p(
        "attribute",
        r"\b(?P<owner>my|our|your) (?P<attr>[a-z][a-z -]{1,40}?) (?:is|are)(?: now)? (?!not\b)",
        "{owner}.{attr}",
        tail=True,
        head=True,
    ),
    _p(
        "state",
        # "moved the kayak to a storage unit", "we moved into the new Mission Bay office".
        r"\bmoved (?:in)?to (?:the |our |a )?(?:new )?(?P<value>(?-i:[A-Z][\w-]+(?: [A-Z][\w-]+)*))"
        r" (?P<attr>[a-z]{3,20})\b",
        "{owner}.{attr}",
        head=True,
        gate="moved",
    ),
    _p(
        "state",
        r"\b(?:keep|keeps|store|stores|park|parks) (?:my |our |the )?(?P<attr>[a-z]{3,20}) "
        r"(?:in|at) (?P<value>[^.;]+)",
        "{owner}.{attr}",
        head=True,
        gate="keep keeps store stores park parks",
    ),
    _p(
        "state",
        r"\b" + _CHANGE_VERBS + r" (?:my |our |the |your |her |his )?"
        r"(?:(?!from\b)(?P<attr>[a-z][a-z -]{1,30}?) )?(?:from (?P<previous>.+?) )?to (?P<value>.+)",
        "{owner}.{attr}",
        head=True,
        gate="to",
    ),
)
_STATE_CHANGE = re.compile(
    r"\b(now|switched|moved|upgraded|downgraded|cancell?ed|sold|renewed|reinstated|resumed|"
    r"paused|turned (on|off)|enabled|disabled|reopened|retired)\b",
    re.IGNORECASE,
)


def _sentences(text: str) -> list[str]:
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


_SUBORDINATE = re.compile(
    r",| so | because | but | since | which | until | unless | though | and (?=i\b|we\b|it\b)",
    re.IGNORECASE,
)


def _judged(sentence: str) -> str | None:
    """The part of `sentence` that states something, or None when nothing does. Hedges and
    negations are judged in the main clause: "Auto-renew is turned on so I don't lose it"
    states a fact. "Never deploy on Fridays" is a rule, not a negation. A question states only
    its premise ("Now that I'm in Pittsburgh, ...?")."""
    if sentence.endswith("?"):
        premise = _PREMISE.match(sentence)
        return premise.group("premise") if premise else None
    main = _SUBORDINATE.split(sentence, maxsplit=1)[0]
    rule = _PROCEDURES[0].regex.search(sentence) is not None
    if (
        _REPORTED.search(sentence)
        or (_NEGATED.search(main) and not rule)
        or _NOT_FACT_WORDS.search(sentence)
        or _HEDGE_NOT_INTENT.search(main)
    ):
        return None
    return sentence


def _attribute(raw: str, *, head: bool = False) -> str | None:
    """An attribute's name from its noun phrase: articles dropped, cut before a preposition
    ("favorite restaurant in town" is the favorite restaurant), singular. Its last three words,
    or with `head` its head noun: the noun itself, unless that only says what kind of value it
    holds ("budget", "flag", "account"), when the name in the phrase or the word before is."""
    tokens = re.findall(r"[^\W_][\w'-]*", raw)
    before: list[str] = []
    after: list[str] = []
    for token in tokens:
        folded = token.casefold()
        if after or folded in _PREPOSITIONS:
            after.append(token)
            continue
        dropped = _MODIFIERS if head else _ARTICLES
        if folded not in dropped:
            before.append(token)
    words = [t.casefold().removesuffix("'s").replace("-", "_").replace("'", "") for t in before]
    if not words or words[-1] in _STOP_ATTRIBUTES or _PRONOUNS & set(words):
        return None
    if not head:
        name = "_".join(words[-3:])
    elif words[-1] not in _GENERIC_HEADS:
        name = words[-1]
    else:
        named = [t for t in before[:-1] + after[1:] if t[0].isupper() or "_" in t]
        if named:
            name = named[0].casefold().replace("-", "_")
        elif len(words) > 1:
            name = words[-2]
        else:
            name = words[-1]
    if name.endswith("s") and not name.endswith("ss") and len(name) > 3:
        name = name[:-1]  # count.cats and count.cat are one claim
    return name


def _claim_key(pattern: _Pattern, groups: dict[str, str | None], claims: KnownClaims) -> str | None:
    if not pattern.key:
        return None
    if pattern.key == "{amount}":
        return claims.amount(groups.get("value") or "")
    if pattern.key == "{race}":
        return claims.newest_of(_RACE_KINDS)
    fields: dict[str, str] = {}
    if "{attr}" in pattern.key:
        raw = groups.get("attr") or groups.get("a2")
        if raw is None and pattern.kind == "relation":
            raw = "user"  # "we got married": the user's own
        attribute = _attribute(raw or "", head=pattern.head)
        if attribute is None:
            return None
        fields["attr"] = attribute
        if pattern.key == "user.{attr}" and attribute in _PARTNER_ROLES:
            fields["attr"] = "partner"
    if "{per}" in pattern.key:
        fields["per"] = groups.get("per") or ""
    # Whose attribute: the people talking to the assistant ("my", "our", and "your" when the
    # assistant confirms); one owner, so "our office" and "your office" are one claim.
    fields["owner"] = "user"
    key = pattern.key.format(**fields)
    if key.startswith("user.relationship"):
        key = "user.relationship"
    return key if CLAIM_KEY.match(key) else None


_VALUE_END = re.compile(
    r"[;:!?()]|,(?!\d{3})|(?<!\bDr)(?<!\bMr)(?<!\bMs)(?<!\bMrs)\.(?!\d)| (?:and|but|which|so|because|with|since|on|at|in|from|by|last|"
    r"this|next|after|before|until|now|for|through|instead)\b",
    re.IGNORECASE,
)
_VALUE_LEAD = re.compile(
    r"^(?:(?:now|a|an|the|about|at|on|in|officially|still|scheduled|set|booked|planned|"
    r"for|to|going|located|listed as|roughly|around)\s+)+",
    re.IGNORECASE,
)
_HOUSE_NUMBER = re.compile(r"^\d+[a-z]? (?=[A-Z])")


def _value(raw: str | None) -> str | None:
    """A stated value cut to its phrase: up to the first clause break, at most four words,
    without leading articles or an address's house number; None when nothing specific is
    left."""
    if not raw:
        return None
    phrase = _VALUE_LEAD.sub("", _VALUE_END.split(raw, maxsplit=1)[0].strip())
    phrase = _HOUSE_NUMBER.sub("", phrase)
    words = phrase.split()[:4]
    value = " ".join(words).strip(" '\"")
    return value if len(value) >= 2 and value.casefold() not in _PRONOUNS else None


_RELATIVE = re.compile(r"(?:which|that|who|whose|where)\b", re.IGNORECASE)
_CLAUSE_BREAK = re.compile(r"[;:] |, (?!\d)| (?:and|but|so) (?=i |we |my |our |it |the )")


def _clause_span(sentence: str, start: int, end: int) -> tuple[int, int]:
    """Where the clause of `sentence` a match from `start` to `end` stands in begins and ends:
    from the break before it to the next comma or semicolon after it. A fact states its own
    clause, not its neighbours' values ("Venue is $6,400, catering budget is $9,000")."""
    opening = 0
    for brk in _CLAUSE_BREAK.finditer(sentence, 0, start):
        opening = brk.end()
    closing = re.search(r"[;,] (?!\d)", sentence[end:])
    return opening, end + closing.start() if closing else len(sentence)


def _clause(sentence: str, opening: int, closing: int) -> str:
    clause = sentence[opening:closing].strip(" ,;")
    if clause and clause[-1] not in ".!?":
        clause += "."
    return clause[0].upper() + clause[1:] if clause else sentence


def _fact_of(
    pattern: _Pattern,
    match: re.Match[str],
    stated: str,
    span: tuple[int, int],
    episode: Episode,
    confirmed: bool,
    claims: KnownClaims,
) -> Fact | None:
    groups = match.groupdict()
    claim_key = _claim_key(pattern, groups, claims)
    if pattern.key and claim_key is None and not groups.get("previous"):
        return None  # an attribute pattern without a usable attribute
    raw = stated[match.end() :] if pattern.tail else groups.get("value") or groups.get("v2")
    value = " ".join(raw.split()) if pattern.typed and raw else _value(raw)
    previous = groups.get("previous")
    said = _clause(stated, *span)
    if previous:
        # A change is stated as what holds now ("to Y", "Y has overtaken the earlier one"): the
        # value it replaced is what it supersedes, not what it says.
        said = said.replace(f" from {previous} to ", " to ").replace(previous, "the earlier one")
    fact = _build(pattern.kind, pattern.memory_type, claim_key, said, episode, confirmed)
    return dataclasses.replace(fact, value=value, previous=_value(previous))


def _gate_words(text: str) -> frozenset[str]:
    """The words patterns are gated on, and "#" when the text has a digit."""
    words = re.findall(r"[a-z]+", text.casefold())
    return frozenset([*words, "#"] if any(c.isdigit() for c in text) else words)


def _facts_of(
    sentence: str, stated: str, episode: Episode, confirmed: bool, claims: KnownClaims
) -> list[Fact]:
    """The facts of one sentence (`stated` is the part of it that states something): every
    single-valued claim in it, one per clause (the first, most specific, pattern matching in a
    clause wins it), or failing that one fact without a claim key."""
    found: list[Fact] = []
    taken: list[tuple[int, int]] = []
    hedged = _HEDGE.search(_SUBORDINATE.split(stated, maxsplit=1)[0]) is not None
    present = _gate_words(stated)
    for pattern in (*_PROCEDURES, *_DECISIONS, *_ATTRIBUTES):
        if (hedged and not pattern.intent) or (not pattern.key and found):
            continue
        if pattern.gate is not None and pattern.gate.isdisjoint(present):
            continue
        for match in pattern.regex.finditer(stated):
            span = _clause_span(stated, match.start(), match.end())
            if any(span[0] < end and start < span[1] for start, end in taken) or (
                found and _RELATIVE.match(stated, span[0])
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
        return [_build("state", "semantic", None, sentence, episode, confirmed)]
    return []


def _build(
    kind: str,
    memory_type: FactType,
    claim_key: str | None,
    sentence: str,
    episode: Episode,
    confirmed: bool,
) -> Fact:
    day = episode.occurred_at.date().isoformat()
    who = "the assistant confirmed" if confirmed else "the user said"
    label = claim_key or kind
    opening = sentence if len(sentence) <= 120 else sentence[:119] + "…"
    return Fact(
        memory_type=memory_type,
        heading=f"{label}: {opening}"[:200],
        content=f"On {day} {who}: {sentence}",
        confidence=0.9 if confirmed or claim_key else 0.75,
        claim_key=claim_key,
        valid_from=episode.occurred_at,
        sources=episode.sources,
    )


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


def _statements(episode: Episode) -> Iterable[tuple[str, bool]]:
    """The sentences of a turn that may state facts, each with whether it is the assistant's
    confirmation: all of the user's; the assistant's only from a confirmation of an action on
    ("Done. Your plan is now Premium.", "... Noted: Wingspan is your new favorite.")."""
    if episode.role == "user":
        yield from ((sentence, False) for sentence in _answered_requests(_sentences(episode.text)))
        return
    if episode.role != "assistant" or _OPENS_ANYWHERE.search(episode.text) is None:
        return  # no sentence of it can open a confirmation: not worth splitting
    confirmed = False
    for sentence in _sentences(episode.text):
        opening = _CONFIRMATION.match(sentence)
        if not confirmed and (opening or _ACTION.match(sentence)):
            confirmed = True
            rest = sentence[opening.end() :].lstrip(" .:,!-—") if opening else sentence
            if not rest:
                continue  # "Done." opens; the sentences after it say what now holds
            sentence = rest  # noqa: PLW2901  what follows "Noted:" is the statement
        if confirmed and re.search(r"\b(now|your|is|are)\b", sentence, re.I):
            yield sentence, True


def _from_episode(episode: Episode, claims: KnownClaims) -> Iterable[Fact]:
    seen: set[str | None] = set()
    for sentence, confirmed in _statements(episode):
        stated = _judged(sentence)
        if stated is None:
            continue
        for fact in _facts_of(sentence, stated, episode, confirmed, claims):
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
