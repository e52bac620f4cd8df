"""The words the patterns are made of: regex building blocks for numbers, amounts, days, times,
versions, names and noun phrases; type lexicons (phones, schools, races) whose values name their
attribute; and the lexicons an attribute's name is read with (prepositions, modifiers, heads)."""

from __future__ import annotations

__all__ = [
    "ADJECTIVES",
    "ARTICLES",
    "CHANGE_VERBS",
    "DAY",
    "DETERMINER",
    "DIGITS",
    "GENERIC_HEADS",
    "MODIFIERS",
    "MONEY",
    "NAME",
    "NOT_AFTER_PREPOSITION",
    "NUMBER",
    "NUMBER_WORDS",
    "PARTNER_ROLES",
    "PHONES",
    "PREPOSITIONS",
    "PRONOUNS",
    "RACES",
    "RACE_KINDS",
    "ROLES",
    "ROLE_HEADS",
    "SCHOOL",
    "STOP_ATTRIBUTES",
    "SUBJECT",
    "TYPED",
    "WEEKDAY",
]

NUMBER_WORDS = {
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
ADJECTIVES = (
    r"(?:different|other|separate|little|more|new|main|big|small|few|extra|additional|key|"
    r"major|great|good|best|top|simple|easy|quick|important|common|basic|similar|large|"
    r"times|ways|steps|tips|ideas|things|options|examples|reasons|types|kinds|of)"
)
DIGITS = r"\d{1,3}(?:,\d{3})+|\d{1,7}"
NUMBER = r"(?P<n>" + DIGITS + "|" + "|".join(NUMBER_WORDS) + r")"
# Verbs that say a value changed ("switched to", "bumped the rent to").
CHANGE_VERBS = (
    r"(?:switched|moved|changed|migrated|upgraded|downgraded|dropped|raised|lowered|cut|"
    r"reduced|increased|bumped|pushed|rescheduled|updated|brought)"
)
# Typed values: what a stated quantity, date, time or version looks like in running text.
MONEY = r"[$€£¥]\s?(?:" + DIGITS + r")(?:\.\d+)?(?:\s?(?:k|m|million|billion|thousand)\b)?"
_MONTH = (
    r"(?-i:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|"
    r"Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)"
)
WEEKDAY = r"(?-i:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)s?"
DAY = (
    r"(?:(?:" + WEEKDAY + r"),? )?" + _MONTH + r"\.? \d{1,2}(?:st|nd|rd|th)?\b(?!:)"
    r"|" + WEEKDAY
)
_CLOCK = r"\d{1,2}:\d{2}(?:\s?[ap]\.?m\b\.?)?|\d{1,2}\s?[ap]\.?m\b\.?"
_VERSION = r"(?-i:[A-Z][\w+#-]*)(?: (?-i:[A-Z][\w+#-]*))? v?\d+(?:\.\d+)*\b"
TYPED = "(?:" + "|".join((MONEY, _CLOCK, DAY, _VERSION)) + ")"
# Type lexicons: values whose kind names the attribute they are a value of.
PHONES = r"(?-i:iPhone|Pixel|Galaxy|OnePlus|Xperia|Fairphone|Motorola|Nokia|Xiaomi|Huawei)"
SCHOOL = (
    r"(?-i:(?:UC|CU|SUNY|CUNY|Cal) [A-Z][\w-]+|University of [A-Z][\w-]+(?: [A-Z][\w-]+)?|"
    r"[A-Z][\w-]+(?: [A-Z][\w-]+){0,2} (?:University|College|State|Institute|Tech|Polytechnic))"
)
RACES = r"Marathon|Half Marathon|Half|Triathlon|Ultra|Ironman|10K|5K"
RACE_KINDS = frozenset({"marathon", "half_marathon", "half", "triathlon", "ultra", "ironman"})
# A partner is one slot whatever the word: a boyfriend becomes a fiancé, then a husband.
PARTNER_ROLES = frozenset(
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
# Roles a person holds for the speaker ("my dentist is Dr. Patel"), as the table names them;
# `ROLE_HEADS`: their head nouns, the attribute of a claim whose value is a person.
ROLES = (
    *("manager", "boss", "accountant", "primary care doctor", "doctor", "dentist", "therapist"),
    *("landlord", "property manager", "boyfriend", "girlfriend", "partner", "husband", "wife"),
    *("fiancée?", "lawyer", "coach", "tutor", "mentor", "vet", "realtor"),
)
ROLE_HEADS = frozenset(role.split()[-1].rstrip("?") for role in ROLES) | PARTNER_ROLES
NAME = r"(?-i:(?:Dr\. |Team )?[A-Z][\w'&.-]*(?: [A-Z][\w'&.-]*){0,3})"
# A noun phrase naming what a value belongs to ("catering budget", "primary database region",
# "escalations for the payments service"); its head is found by `_attribute`.
_NOT_NOUN = r"(?!(?:and|but|so|or|the|a|an|my|our|your|his|her|their|with|i|we|you|it)\b)"
_NOT_INNER = r"(?!(?:and|but|so|or|my|our|your|his|her|their|with|i|we|you|it)\b)"
SUBJECT = (
    r"(?P<attr>"
    + _NOT_NOUN
    + r"[a-z][\w'-]*(?: "
    + _NOT_INNER
    + r"(?:[a-z][\w'-]*|(?-i:[A-Z][\w-]*)))"
    r"{0,5}?)"
)
# A determiner opening the subject; not one after a preposition, whose noun is the object of
# that preposition ("the gym near my office is closed": the gym's state, not the office's).
NOT_AFTER_PREPOSITION = "".join(
    rf"(?<!\b{word} )"
    for word in ("near", "at", "in", "on", "by", "of", "from", "behind", "to", "for")
)
DETERMINER = (
    r"(?:^|(?<=[,:;] )|"
    + NOT_AFTER_PREPOSITION
    + r"\b(?:my|our|your|the|his|her|their|and|so|then) )"
)
PREPOSITIONS = frozenset(
    {"in", "at", "for", "on", "of", "with", "from", "to", "by", "since", "about", "off", "into"}
)
PRONOUNS = frozenset(
    {"i", "me", "we", "us", "you", "he", "she", "they", "him", "her", "and", "it", "its"}
)
STOP_ATTRIBUTES = frozenset(
    {
        *("it", "this", "that", "these", "those", "there", "here", "them", "which", "what"),
        *("one", "ones", "thing", "things", "way", "time", "have", "has", "be", "do", "get"),
        # When, not what: "moved to Denver last month" names no attribute "last".
        *("last", "next", "ago", "today", "yesterday", "tomorrow", "recently", "now"),
        # How often, not what: "like I usually do on Sundays".
        *("usually", "always", "often", "sometimes", "normally", "typically", "generally"),
    }
)
# Words that qualify an attribute without naming it ("the final base", "our weekly deploy").
MODIFIERS = frozenset(
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
ARTICLES = frozenset({"the", "a", "an", "new", "current", "old"})
# Heads that say what kind of value an attribute holds rather than whose: "catering budget" is
# the catering's, "new_checkout feature flag" is new_checkout's, "seller account on Craftly"
# is Craftly's.
GENERIC_HEADS = frozenset(
    {
        "budget",
        "type",  # "my skin type", "my hair type": the skin's, the hair's
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
