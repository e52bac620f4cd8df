"""The assembler's second line of defence through real HTTP and a real PostgreSQL (issue 33):
two remembered turns stating different values of one claim, never compiled, reach the bundle
as the newer alone; the receipt records the decision (rule, both ids, score) and an exact replay
rebuilds the same bytes and the same decision; a value the policy hides decides nothing."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import pytest
from litestar.testing import TestClient

from gateway.core.versions import ASSEMBLER
from tests.conftest import Key, KeyFactory
from tests.gateway.core.test_core_replacing_turns import AFTER, BEFORE
from tests.gateway.sessions_helpers import append, context, open_session, receipt_body
from tests.gateway.test_policies_api import activate
from tests.gateway.test_policy_rendered_redaction import REDACT_EMAILS

ASK = {"task": "What is my monthly rent?", "namespaces": ["home"], "budget_tokens": 800}


LUNA = (
    "I've had Luna for about 6 months now, she loves the window seat.",
    "Luna is doing great, I've had her for about 9 months now.",
)


def said_in_sessions(
    client: TestClient[Any], agent: Key, *texts: str, said_at: Sequence[str] = ()
) -> list[str]:
    """Each text the user's turn of a session of its own in `home`, in order (said at the
    instants `said_at` gives, if any); their memories."""
    ids: list[str] = []
    for at, text in enumerate(texts):
        session_id = open_session(client, agent, namespace="home")["session_id"]
        turn = {"role": "user", "content": text} | ({"occurred_at": said_at[at]} if said_at else {})
        appended = client.post(
            f"/v1/sessions/{session_id}/turns", json={"turns": [turn]}, headers=agent.headers
        )
        assert appended.status_code == 200, appended.text
        ids.extend(appended.json()["memory_ids"])
    return ids


def replayed_exactly(client: TestClient[Any], auditor: Any, original: dict[str, Any]) -> str:
    """An exact replay of `original`'s receipt: identical bytes; the replay receipt's id."""
    replayed = client.post(
        f"/v1/receipts/{original['receipt_id']}/replay",
        json={"mode": "exact"},
        headers=auditor.headers,
    )
    assert replayed.status_code == 200, replayed.text
    result = replayed.json()
    assert result["identical"] is True, result["problems"]
    assert result["replayed"]["bundle_sha256"] == original["bundle_sha256"]
    return str(result["receipt_id"])


def test_the_older_value_is_left_out_recorded_and_replayed_exactly(
    client: TestClient[Any], make_key: KeyFactory
) -> None:
    agent = make_key(agent_id="helper", namespaces=("home",))
    auditor = make_key(role="auditor")
    rents = ("My monthly rent is $1,850.", "My landlord raised it, my rent is now $1,975.")
    stale, current = said_in_sessions(client, agent, *rents)

    original = client.post("/v1/context", json=ASK, headers=agent.headers).json()
    assert "$1,975" in original["bundle"] and "$1,850" not in original["bundle"]
    assert [m["memory_id"] for m in original["included"]] == [current]
    excluded = {e["memory_id"]: e for e in original["excluded"]}
    assert excluded[stale]["reason"] == "superseded_in_bundle"

    body = receipt_body(client, make_key, original["receipt_id"])
    assert body["assembler"]["version"] == ASSEMBLER.version
    [decision] = body["earlier_values"]
    assert decision["rule"] == "stated_value"
    assert (decision["current"], decision["earlier"]) == (current, stale)
    assert decision["claim_key"] == "user.rent"
    assert isinstance(decision["score"], str) and 0 < float(decision["score"]) < 1

    again = receipt_body(client, make_key, replayed_exactly(client, auditor, original))
    assert again["earlier_values"] == body["earlier_values"]
    assert again["excluded"] == body["excluded"]


REDACT_PHONES = REDACT_EMAILS.replace(b"redact-emails", b"redact-phones").replace(
    b"detectors: [email]", b"detectors: [phone]"
)


class Hidden(NamedTuple):
    """Two turns stating a changed value, and a policy that redacts both values."""

    policy: bytes
    marker: str
    stated: tuple[str, str]
    values: tuple[str, str]
    ask: str


HIDDEN = {
    "email": Hidden(
        REDACT_EMAILS,
        "[redacted:email]",
        ("My email is ann@example.com.", "I switched providers, my email is now bob@example.com."),
        ("ann@example.com", "bob@example.com"),
        "What is my email address?",
    ),
    "phone": Hidden(
        REDACT_PHONES,
        "[redacted:phone]",
        ("My phone number is 415-555-0134.", "New carrier, my phone number is now 415-555-0178."),
        ("415-555-0134", "415-555-0178"),
        "What is my phone number?",
    ),
}


@pytest.mark.parametrize("case", HIDDEN.values(), ids=HIDDEN.keys())
def test_a_value_the_policy_hides_decides_nothing(
    client: TestClient[Any], make_key: KeyFactory, case: Hidden
) -> None:
    """Two turns state different values, and the policy redacts them: the defence reads the
    turns as the agent is shown them, where both state the one marker, so neither is left out;
    the agent learns nothing of the hidden values, not even that they differ, and an exact replay
    rebuilds the same. Without the rule the same turns are decided (the stored text is readable,
    so the decision is too)."""
    agent = make_key(agent_id="helper", namespaces=("home",))
    admin = make_key(role="admin")
    stale, current = said_in_sessions(client, agent, *case.stated)
    question = {"task": case.ask, "namespaces": ["home"], "budget_tokens": 800}

    readable = client.post("/v1/context", json=question, headers=agent.headers).json()
    excluded = {e["memory_id"]: e["reason"] for e in readable["excluded"]}
    assert excluded.get(stale) == "superseded_in_bundle"

    activate(client, admin, case.policy, "enforce")
    hidden = client.post("/v1/context", json=question, headers=agent.headers).json()
    assert case.marker in hidden["bundle"]
    assert not any(value in hidden["bundle"] for value in case.values)
    assert {m["memory_id"] for m in hidden["included"]} == {stale, current}
    assert all(e["reason"] != "superseded_in_bundle" for e in hidden["excluded"])
    body = receipt_body(client, make_key, hidden["receipt_id"])
    assert body.get("earlier_values", []) == []
    auditor = make_key(role="auditor")
    again = receipt_body(client, make_key, replayed_exactly(client, auditor, hidden))
    assert again.get("earlier_values", []) == [] and again["excluded"] == body["excluded"]


def test_the_question_decides_what_no_claim_reads_and_replays_exactly(
    client: TestClient[Any], make_key: KeyFactory
) -> None:
    """ "How long have I had my cat?" asks for a span of time of the cat: of the user's turns
    that say one, the newest is current and the older is left out, though no claim of the
    extractor reads "had" (the stated-value rule decides nothing here); the receipt names the
    rule and the question's attribute, and an exact replay rebuilds both."""
    agent = make_key(agent_id="helper", namespaces=("home",))
    auditor = make_key(role="auditor")
    stale, current = said_in_sessions(client, agent, *LUNA)
    ask = {"task": "How long have I had my cat, Luna?", "namespaces": ["home"]}
    original = client.post(
        "/v1/context", json=ask | {"budget_tokens": 800}, headers=agent.headers
    ).json()
    assert "9 months" in original["bundle"] and "6 months" not in original["bundle"]
    excluded = {e["memory_id"]: e["reason"] for e in original["excluded"]}
    assert excluded[stale] == "superseded_in_bundle"
    body = receipt_body(client, make_key, original["receipt_id"])
    assert body["assembler"]["version"] == ASSEMBLER.version == "assemble/2026-12-06.5"
    [decision] = body["earlier_values"]
    assert (decision["rule"], decision["claim_key"]) == ("asked_value", "duration: cat luna")
    assert (decision["current"], decision["earlier"]) == (current, stale)

    again = receipt_body(client, make_key, replayed_exactly(client, auditor, original))
    assert again["earlier_values"] == body["earlier_values"]

    # A statement, not a question of a kind: both turns stay.
    told = client.post(
        "/v1/context",
        json=ask | {"task": "Tell me about Luna.", "budget_tokens": 800},
        headers=agent.headers,
    ).json()
    assert {m["memory_id"] for m in told["included"]} == {stale, current}


