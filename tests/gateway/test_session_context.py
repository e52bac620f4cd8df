"""Session contexts through real HTTP and a real PostgreSQL: the budget held at every step,
compaction in the step's transaction, the stable prefix, policy over turns and summaries, the
receipt, and exact replay also after more turns and later compactions."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import psycopg
import pytest
from litestar.testing import TestClient

from gateway.core.tokens import load_tokenizer
from gateway.core.versions import LAYOUT, PARTNERS, SESSION_LAYOUTS, SessionLayout
from tests.conftest import Key, KeyFactory
from tests.gateway.core.earlier_layouts import EARLIER_LAYOUTS
from tests.gateway.sessions_helpers import (
    append,
    context,
    open_session,
    receipt_body,
    session_contexts_as,
)
from tests.gateway.test_policies_api import STRICT, activate

TOKENIZER = load_tokenizer()


def chat(client: TestClient[Any], key: Key, session_id: str, start: int, count: int) -> None:
    for i in range(start, start + count):
        response = append(
            client,
            key,
            session_id,
            ("user", f"Day {i}: we decided to visit museum {i} in Lisbon. Is it open Mondays?"),
            ("assistant", f"Museum {i} opens at 10:00, tickets cost {i} euros."),
        )
        assert response.status_code == 200, response.text


def test_the_context_stays_within_budget_as_the_history_grows(
    client: TestClient[Any], agent: Key
) -> None:
    session_id = open_session(client, agent, budget_tokens=700, system_prompt="Be brief.")[
        "session_id"
    ]
    sizes = []
    for step in range(6):
        chat(client, agent, session_id, step * 15, 15)
        response = context(client, agent, session_id)
        assert response.status_code == 200, response.text
        body = response.json()
        assert TOKENIZER.count(body["text"]) == body["tokens_used"] <= 700
        # `text` is the messages as one string, every message counted.
        rendered = "\n\n".join(f"{m['role']}: {m['content']}" for m in body["messages"])
        assert rendered == body["text"]
        sum_of_parts = sum(TOKENIZER.count(m["content"]) for m in body["messages"])
        assert sum_of_parts <= 700
        sizes.append(body["tokens_used"])
        assert body["messages"][0] == {"role": "system", "content": "Be brief."}
        assert body["messages"][1]["content"].startswith("Task: Help the user plan")
        assert body["turns"]["last_seq"] == (step + 1) * 30  # the newest turn is always there
    assert body["summary"] is not None and body["summary"]["covers"][0] == 1
    assert max(sizes) <= 700


def test_compaction_folds_the_oldest_turns_in_the_receipts_transaction(
    client: TestClient[Any], agent: Key, database_url: str
) -> None:
    session_id = open_session(client, agent, budget_tokens=600, keep_last=2)["session_id"]
    chat(client, agent, session_id, 0, 20)
    first = context(client, agent, session_id).json()
    folded = first["compaction"]["folded"]
    assert folded is not None and folded[0] == 1
    assert first["summary"]["covers"] == [1, folded[1]]
    assert first["turns"]["first_seq"] == folded[1] + 1
    assert first["compaction"]["tokens_after"] < first["compaction"]["tokens_before"]
    # The summary keeps whole sentences that carry decisions, names and numbers.
    summary_text = first["messages"][1]["content"]
    assert "decided to visit museum" in summary_text
    # Nothing new: no compaction, the same prefix (system, task, summary) byte for byte.
    second = context(client, agent, session_id).json()
    assert second["compaction"]["folded"] is None
    prefix = first["prefix_messages"]
    assert second["messages"][:prefix] == first["messages"][:prefix]
    with psycopg.connect(database_url) as conn:
        rows = conn.execute(
            "SELECT summary_id, to_seq, previous_summary_id FROM session_summaries"
        ).fetchall()
        receipts = conn.execute(
            "SELECT count(*) FROM receipts WHERE kind = 'session_context'"
        ).fetchone()
    assert [(r[0], r[1], r[2]) for r in rows] == [(first["summary"]["summary_id"], folded[1], None)]
    assert receipts == (2,)


def test_a_folding_step_whose_commit_fails_leaves_neither_summary_nor_receipt(
    client: TestClient[Any], agent: Key, database_url: str
) -> None:
    # A deferred trigger fails the step's COMMIT, after its receipt was appended: a receipt
    # naming a summary that was never stored would be a receipt replay cannot rebuild.
    session_id = open_session(client, agent, budget_tokens=600, keep_last=2)["session_id"]
    chat(client, agent, session_id, 0, 20)
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute(
            "CREATE FUNCTION refuse_summary() RETURNS trigger LANGUAGE plpgsql AS"
            " $$BEGIN RAISE EXCEPTION 'summary refused at commit'; END$$"
        )
        conn.execute(
            "CREATE CONSTRAINT TRIGGER refuse_summary AFTER INSERT ON session_summaries"
            " DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION refuse_summary()"
        )
        before = conn.execute("SELECT count(*) FROM receipts").fetchone()
    try:
        refused = context(client, agent, session_id)
    finally:
        with psycopg.connect(database_url, autocommit=True) as conn:
            conn.execute("DROP TRIGGER refuse_summary ON session_summaries")
            conn.execute("DROP FUNCTION refuse_summary()")
            after = conn.execute("SELECT count(*) FROM receipts").fetchone()
            summaries = conn.execute("SELECT count(*) FROM session_summaries").fetchone()
    assert refused.status_code >= 500 and "receipt_id" not in refused.text
    assert after == before and summaries == (0,)
    again = context(client, agent, session_id)  # the log is not left locked
    assert again.status_code == 200 and again.json()["compaction"]["folded"] is not None


def test_the_session_context_receipt_records_what_replay_needs(
    client: TestClient[Any], agent: Key, make_key: KeyFactory
) -> None:
    session_id = open_session(client, agent, budget_tokens=800)["session_id"]
    chat(client, agent, session_id, 0, 25)
    body = context(client, agent, session_id, purpose="planning").json()
    receipt = receipt_body(client, make_key, body["receipt_id"])
    assert receipt["kind"] == "session_context" and receipt["subject"]["purpose"] == "planning"
    assert receipt["bundle"]["sha256"] == body["text_sha256"]
    assert receipt["summary"]["summary_id"] == body["summary"]["summary_id"]
    shown = [t for t in receipt["turns"] if t["shown"]]
    assert [t["seq"] for t in shown][-1] == body["turns"]["last_seq"]
    assert all(len(t["content_sha256"]) == 64 for t in receipt["turns"])
    assert receipt["assembler"]["session_layout"].startswith("session/")
    auditor = make_key(role="auditor")
    verified = client.get(f"/v1/receipts/{body['receipt_id']}/verify", headers=auditor.headers)
    assert verified.status_code == 200 and verified.json()["valid"], verified.text


def replay(client: TestClient[Any], auditor: Key, receipt_id: str, **body: Any) -> Any:
    return client.post(
        f"/v1/receipts/{receipt_id}/replay", json={"mode": "exact", **body}, headers=auditor.headers
    )


def test_exact_replay_reproduces_the_bytes_after_more_turns_and_compactions(
    client: TestClient[Any], agent: Key, make_key: KeyFactory
) -> None:
    auditor = make_key(role="auditor")
    session_id = open_session(client, agent, budget_tokens=600)["session_id"]
    chat(client, agent, session_id, 0, 12)
    original = context(client, agent, session_id).json()
    assert original["memory"] is not None and original["memory"]["included"]
    # More history, more compactions: the recorded turns and summary are immutable rows.
    for start in (12, 24, 36):
        chat(client, agent, session_id, start, 12)
        later = context(client, agent, session_id).json()
        assert later["compaction"]["folded"] is not None
    replayed = replay(client, auditor, original["receipt_id"])
    assert replayed.status_code == 200, replayed.text
    result = replayed.json()
    assert result["identical"], result["problems"]
    assert result["text"] == original["text"] and result["problems"] == []
    parent = client.get(f"/v1/receipts/{result['receipt_id']}", headers=auditor.headers).json()
    assert parent["body"]["parent_receipt_id"] == original["receipt_id"]
    current = replay(client, auditor, original["receipt_id"], mode="current")
    assert current.status_code == 422 and current.json()["code"] == "replay_unsupported"


@pytest.mark.parametrize("layout", EARLIER_LAYOUTS, ids=lambda layout: layout.version)
def test_a_receipt_of_an_earlier_layout_still_replays_to_its_bytes(
    client: TestClient[Any], agent: Key, make_key: KeyFactory, layout: SessionLayout
) -> None:
    auditor = make_key(role="auditor")
    session_id = open_session(client, agent, budget_tokens=600)["session_id"]
    chat(client, agent, session_id, 0, 12)
    # A context cut by an earlier layout (the first: summary a third, the memory bundle with its
    # index; then six memories in full, no index; then 16 from retrievers 40 deep), as a
    # gateway of that version made it: the test brings the layout's values, since this gateway
    # keeps only its name.
    assert layout.version in SESSION_LAYOUTS.by_version
    with session_contexts_as(client, layout=layout):
        original = context(client, agent, session_id).json()
    receipt = receipt_body(client, make_key, original["receipt_id"])
    assert receipt["assembler"]["session_layout"] == layout.version
    recorded = receipt["memory"]["request"]
    assert (recorded["include_index"], recorded["top_k"]) == (
        layout.memory_index,
        layout.memory_top_k,
    )
    assert bool(original["memory"]["index"]["entries"]) is layout.memory_index
    chat(client, agent, session_id, 12, 12)
    now = context(client, agent, session_id).json()
    now_receipt = receipt_body(client, make_key, now["receipt_id"])
    assert now_receipt["assembler"]["session_layout"] == LAYOUT.version
    recorded = now_receipt["memory"]["request"]
    assert (recorded["include_index"], recorded["top_k"]) == (False, LAYOUT.memory_top_k)
    assert now["memory"]["index"]["entries"] == []
    for made in (original, now):
        replayed = replay(client, auditor, made["receipt_id"])
        assert replayed.status_code == 200, replayed.text
        result = replayed.json()
        assert result["identical"] and result["text"] == made["text"], result["problems"]


def test_a_receipt_of_an_unknown_layout_is_refused_not_misreplayed(
    client: TestClient[Any], agent: Key, make_key: KeyFactory
) -> None:
    auditor = make_key(role="auditor")
    session_id = open_session(client, agent, budget_tokens=600)["session_id"]
    chat(client, agent, session_id, 0, 3)
    with session_contexts_as(client, layout=dataclasses.replace(LAYOUT, version="session/later")):
        made = context(client, agent, session_id).json()
    replayed = replay(client, auditor, made["receipt_id"])
    assert replayed.status_code == 422 and replayed.json()["code"] == "assembler_unknown"
    assert "session/later" in replayed.json()["detail"]


POLICY = b"""apiVersion: ctxgw/v1
kind: PolicyBundle
metadata: {name: sessions, revision: "1"}
spec:
  mode: enforce
  combining: deny-overrides
  default_decision: allow
  rules:
    - id: no-tool-output
      effect: deny
      when: {field: turn.role, op: eq, value: tool}
      reason: Tool output stays out of contexts
    - id: redact-email-in-pii-sessions
      stage: transform
      effect: redact
      detectors: [email]
      when: {field: session.labels, op: contains_any, value: [pii]}
      reason: Contact details are personal data
