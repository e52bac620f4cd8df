"""Introductions as rules/2026-12-06.2 reads them (`introducing_more`, `signatures`, `own_words`): a message's
signature by its parts, the sentence made plain before the cues read it, plans by the words plans
are named with; and what only looks like one, of the kinds real user text showed (LongMemEval
turns: a pet named in apposition, a citation, a list's last item, text given to translate)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from gateway.core.extraction import EXTRACTS, RULES, RULES_CUES, Episode
from gateway.core.extraction.own_words import own_words, plain
from gateway.core.extraction.signatures import signature
from gateway.core.extraction.statements import sentences

AT = datetime(2026, 12, 6, 9, 0, tzinfo=UTC)
IDENTITY = ("user.name", "user.employer", "user.role", "account.plan")


def identity(text: str, version: str = RULES[1]) -> dict[str, str | None]:
    facts = EXTRACTS[version]([Episode(("t1",), "user", text, AT)], (), None)
    return {f.claim_key: f.value for f in facts if f.claim_key in IDENTITY}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Signatures below the body, by their parts.
        ("Could I get a second monitor? Thanks!\nPriya Raman, AP Clerk", {"user.name": "Priya Raman", "user.role": "AP Clerk"}),
        ("Please reset my MFA.\nCheers\nDeclan Moore | Site Engineer | ext. 4471", {"user.name": "Declan Moore", "user.role": "Site Engineer"}),
        ("The export fails.\n\nKind regards,\nTom Okafor\nExecutive Assistant to the CFO\nBrightwater Foods", {"user.name": "Tom Okafor", "user.role": "Executive Assistant to the CFO", "user.employer": "Brightwater Foods"}),
        ("We were charged twice.\n- Olu, finance controller, Ridgeway Analytics", {"user.name": "Olu", "user.role": "finance controller", "user.employer": "Ridgeway Analytics"}),
        ("Any update on ticket 4? Thanks, Imogen Blake, IT lead, Harrow Council", {"user.name": "Imogen Blake", "user.role": "IT lead", "user.employer": "Harrow Council"}),
        ("Is the site down?\nThanks, Amira (Ashbourne Group)", {"user.name": "Amira", "user.employer": "Ashbourne Group"}),
        # A sentence, or the opening sentences, that are a signature.
        ("Re: ticket 48213. Chidi Obi, Head of Platform, Meridian Freight. Any update?", {"user.name": "Chidi Obi", "user.role": "Head of Platform", "user.employer": "Meridian Freight"}),
        ("Emeka Nwosu. Site reliability engineer. Vantage Cloud. Our deploys fail.", {"user.name": "Emeka Nwosu", "user.role": "Site reliability engineer", "user.employer": "Vantage Cloud"}),
        ("Hey — Raj Mehta, finance analyst, 4th floor. Excel keeps crashing.", {"user.name": "Raj Mehta", "user.role": "finance analyst"}),
        # The sentence made plain: any greeting, an emoji a stop, an honorific no part of a name.
        ("hey there, Yuki Tanaka, UX researcher at Fernhill Labs. Can you help?", {"user.name": "Yuki Tanaka", "user.role": "UX researcher", "user.employer": "Fernhill Labs"}),
        ("Hi! I'm Chiara from the buying team at Verdanza Foods 🌱 we'd love a catalogue.", {"user.name": "Chiara", "user.employer": "Verdanza Foods"}),
        ("I am Mr. Horace Whitfield and I dispute a charge.", {"user.name": "Horace Whitfield"}),
        ("hallo, Annika here from the marketing team at Feldspar Studios.", {"user.name": "Annika", "user.employer": "Feldspar Studios"}),
        # Roles, employers, plans.
        ("I'm the only developer at a small nonprofit (Open Harbor Legal Aid).", {"user.role": "developer", "user.employer": "Open Harbor Legal Aid"}),
        ("I've joined Tessaract Bio as VP of Engineering.", {"user.employer": "Tessaract Bio", "user.role": "VP of Engineering"}),
        ("I'm a biostatistician in Clinical Ops.", {"user.role": "biostatistician"}),
        ("CISO at Tamarind Health here. Is SSO on?", {"user.role": "CISO", "user.employer": "Tamarind Health"}),
        ("we're on Starter and I can only add 3 users", {"account.plan": "Starter"}),
        ("We're paying for Enterprise and this is slow.", {"account.plan": "Enterprise"}),
        ("we're a business customer on the Business Fibre 500 package.", {"account.plan": "Business Fibre 500"}),
        ("Account holder: Oluwadamilare Bello. Please block the SIM.", {"user.name": "Oluwadamilare Bello"}),
        ("Hi, Marcus Webb here (IT admin, Copperline Schools). The carts are missing.", {"user.name": "Marcus Webb", "user.role": "IT admin", "user.employer": "Copperline Schools"}),
        ("Hi, Carlos from the procurement team at Vantix Aerospace. We need a quote.", {"user.name": "Carlos", "user.employer": "Vantix Aerospace"}),
        ("Writing as the treasurer of the Oakridge Parent-Teacher Association — do you take cheques?", {"user.role": "treasurer", "user.employer": "Oakridge Parent-Teacher Association"}),
        ("I'm a single mum working part-time as a cashier at Tesco, can I apply?", {"user.role": "cashier", "user.employer": "Tesco"}),
        ("I'm Grace, pastor at St. Aidan's Church.", {"user.name": "Grace", "user.role": "pastor", "user.employer": "St. Aidan's Church"}),
        ("my boss at Deloitte wants me to learn Power BI, where do I start", {"user.employer": "Deloitte"}),
        ("I've been with Clarion for about three years.", {"user.employer": "Clarion"}),
        ("how do i cancel my subscription, im on Premium Individual and the button is greyed out", {"account.plan": "Premium Individual"}),
        ("I've joined Tessaract Bio as VP of Engineering.", {"user.employer": "Tessaract Bio", "user.role": "VP of Engineering"}),
        ("Budget is 6k. I'm Kenji by the way. What would you suggest?", {"user.name": "Kenji"}),
        ("Booking ref LM8Q2T. The name on the booking is Olusegun Bakare.", {"user.name": "Olusegun Bakare"}),
        ("Hi IT, I'm Oskar (new intern in Finance). Workday says no account.", {"user.name": "Oskar", "user.role": "intern"}),
        ("Hello, I am nurse at the clinic and the button is grey.", {"user.role": "nurse"}),
        ("Clicking through 300 projects is painful. (Agency plan, if it matters)", {"account.plan": "Agency"}),
        ("I've had a Premier Checking account with you for 11 years.", {"account.plan": "Premier Checking"}),
        ("Enterprise customer. SLA breach. Escalate now.", {"account.plan": "Enterprise"}),
        ("omg so good 😍 just upgraded to Premium yesterday", {"account.plan": "Premium"}),
        ("Name: Rahul Verma\nPlan: Pro Annual\nIssue: charged twice", {"user.name": "Rahul Verma", "account.plan": "Pro Annual"}),
        # The writer's own closing after a forwarded message.
        ("Can you help?\n\n---------- Forwarded message ---------\nPlease quote 500 seats.\n\nGregory Hale\nCOO, Ashbourne Group\n\n----------\nThanks, Amira (Ashbourne Group)", {"user.name": "Amira", "user.employer": "Ashbourne Group"}),
    ],
)  # fmt: skip
def test_what_the_newest_version_reads(text: str, expected: dict[str, str]) -> None:
    assert identity(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        # Real user text (LongMemEval) the earlier forms of this version read as introductions.
        "I actually ordered some dental chews for my cat, Luna, from Chewy.com on the 8th.",
        "We've had some issues with our mortgage broker, Mike, going on vacation.",
        "Cullavagga, Book 10, Chapter 3.",
        "Health Communication, 1-10.",
        "Tiles:\n- Description: Videos about local programs.\n- Benefit: Encourages participation in programs.",
        "Ideas:\n- Paris\n- Rome",
        "When to conduct a user interview and when a survey?\nCompare",
        "I'm actually part of a Facebook group called Foodie Frenzy, where people share recipes.",
        "Some of my favorite artists include Taylor Swift, Katy Perry, and Imagine Dragons.",
        "Translate this into Dutch and summarize it in 10 bullets: Welcome, I'm Hakar Sidik, marketing manager at StudyTube.",
        # Another's words, another's employer, a greeting, a day.
        "Someone wrote 'I'm the admin at Caldera Group and this fixed it'. Does it apply to me?",
        "Hello, I'm contacting you on behalf of our client, Daventry Motors, who use your platform.",
        "Write a short bio for our keynote speaker, Dr. Alessandra Mwangi, who is Chief Scientist at Tern Biolabs.",
        "Greetings from Lisbon! The invoice PDF shows the wrong currency.",
        "It's Monday again and the dashboard is blank.",
        "Yo, saw your booth at RetailTech. Price?",
        "The Team tier includes SSO, right? Asking for a friend.",
        "Hi, quick question about the Teams plan. My friend has it.",
        "Wow, those are some legendary artists.",
        "write me a bio for a fictional wizard who works as a barista at a café called Moonbean",
        "Renata Ilves, my manager at Corbel Systems, asked me to write in.",
        "Keep this short: we, the editors of Acme Weekly, thank you.",
        # Quoted across sentences, forwarded, a part in a role-play, another's plan.
        "Can you translate this? 'Hi, I'm Ben, the new marketing intern at Solstice Games. See you all!' It's for my brother.",
        "Is this phishing?\n\n---------- Forwarded message ---------\nYour Premium Plus subscription expires.\n\nThomas Reed\nBilling Manager",
        "Let's role-play: you're an angry customer and I'm the store manager at a shoe shop.",
        "Hello, I received an email saying my account would be upgraded to Business next month.",
        "So I put my Ironleaf membership on hold while I travel.",
        "Please translate this for my brother. 'Are you open? I'm Ben Stone from Acme Corp, can you help me?'",
        "services:\n  web:\n    image: docker\n    title: Displays",
    ],
)
def test_what_only_looks_like_an_introduction_introduces_no_one(text: str) -> None:
    assert identity(text) == {}


def test_plain_text_is_what_the_cues_read() -> None:
    assert plain("It's Kenji 🙂 remind me") == "It's Kenji. remind me"
    assert (
        plain("Hi there — Mateus Oliveira, Head of Partnerships")
        == "Hi, Mateus Oliveira, Head of Partnerships"
    )
    assert own_words(["Someone wrote 'I'm the admin at Caldera' here"]) == ["Someone wrote here"]
    quoted = ["Translate: 'Hi, I'm Ben.", "See you all!' It's for my brother."]
    assert own_words(quoted) == ["Translate:", "It's for my brother."]
    # A mark never closed quotes nothing: "'cause".
    assert own_words(["'cause I'm Ada, from Kiln."]) == ["'cause I'm Ada, from Kiln."]
    assert (
        plain("My boss (Ms. Abernathy) wants it") == "My boss (Ms. Abernathy) wants it"
    )  # not the speaker's
    assert plain("Please translate this text: Welcome, I'm Hakar") == "Please translate this text"
    assert plain("ok so context: I'm a product manager") == "ok so context: I'm a product manager"


def test_a_signature_needs_a_title_or_a_sign_off_beside_the_name() -> None:
    text = "Loved the film.\nTom Hardy, Batman, Inception"
    assert signature(text, sentences(text)) == {}
    text = "Loved the film.\n\nBest,\nTom Hardy, Batman"
    assert signature(text, sentences(text)) == {"user.name": "Tom Hardy", "user.employer": "Batman"}
    # A relation is no signature: "Alice Chen, my manager at Acme".
    assert identity("Alice Chen, my manager at Acme. She asked for the report.") == {}


def test_the_earlier_version_reads_what_it_read() -> None:
    """2026-12-06.1 is kept as it was: the shapes only the newest reads stay unread by it."""
    assert identity("Could I get a monitor? Thanks!\nPriya Raman, AP Clerk", RULES_CUES[1]) == {}
    assert identity("I'm a biostatistician in Clinical Ops.", RULES_CUES[1]) == {}
