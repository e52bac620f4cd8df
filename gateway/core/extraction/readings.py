"""What each version of the `rules` extractor reads beyond the statements (`generalized`): how a
sentence introduces its speaker, how a message is signed, whose words are the speaker's own.
A version's reading is a value, so that every version kept for exact replay reads as it did."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

from gateway.core.extraction import (
    introducing,
    introducing_more,
    introductions,
    own_words,
    signatures,
)

__all__ = ["FIRST_READING", "SECOND_READING", "THIRD_READING", "Introduce", "Reading"]

# A sentence, the one before it, and whether it asks: the claims it introduces the speaker by.
Introduce = Callable[[str, str, bool], dict[str, str]]


@dataclasses.dataclass(frozen=True, slots=True)
class Reading:
    """What a version reads beyond the statements: a sentence (after the one before it) to the
    identity claims it introduces the speaker by (`introduce`), and, with `account_plan`, the
    speaker's plan by a name as the account's (`account.plan`)."""

    introduce: Introduce
    # A user's message signed in its last sentence (of several, or not): the claims it signs
    # with.
    sign: Callable[[str, bool], dict[str, str]] | None = None
    account_plan: bool = False
    # An identity fact states its own clause, up to its value ("I'm a backend engineer" of
    # "I'm a backend engineer on the Payments team"), never a neighbour's value, which may be
    # superseded while the identity holds.
    clause_content: bool = False
    # Introductions read in a question too ("I'm a science teacher at Willow Creek Middle
    # School; can you give me a lab?"), which states nothing else: the introduction is the
    # speaker's statement whatever the sentence goes on to ask (`introducing.asked`).
    introduced_in_questions: bool = False
    # A user's message read for its signature (its text, its sentences), before its closing
    # line: a signature block below the body, or opening sentences that are one.
    signature: Callable[[str, Sequence[str]], dict[str, str]] | None = None
    # The speaker's own words of a turn's sentences: none quoted (across sentences too), none
    # after a forwarded message's marker or a role-play's announcement.
    own_words: Callable[[Sequence[str]], list[str]] | None = None


FIRST_READING = Reading(introductions.introduced)  # rules/2026-12-05.1
SECOND_READING = Reading(  # rules/2026-12-06.1
    introducing.introduced,
    introducing.signed,
    account_plan=True,
    clause_content=True,
    introduced_in_questions=True,
)
THIRD_READING = Reading(  # rules/2026-12-06.2
    introducing_more.introduced,
    introducing_more.signed,
    account_plan=True,
    clause_content=True,
    introduced_in_questions=True,
    signature=signatures.signature,
    own_words=own_words.own_words,
)