"""


def test_policy_judges_turns_and_redacts_before_counting(
    client: TestClient[Any], agent: Key, make_key: KeyFactory
) -> None:
    digest = activate(client, make_key(role="admin"), POLICY, "enforce")
    session_id = open_session(client, agent, labels=["pii"], memory_budget_tokens=0)["session_id"]
    append(
        client,
        agent,
        session_id,
        ("user", "Mail me at ana.silva@example.com about the hotel."),
        ("tool", "SECRET-TOOL-OUTPUT 42"),
        ("assistant", "Will do."),
    )
    body = context(client, agent, session_id).json()
    assert "ana.silva@example.com" not in body["text"]
    assert "SECRET-TOOL-OUTPUT" not in body["text"]
    assert TOKENIZER.count(body["text"]) == body["tokens_used"]
    assert body["memory"] is None  # memory_budget_tokens 0: no hydration
    assert body["policy"]["digest"] == digest
    receipt = receipt_body(client, make_key, body["receipt_id"])
    assert [w["reason"] for w in receipt["withheld"]] == ["policy_denied"]
    assert [t["seq"] for t in receipt["turns"] if not t["shown"]] == [2]
    # The history read is judged by the same policy.
    history = client.get(f"/v1/sessions/{session_id}/turns", headers=agent.headers).json()
    assert [t["seq"] for t in history["turns"]] == [1, 3]
    assert "ana.silva@example.com" not in history["turns"][0]["content"]
    # And exact replay judges the recorded turns again under the recorded policy.
    replayed = replay(client, make_key(role="auditor"), body["receipt_id"]).json()
    assert replayed["identical"] and "SECRET-TOOL-OUTPUT" not in replayed["text"]


PINNED_POLICY = b"""apiVersion: ctxgw/v1
kind: PolicyBundle
metadata: {name: pinned, revision: "1"}
spec:
  mode: enforce
  combining: deny-overrides
  default_decision: allow
  rules:
    - id: redact-contacts
      stage: transform
      effect: redact
      detectors: [email, card]
      reason: Contact and card details are personal data
