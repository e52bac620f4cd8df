"""Names as values (`gateway.core.extraction.named_values`): the claim a name's change is of,
read from the kind of value a known claim holds, and only from a change the speaker states."""

from __future__ import annotations

import pytest

from gateway.core.extraction.named_values import NamedClaim, named_change, named_claims

KNOWN = {
    "user.location": "Austin",
    "account.plan": "Basic",
    "user.dentist": "Dr. Patel",
    "user.manager": "Priya",
    "user.diet": "vegetarian",
}


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("Upgraded to Premium yesterday, the 4K was worth it.", NamedClaim("account.plan", "Premium")),
        # The value it had is not the new one.
        ("Switched from Basic to Premium last week.", NamedClaim("account.plan", "Premium")),
        ("We relocated to Portland in the spring now that the job is remote.", NamedClaim("user.location", "Portland")),
        # Two known claims of one kind (a dentist and a manager are people): the one named.
        ("Switched dentists, I see Dr. Okafor now.", NamedClaim("user.dentist", "Dr. Okafor")),
        ("We got a new manager after the reorg, Marcus runs the team now.", NamedClaim("user.manager", "Marcus")),
    ],
)  # fmt: skip
def test_a_names_change_is_of_the_known_claim_of_its_kind(
    sentence: str, expected: NamedClaim
) -> None:
    assert named_change(sentence, "user", KNOWN) == expected


@pytest.mark.parametrize(
    "sentence",
    [
        "Upgraded to Premium yesterday.",  # said by the assistant: see the role below
        "My sister upgraded to Premium yesterday.",
        "I'm thinking of upgrading to Premium.",
        "Premium or Pro, I switched twice now.",  # two new names: which holds is not said
        "I see Dr. Okafor for my teeth.",  # no change stated
        "I see Dr. Okafor now.",  # two known people (a dentist, a manager), neither named
        "Marcus started a new project with us now.",  # a bare name, no role named
        "My brother just moved to Denver.",
        "We moved the meeting to Friday now.",  # a day is no person
    ],
)
def test_no_claim_changes_without_the_speakers_stated_change(sentence: str) -> None:
    role = "assistant" if sentence == "Upgraded to Premium yesterday." else "user"
    assert named_change(sentence, role, KNOWN) is None


def test_a_diet_the_speaker_keeps_is_their_diet_however_it_is_said() -> None:
    said = [
        "I'm vegetarian, so no meat recipes please.",
        "I've gone vegan this year.",
        "We're mostly plant-based now.",
        "I became pescatarian after the documentary.",
    ]
    assert [list(named_claims(s, "user")) for s in said] == [
        [NamedClaim("user.diet", value)]
        for value in ("vegetarian", "vegan", "plant-based", "pescatarian")
    ]
    for other in ("My wife is vegan.", "A vegan menu sounds fun.", "I might go keto."):
        assert list(named_claims(other, "user")) == [], other
    assert list(named_claims("I'm vegetarian.", "assistant")) == []


def test_a_change_announced_in_the_sentence_before_is_read_with_it() -> None:
    before = "The billing mess never got sorted, so I switched dentists."
    assert named_change("Dr. Lindqvist did my crown prep yesterday.", "user", KNOWN, before) == (
        NamedClaim("user.dentist", "Dr. Lindqvist")
    )
    # Without the role named, a person is of no known claim: people hold many roles.
    assert named_change("Dr. Lindqvist did my crown prep.", "user", KNOWN, "So I switched.") is None
    partner = {"user.partner": "Sam"}
    advisor = "I took a photo with my thesis advisor, Dr. Smith, at graduation."
    assert named_change(advisor, "user", partner, "We have news now.") is None


def test_an_events_day_moves_when_the_event_is_named_with_the_move() -> None:
    known = {"user.defense": "May 30", "user.tonsillectomy": "June 27"}
    pushed = "plot twist: a committee member has a conflict so my defense got pushed to June 24."
    assert named_change(pushed, "user", known) == NamedClaim("user.defense", "June 24")
    # Whoever moves it: the event's day is the event's.
    moved = "The surgeon's office called, they had to move Wren's tonsillectomy to July 11."
    assert named_change(moved, "user", known) == NamedClaim("user.tonsillectomy", "July 11")
    # Another event moved, or the event named without a move, changes nothing.
    assert named_change("My flight got pushed to June 24.", "user", known) is None
    assert named_change("My defense practice run is on June 2.", "user", known) is None
