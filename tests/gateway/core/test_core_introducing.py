"""Introductions read by the cues of rules/2026-12-06.1 (`gateway.core.extraction.introducing`),
through the default extractor, which reads them too (2026-12-06.2: `test_core_introducing_more`):
the cues that tie a name, an organization, a role or a plan to the speaker; what only looks like
one stays apart (the traps below are of the kinds real user text showed)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from gateway.core.extraction import Episode, extract
from gateway.core.extraction.introducing import asked, introduced

AT = datetime(2026, 12, 6, 9, 0, tzinfo=UTC)
IDENTITY = ("user.name", "user.employer", "user.role", "account.plan")


def identity(text: str) -> dict[str, str | None]:
    facts = extract([Episode(("t1",), "user", text, AT)])
    return {f.claim_key: f.value for f in facts if f.claim_key in IDENTITY}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Hi, I'm Søren Ødegård from Fjordline AS.", {"user.name": "Søren Ødegård", "user.employer": "Fjordline AS"}),
        ("it's Maeve O'Shaughnessy-Lin from payroll at Brightwater Ltd.", {"user.name": "Maeve O'Shaughnessy-Lin", "user.employer": "Brightwater Ltd"}),
        ("Ravi Iyer (Northgate Freight) here, the tracking page is blank.", {"user.name": "Ravi Iyer", "user.employer": "Northgate Freight"}),
        ("Hello, I'm Lena Fox, Head of Finance at Orrin & Pike.", {"user.name": "Lena Fox", "user.role": "Head of Finance", "user.employer": "Orrin & Pike"}),
        ("Good afternoon. Tobias Wren, senior buyer at Calder Mills.", {"user.name": "Tobias Wren", "user.role": "senior buyer", "user.employer": "Calder Mills"}),
        ("I'm the office manager at Birchwood Dental and we're on the Plus plan.", {"user.role": "office manager", "user.employer": "Birchwood Dental", "account.plan": "Plus"}),
        ("I work at Halcyon Labs as a QA engineer.", {"user.employer": "Halcyon Labs", "user.role": "QA engineer"}),
        ("I'm writing from Marigold Events; our Team tier seems to have lost two seats.", {"user.employer": "Marigold Events", "account.plan": "Team"}),
        ("Premium member here, the export button does nothing.", {"account.plan": "Premium"}),
        ("Kind regards, Ingrid Solberg", {"user.name": "Ingrid Solberg"}),
        ("I'm a pediatric nurse and my shifts keep changing.", {"user.role": "pediatric nurse"}),
        ("I'm the new payroll coordinator (second week!).", {"user.role": "payroll coordinator"}),
        ("Hey, Anika from legal here, quick one about the NDA template.", {"user.name": "Anika"}),
        ("I run a tiny bike shop called Spoke & Chain in Hull.", {"user.employer": "Spoke & Chain"}),
        ("Big news: I start at Quarry Lane Studios next month!", {"user.employer": "Quarry Lane Studios"}),
    ],
)  # fmt: skip
def test_an_introduction_is_read_by_its_cues(text: str, expected: dict[str, str]) -> None:
    assert identity(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "I plan to swim laps three times a week.",
        "Listen here, I don't have time for this.",
        "We are here to help you find what you need.",
        "Paul Reid, the director of Tollbridge, is said to have resigned.",
        "Plus, I've been experimenting with Thai recipes at home.",
        "I'm a big fan of Belgian beers.",
        "The UK is no longer an EU member state.",
        "To account for the difference, we used the median.",
        "Thanks, Bob",
        "Hi Sam, thanks for the quick reply.",
        "I'd love feedback on my writing from Rachel.",
        "I head to the office at 9:00 most days.",
        "Can I switch to the Pro plan?",
        "If we upgraded to the Enterprise tier, would we get SSO?",
        "My colleague Jonas Berg from Acme will join the call.",
        "Hi, Alice Chen, my manager at Acme, asked me to write.",
        "Cold weather is here, any tips for the garden?",
        "We've got tired legs here, any stretches?",
        "I started Monday and I'm still lost.",
    ],
)
def test_what_only_looks_like_an_introduction_introduces_no_one(text: str) -> None:
    assert identity(text) == {}


def test_a_question_states_the_introduction_before_it_asks() -> None:
    text = "I'm a line cook at Saffron Row; can you help me price a tasting menu?"
    assert identity(text) == {"user.role": "line cook", "user.employer": "Saffron Row"}
    assert asked("We're on the Growth tier and considering Scale, so what changes?") == (
        "We're on the Growth tier and "
    )
    # A plan said held in a relative clause counts, in a question too.
    assert introduced("Is the Basic plan I'm on enough for 3 logins?", asking=True) == {
        "account.plan": "Basic"
    }
    # A signature is a whole sentence; what a question states before it asks is not one.
    assert introduced("Dana Reyes, the founder of Kiln, is that right?", asking=True) == {}


@pytest.mark.parametrize(
    "text",
    ["I'm a big believer in code review.", "I'm a night owl, sadly.", "I'm a vegetarian."],
)
def test_a_role_said_alone_is_read_only_by_a_job_titles_head(text: str) -> None:
    assert identity(text) == {}


def test_an_identity_fact_states_its_own_clause_not_a_neighbours_value() -> None:
    """A role outlives the team said beside it: its fact must not restate the team."""
    [team, role] = extract(
        [Episode(("t1",), "user", "I'm a backend engineer on the Payments team.", AT)]
    )
    assert (team.claim_key, role.claim_key) == ("user.team", "user.role")
    assert role.content.endswith("I'm a backend engineer") and "Payments" not in role.heading


def test_a_new_employer_told_as_a_start_is_the_older_ones_claim() -> None:
    """One claim key, so compile's supersession retires the older employer."""
    facts = extract(
        [
            Episode(("t1",), "user", "I'm a dispatcher at Quillmark Logistics.", AT),
            Episode(
                ("t2",),
                "user",
                "I start at Fernhollow Analytics on December 4th!",
                AT + timedelta(days=30),
            ),
        ]
    )
    employers = [(f.sources[0], f.value) for f in facts if f.claim_key == "user.employer"]
    assert employers == [("t1", "Quillmark Logistics"), ("t2", "Fernhollow Analytics")]


def test_a_message_signed_in_its_last_line_is_the_signers() -> None:
    signed = "The invoice shows two seats twice. Can you fix it?\n\nThanks,\nMarta Kowal\nOps Lead\nBrindle Foods"
    assert identity(signed) == {
        "user.name": "Marta Kowal",
        "user.role": "Ops Lead",
        "user.employer": "Brindle Foods",
    }
    assert identity("The export fails again.\n\nDr. Tomas Ruiz\nClinic Director") == {
        "user.name": "Tomas Ruiz",
        "user.role": "Clinic Director",
    }
    assert identity("Please stop the emails.\n— Odile") == {"user.name": "Odile"}
    # Alone, "Thanks, Bob" thanks Bob; and a line opening with "Best" is no sign-off.
    assert identity("Thanks, Bob") == {}
    assert identity("Here is my list. Best Budget Laptop Picks") == {}


def test_a_sign_off_names_the_speaker_in_the_sentence_after_it() -> None:
    assert introduced("Priya Raman", before="Regards,") == {"user.name": "Priya Raman"}
    assert introduced("Priya Raman", before="See you soon.") == {}
