"""The part of a sentence that states something, or none: hedges, negations, reported speech
and requests state nothing; a question states only its premise."""

from __future__ import annotations

import re

from gateway.core.extraction.patterns import PROCEDURES

__all__ = ["HEDGE", "HEDGE_NOT_INTENT", "SUBORDINATE", "judged"]

# Intentions are facts about a plan ("I'm going to learn Italian", "we're planning a trip"):
# these words hedge everything except an intent pattern.
_INTENT_WORDS = r"plan to|planning to|going to"
_HEDGES = (
    r"maybe|perhaps|might|probably|possibly|likely|i think|i guess|not sure|thinking about|"
    r"thinking of|considering|wondering|if|would|could|should|hoping|hope to"
)
HEDGE = re.compile(r"\b(" + _HEDGES + r"|want to|wants to|" + _INTENT_WORDS + r")\b", re.IGNORECASE)
HEDGE_NOT_INTENT = re.compile(r"\b(" + _HEDGES + r")\b", re.IGNORECASE)
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
# Where a sentence's main clause ends: a hedge or a negation after it qualifies a subordinate
# clause, not what the sentence states.
SUBORDINATE = re.compile(
    r",| so | because | but | since | which | until | unless | though | and (?=i\b|we\b|it\b)",
    re.IGNORECASE,
)


def judged(sentence: str) -> str | None:
    """The part of `sentence` that states something, or None when nothing does. Hedges and
    negations are judged in the main clause: "Auto-renew is turned on so I don't lose it"
    states a fact. "Never deploy on Fridays" is a rule, not a negation. A question states only
    its premise ("Now that I'm in Pittsburgh, ...?")."""
    if sentence.endswith("?"):
        premise = _PREMISE.match(sentence)
        return premise.group("premise") if premise else None
    main = SUBORDINATE.split(sentence, maxsplit=1)[0]
    rule = PROCEDURES[0].regex.search(sentence) is not None
    if (
        _REPORTED.search(sentence)
        or (_NEGATED.search(main) and not rule)
        or _NOT_FACT_WORDS.search(sentence)
        or HEDGE_NOT_INTENT.search(main)
    ):
        return None
    return sentence