def test_a_session_step_reads_the_users_last_question(
    client: TestClient[Any], make_key: KeyFactory
) -> None:
    """A session step asks its memory part with the pinned task and the user's last turn: the
    question in that turn is read, the older answer is left out of the step's memories, the
    step's receipt records the decision, and an exact replay rebuilds the same text."""
    agent = make_key(agent_id="helper", namespaces=("home",))
    auditor = make_key(role="auditor")
    stale, current = said_in_sessions(client, agent, *LUNA)
    step = open_session(client, agent, namespace="home", task="Chat with the user.")
    asking = ("user", "Thanks! By the way, how long have I had my cat Luna?")
    assert append(client, agent, step["session_id"], asking).status_code == 200

    body = context(client, agent, step["session_id"], budget_tokens=2000).json()
    assert "9 months" in body["text"] and "6 months" not in body["text"]
    excluded = {e["memory_id"]: e["reason"] for e in body["memory"]["excluded"]}
    assert excluded[stale] == "superseded_in_bundle"
    receipt = receipt_body(client, make_key, body["receipt_id"])
    [decision] = receipt["memory"]["earlier_values"]
    assert (decision["rule"], decision["current"], decision["earlier"]) == (
        "asked_value",
        current,
        stale,
    )
    replayed = client.post(
        f"/v1/receipts/{body['receipt_id']}/replay",
        json={"mode": "exact"},
        headers=auditor.headers,
    )
    assert replayed.status_code == 200, replayed.text
    assert replayed.json()["identical"] is True, replayed.json()["problems"]