"""


def test_the_system_prompt_and_task_pass_the_policy_as_turns_do(
    client: TestClient[Any], agent: Key, make_key: KeyFactory
) -> None:
    # Written before the policy, by an admin; read and stepped by an agent under it. The email
    # in fullwidth form is the same email (one normalization before every detector).
    admin = make_key(role="admin")
    session_id = open_session(
        client,
        admin,
        task="Refund order 7 to card 4111 1111 1111 1111 and tell ana.silva@example.com.",
        system_prompt="Escalations go to ｏｐｓ＠ｅｘａｍｐｌｅ.ｃｏｍ only.",
        memory_budget_tokens=0,
    )["session_id"]
    activate(client, admin, PINNED_POLICY, "enforce")
    append(client, agent, session_id, ("user", "Did the refund go out?"))
    secrets = ("4111", "ana.silva@example.com", "ｏｐｓ＠", "ops@example.com")
    body = context(client, agent, session_id).json()
    assert not [s for s in secrets if s in body["text"]], body["text"]
    system, task = body["messages"][:2]
    assert system["content"].startswith("Escalations go to ") and "only." in system["content"]
    assert task["content"].startswith("Task: Refund order 7 to card ")
    assert TOKENIZER.count(body["text"]) == body["tokens_used"]
    receipt = receipt_body(client, make_key, body["receipt_id"])
    assert receipt["assembler"]["session_layout"] == LAYOUT.version
    fired = {o["rule_id"] for o in receipt["policy"]["decisions"] if o["applied"]}
    assert "redact-contacts" in fired
    # Reading the session shows the same texts as redacted; its writer's view is the policy's
    # too, an admin's reads are not narrowed.
    read = client.get(f"/v1/sessions/{session_id}", headers=agent.headers).json()
    assert not [s for s in secrets if s in read["task"] + read["system_prompt"]]
    assert read["task"].startswith("Refund order 7 to card ")
    raw = client.get(f"/v1/sessions/{session_id}", headers=admin.headers).json()
    assert "ana.silva@example.com" in raw["task"]
    # Exact replay judges the recorded texts again under the recorded policy.
    replayed = replay(client, make_key(role="auditor"), body["receipt_id"]).json()
    assert replayed["identical"] and replayed["text"] == body["text"]


def test_the_memory_part_leaves_out_copies_of_turns_shown_verbatim(
    client: TestClient[Any], agent: Key
) -> None:
    session_id = open_session(client, agent, budget_tokens=2000)["session_id"]
    appended = append(client, agent, session_id, ("user", "Which museum opens on Mondays?"))
    body = context(client, agent, session_id).json()
    [shown] = appended.json()["memory_ids"]
    memory = body["memory"]
    assert shown not in {i["memory_id"] for i in memory["included"]}
    assert shown not in memory["index"]["entries"]


def test_a_context_budget_below_the_minimum_is_refused_with_it(
    client: TestClient[Any], agent: Key
) -> None:
    session_id = open_session(client, agent)["session_id"]
    response = context(client, agent, session_id, budget_tokens=30)
    assert response.status_code == 422, response.text
    assert response.json()["code"] == "budget_too_small"
    assert "minimum" in response.json()["errors"][0]["message"]
    blank = context(client, agent, session_id, query="   ")
    assert blank.status_code == 422 and blank.json()["errors"][0]["field"] == "query"


def test_a_summary_outgrowing_its_share_is_summarized_again_not_cut(
    client: TestClient[Any], agent: Key, database_url: str
) -> None:
    session_id = open_session(client, agent, budget_tokens=3000, memory_budget_tokens=0)[
        "session_id"
    ]
    chat(client, agent, session_id, 0, 60)
    large = context(client, agent, session_id).json()
    assert large["summary"] is not None
    # A smaller budget this step: the summary no longer fits its share, so it is folded again
    # (with whatever else must be folded; the previous summary named), whole sentences only.
    small = context(client, agent, session_id, budget_tokens=600).json()
    assert small["tokens_used"] <= 600
    assert small["summary"]["covers"][1] >= large["summary"]["covers"][1]
    assert small["summary"]["tokens"] < large["summary"]["tokens"]
    with psycopg.connect(database_url) as conn:
        row = conn.execute(
            "SELECT previous_summary_id, text FROM session_summaries WHERE summary_id = %s",
            (small["summary"]["summary_id"],),
        ).fetchone()
    assert row is not None and row[0] == large["summary"]["summary_id"]
    lines = row[1].splitlines()
    assert lines and all(re.fullmatch(r"- t\d+ (user|assistant): .+[.?]", line) for line in lines)


def test_the_memory_part_takes_the_room_the_conversation_leaves(
    client: TestClient[Any], agent: Key
) -> None:
    items = [
        {
            "namespace": "chat",
            "heading": f"Museum {i} in Lisbon",
            "content": f"Museum {i} in Lisbon opens at {8 + i % 4}:00 and is closed on "
            f"{['Mondays', 'Tuesdays'][i % 2]}; the ticket costs {i} euros, less for students. "
            + " ".join(f"Room {i}.{r} shows tiles from the {r + 15}th century." for r in range(8)),
        }
        for i in range(40)
    ]
    assert client.post(
        "/v1/memories/batch", json={"items": items}, headers=agent.headers
    ).is_success
    session_id = open_session(client, agent, budget_tokens=2000)["session_id"]
    append(client, agent, session_id, ("user", "Which Lisbon museum is open on Mondays?"))
    body = context(client, agent, session_id).json()
    # The share is a quarter (500 tokens); the short conversation leaves the rest to memories,
    # more of them than a bundle's default six.
    assert body["memory"]["tokens"] > 500
    assert 6 < len(body["memory"]["included"]) <= LAYOUT.memory_top_k
    assert TOKENIZER.count(body["text"]) == body["tokens_used"] <= 2000
    assert body["excluded_turns"] == []


def test_a_required_purpose_refuses_the_step_with_a_receipt(
    client: TestClient[Any], agent: Key, make_key: KeyFactory
) -> None:
    activate(client, make_key(role="admin"), STRICT, "enforce")
    session_id = open_session(client, agent)["session_id"]
    append(client, agent, session_id, ("user", "Book the hotel near Alfama for 3 May."))
    refused = context(client, agent, session_id)
    assert refused.status_code == 403 and refused.json()["code"] == "policy_refused"
    receipt_id = refused.json()["receipt_id"]
    receipt = receipt_body(client, make_key, receipt_id)
    assert receipt["kind"] == "refusal" and receipt["disclosure"] == "session_context"
    history = client.get(f"/v1/sessions/{session_id}/turns", headers=agent.headers)
    assert history.status_code == 403  # the history read is a disclosure too
    allowed = context(client, agent, session_id, purpose="planning")
    assert allowed.status_code == 200, allowed.text
    assert "Book the hotel near Alfama" in allowed.json()["text"]


ALL_DECISIONS = b"""apiVersion: ctxgw/v1
kind: PolicyBundle
metadata: {name: sessions-and-memories, revision: "1"}
spec:
  mode: enforce
  combining: deny-overrides
  default_decision: allow
  rules:
    - id: no-tool-output
      effect: deny
      when: {field: turn.role, op: eq, value: tool}
      reason: Tool output stays out of contexts
    - id: no-secret-memories
      effect: deny
      when: {field: memory.labels, op: contains_any, value: [secret]}
      reason: Secret memories stay out of contexts
