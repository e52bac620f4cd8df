"""bench introductions: a message's identity claims scored against what it states."""

from __future__ import annotations

from bench.introductions import Message, changed, scored
from gateway.core.extraction import RULES, RULES_STRUCTURE

DANA = {"user.name": "Dana Scully", "user.employer": "Umbrella Corp."}
MESSAGES = [
    Message("m1", "Dana Scully from Umbrella Corp here.", DANA),
    Message("m2", "Hi, I'm Bob from Denver. We're on the Pro plan.", {"user.name": "Bob", "account.plan": "Pro"}),
    Message("m3", "Hi, Alice Chen, my manager at Acme, asked me to write.", {}),
]  # fmt: skip


def test_claims_are_right_by_value_and_traps_count_when_they_give_one() -> None:
    newest = scored(MESSAGES, RULES[1])
    # m1 read whole (the trailing period aside); m2's place read as an employer: found, not right.
    assert newest.row(["user.name"]) == (2, 2, 2)
    assert newest.row(["user.employer"]) == (1, 2, 1)
    assert newest.row(["account.plan"]) == (1, 1, 1)
    assert (newest.traps, newest.traps_fired) == (1, 0)
    earlier = scored(MESSAGES, RULES_STRUCTURE[1])
    assert earlier.row(["user.name"]) == (2, 2, 1)  # m1 not read; m3's Alice taken for the speaker
    assert (earlier.traps, earlier.traps_fired) == (1, 1)


def test_real_text_counts_the_claims_only_one_version_makes() -> None:
    texts = ["I plan to swim laps three times a week.", "Dana Scully from Umbrella Corp here."]
    gone, added = changed(texts, RULES_STRUCTURE[1], RULES[1])
    assert dict(gone) == {("account.plan", "I"): 1}
    assert [claim for claim, _ in added] == [
        ("user.employer", "Umbrella Corp"),
        ("user.name", "Dana Scully"),
    ]