def test_a_question_asking_which_decides_by_a_name_said_as_a_change(
    client: TestClient[Any], make_key: KeyFactory
) -> None:
    """ "Which gym do I go to now?" asks for a name: the user's newer turn naming one in a
    sentence about the gym and saying a change is current, the older naming another is left
    out; a newer mention without a change word leaves both. The receipt names the question's
    attribute, and an exact replay rebuilds the decision."""
    agent = make_key(agent_id="helper", namespaces=("home",))
    auditor = make_key(role="auditor")
    stale, current = said_in_sessions(
        client,
        agent,
        "I go to Ironside Gym before work, leg day there is brutal.",
        "Cancelled that membership. I go to Kestrel Climbing Gym now, it has a sauna.",
    )
    ask = {"task": "Which gym do I go to now?", "namespaces": ["home"], "budget_tokens": 800}
    original = client.post("/v1/context", json=ask, headers=agent.headers).json()
    assert "Kestrel" in original["bundle"] and "Ironside" not in original["bundle"]
    excluded = {e["memory_id"]: e["reason"] for e in original["excluded"]}
    assert excluded[stale] == "superseded_in_bundle"
    body = receipt_body(client, make_key, original["receipt_id"])
    [decision] = body["earlier_values"]
    assert (decision["rule"], decision["claim_key"]) == ("asked_value", "name: go gym")
    assert (decision["current"], decision["earlier"]) == (current, stale)
    again = receipt_body(client, make_key, replayed_exactly(client, auditor, original))
    assert again["earlier_values"] == body["earlier_values"]

    # In another namespace, a newer mention that says no change: both stay.
    other = make_key(agent_id="helper", namespaces=("gym",))
    for text in (
        "I go to Ironside Gym before work.",
        "Tried a class at Kestrel Gym on Saturday.",
    ):
        session_id = open_session(client, other, namespace="gym")["session_id"]
        assert append(client, other, session_id, ("user", text)).status_code == 200
    both = client.post(
        "/v1/context", json=ask | {"namespaces": ["gym"]}, headers=other.headers
    ).json()
    assert "Kestrel" in both["bundle"] and "Ironside" in both["bundle"]


def test_a_question_answered_by_no_name_decides_by_a_sentence_read_whole(
    client: TestClient[Any], make_key: KeyFactory
) -> None:
    """ "What kind of schedule do I work at the library now?" is answered by "part-time", which
    no shape finds: the user's newer turn about the library saying a change is current, the
    older about it saying nothing else the newer says is left out; the receipt names the rule
    and the question's words, and an exact replay rebuilds the decision. Someone else's change
    leaves both."""
    agent = make_key(agent_id="helper", namespaces=("home",))
    auditor = make_key(role="auditor")
    stale, current = said_in_sessions(
        client,
        agent,
        "I'm full-time at the library so weekdays are basically gone.",
        "HR signed off! I'm going part-time at the library starting this month.",
    )
    task = "What kind of schedule am I working at the library now?"
    ask = {"task": task, "namespaces": ["home"], "budget_tokens": 800}
    original = client.post("/v1/context", json=ask, headers=agent.headers).json()
    assert "part-time" in original["bundle"] and "full-time" not in original["bundle"]
    excluded = {e["memory_id"]: e["reason"] for e in original["excluded"]}
    assert excluded[stale] == "superseded_in_bundle"
    body = receipt_body(client, make_key, original["receipt_id"])
    [decision] = body["earlier_values"]
    assert (decision["rule"], decision["claim_key"]) == (
        "asked_value",
        "name: kind library schedul work",
    )
    assert (decision["current"], decision["earlier"]) == (current, stale)
    again = receipt_body(client, make_key, replayed_exactly(client, auditor, original))
    assert again["earlier_values"] == body["earlier_values"]

    other = make_key(agent_id="helper", namespaces=("desk",))
    for text in (
        "I'm full-time at the library so weekdays are basically gone.",
        "My sister switched to part-time at the library now.",
    ):
        session_id = open_session(client, other, namespace="desk")["session_id"]
        assert append(client, other, session_id, ("user", text)).status_code == 200
    both = client.post(
        "/v1/context", json=ask | {"namespaces": ["desk"]}, headers=other.headers
    ).json()
    assert "part-time" in both["bundle"] and "full-time" in both["bundle"]