"""


def test_the_receipt_policy_carries_every_decision_and_the_agent_only_its_own(
    client: TestClient[Any], agent: Key, make_key: KeyFactory
) -> None:
    activate(client, make_key(role="admin"), ALL_DECISIONS, "enforce")
    hidden = client.post(
        "/v1/memories",
        json={
            "namespace": "trip",
            "heading": "Lisbon museum passes",
            "labels": ["secret"],
            "content": "The Lisbon museum passes are kept in locker 12.",
        },
        headers=agent.headers,
    ).json()["memory_id"]
    session_id = open_session(client, agent, namespace="trip", remember_turns=False)["session_id"]
    appended = append(
        client, agent, session_id,
        ("user", "Which Lisbon museum passes do we have?"), ("tool", "lookup: 3 results"),
    )  # fmt: skip
    tool_turn = appended.json()["turn_ids"][1]
    body = context(client, agent, session_id).json()
    auditor = make_key(role="auditor", agent_id=None)
    receipt = client.get(f"/v1/receipts/{body['receipt_id']}", headers=auditor.headers).json()
    recorded = {(d["rule_id"], d["memory_id"]) for d in receipt["body"]["policy"]["decisions"]}
    # Turns and memories alike, in the one `policy` of the receipt.
    assert ("no-tool-output", tool_turn) in recorded
    assert ("no-secret-memories", hidden) in recorded
    # The agent hears of neither: it received neither.
    told = {d["memory_id"] for d in body["policy"]["decisions"]}
    assert tool_turn not in told and hidden not in told
    assert hidden not in str(body["memory"]) and body["policy"]["withheld"] is None


def test_the_strict_bundle_caps_retrieved_episodes_not_the_conversation(
    client: TestClient[Any], agent: Key, make_key: KeyFactory
) -> None:
    """strict.yaml's cap-episodic (three episodes) would otherwise apply to the session's own
    turns, which are judged as episodic memories, and keep the three oldest."""
    activate(client, make_key(role="admin"), STRICT, "enforce")
    session_id = open_session(client, agent, keep_last=8, memory_budget_tokens=0)["session_id"]
    for i in range(10):
        append(client, agent, session_id, ("user", f"Turn {i}: shall we visit museum {i}?"))
    body = context(client, agent, session_id, purpose="planning").json()
    # All ten fit the budget, so all ten are there verbatim (capped: turns 1-3, nothing newer).
    assert body["turns"] == {"first_seq": 1, "last_seq": 10}
    assert "Turn 9:" in body["text"] and body["summary"] is None


def test_a_recalled_turn_is_headed_by_who_and_when_and_its_words_shown_once(
    client: TestClient[Any], agent: Key, make_key: KeyFactory
) -> None:
    auditor = make_key(role="auditor")
    session_id = open_session(client, agent, budget_tokens=1200)["session_id"]
    chat(client, agent, session_id, 0, 40)
    ask = "When does museum 3 in Lisbon open?"
    said = "Day 3: we decided to visit museum 3 in Lisbon. Is it open Mondays?"
    # The same step as the assembler before made it: the heading whole, its words twice.
    now = client.app.state.runtime.discloser
    before = dataclasses.replace(now, makers=dataclasses.replace(now.makers, assembler=PARTNERS))
    with session_contexts_as(client, discloser=before):
        old = context(client, agent, session_id, query=ask).json()
    body = context(client, agent, session_id, query=ask).json()
    # Turn 7 is long folded into the summary; the memory part brings it back whole, under its
    # role and number alone: its opening words are not repeated on the provenance line.
    assert body["summary"]["covers"][1] > 7
    block = r"\[m\d+ episodic [.\d]+ \d{8}\] user, turn 7"
    assert re.search(block + "\n" + re.escape(said), body["text"])
    assert body["text"].count("Day 3: we decided") == 1
    assert old["text"].count("Day 3: we decided") == 2
    for made in (old, body):
        replayed = replay(client, auditor, made["receipt_id"]).json()
        assert replayed["identical"] and replayed["text"] == made["text"], replayed["problems"]