def test_an_imported_history_is_decided_by_when_it_was_said_and_shows_its_days(
    client: TestClient[Any], make_key: KeyFactory
) -> None:
    """A history imported out of order (the later session first): each remembered turn is
    valid from when it was said, so the turn said later states the current value though it
    was written first, and each memory in full shows the day it was said, not today; an exact
    replay rebuilds both."""
    agent = make_key(agent_id="helper", namespaces=("home",))
    auditor = make_key(role="auditor")
    current, stale = said_in_sessions(
        client,
        agent,
        "My landlord raised it, my rent is now $1,975.",
        "My monthly rent is $1,850.",
        said_at=("2024-05-16T09:00:00Z", "2024-04-03T09:00:00Z"),
    )

    original = client.post("/v1/context", json=ASK, headers=agent.headers).json()
    assert "$1,975" in original["bundle"] and "$1,850" not in original["bundle"]
    assert " 20240516]" in original["bundle"]
    excluded = {e["memory_id"]: e["reason"] for e in original["excluded"]}
    assert excluded[stale] == "superseded_in_bundle"
    body = receipt_body(client, make_key, original["receipt_id"])
    assert {(d["current"], d["earlier"]) for d in body["earlier_values"]} == {(current, stale)}
    replayed_exactly(client, auditor, original)


DENTIST = (("2026-06-02T10:00:00Z", BEFORE), ("2026-10-30T18:00:00Z", AFTER))


def test_a_weighed_update_is_left_out_recorded_and_replayed_exactly(
    client: TestClient[Any], make_key: KeyFactory
) -> None:
    """An update no reading knows (`assemble/2026-12-06.3` on, rule `weighed_turns`): the user's
    older turn nearest a question of their own is left out for the newer, the receipt records
    the rule, both ids and the probability, and an exact replay rebuilds both."""
    agent = make_key(agent_id="helper", namespaces=("home",))
    auditor = make_key(role="auditor")
    stale, current = said_in_sessions(
        client, agent, *(text for _, text in DENTIST), said_at=[at for at, _ in DENTIST]
    )
    ask = {"task": "Who is my dentist these days?", "namespaces": ["home"], "budget_tokens": 800}
    original = client.post("/v1/context", json=ask, headers=agent.headers).json()
    assert "Dr. Ferro" in original["bundle"] and "Dr. Ambrose" not in original["bundle"]
    excluded = {e["memory_id"]: e["reason"] for e in original["excluded"]}
    assert excluded[stale] == "superseded_in_bundle"
    body = receipt_body(client, make_key, original["receipt_id"])
    [decision] = body["earlier_values"]
    assert (decision["rule"], decision["claim_key"]) == ("weighed_turns", "name: dentist")
    assert (decision["current"], decision["earlier"]) == (current, stale)
    assert 0.5 < float(decision["score"]) <= 1.0  # a decimal string: no floats in a signed body
    again = receipt_body(client, make_key, replayed_exactly(client, auditor, original))
    assert again["earlier_values"] == body["earlier_values"]

    # Asked of someone else's, the same turns are not weighed: both stay.
    theirs = ask | {"task": "Who is my sister's dentist these days?"}
    told = client.post("/v1/context", json=theirs, headers=agent.headers).json()
    assert {m["memory_id"] for m in told["included"]} >= {stale, current}
