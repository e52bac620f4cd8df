"""Replay (exact, current, what_if), the policy what-if window, and as_of assembly."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

from litestar.testing import TestClient

from gateway.core.versions import ADMITTED, Assembler
from tests.conftest import Key, KeyFactory
from tests.gateway.test_context import seed
from tests.gateway.test_memories_write import memory
from tests.gateway.test_policies_api import STRICT, activate

ASK = {"task": "how do I roll back a deploy?", "budget_tokens": 600, "top_k": 4}


def replay(client: TestClient[Any], key: Key, receipt_id: str, **body: Any) -> Any:
    return client.post(f"/v1/receipts/{receipt_id}/replay", json=body, headers=key.headers)


def test_exact_replay_reproduces_the_bytes_even_after_changes(
    client: TestClient[Any], agent: Key, make_key: KeyFactory
) -> None:
    ids = seed(client, agent)
    original = client.post("/v1/context", json=ASK, headers=agent.headers).json()
    # The world moves on: a memory is retired, another superseded, a new one written.
    client.request(
        "DELETE", f"/v1/memories/{ids[0]}", json={"reason": "obsolete"}, headers=agent.headers
    )
    client.post("/v1/memories", json=memory(heading="Deploy schedule", content="Deploys on Wednesdays; roll back with care.", supersedes=ids[1]), headers=agent.headers)  # fmt: skip
    auditor = make_key(role="auditor")

    exact = replay(client, auditor, original["receipt_id"], mode="exact").json()
    assert exact["identical"] is True, exact["problems"]
    assert exact["replayed"]["bundle_sha256"] == original["bundle_sha256"]
    assert exact["diff"]["added"] == [] and exact["diff"]["removed"] == []
    receipt = client.get(f"/v1/receipts/{exact['receipt_id']}", headers=auditor.headers).json()
    assert receipt["kind"] == "replay" and receipt["parent_receipt_id"] == original["receipt_id"]

    again = replay(client, auditor, exact["receipt_id"], mode="exact").json()
    assert again["identical"] is True and again["replay_of_replay"] is True

    current = replay(client, auditor, original["receipt_id"], mode="current").json()
    assert current["identical"] is False
    assert ids[0] in current["diff"]["removed"]


def test_exact_replay_says_why_when_a_memory_was_erased(
    client: TestClient[Any], agent: Key, make_key: KeyFactory
) -> None:
    seed(client, agent)
    original = client.post("/v1/context", json=ASK, headers=agent.headers).json()
    erased = original["included"][0]["memory_id"]
    admin = make_key(role="admin")
    response = client.post(
        f"/v1/memories/{erased}/erase",
        json={"reason": "right to be forgotten"},
        headers=admin.headers,
    )
    assert response.status_code == 200, response.text
    result = replay(client, make_key(role="auditor"), original["receipt_id"], mode="exact").json()
    assert result["identical"] is False
    assert {"code": "memory_erased", "memory_id": erased} in [
        {k: p[k] for k in ("code", "memory_id")} for p in result["problems"]
    ]
    # The erased version is dead in the rebuilt bundle, not a live block with no text.
    assert erased not in result["replayed"]["included"]
    body = client.get(
        f"/v1/receipts/{result['receipt_id']}", headers=make_key(role="auditor").headers
    ).json()["body"]
    assert {e["memory_id"]: e["reason"] for e in body["excluded"]}[erased] == "deleted"
    assert erased not in body["refs"].values()  # neither a block nor an index line names it


def test_what_if_replays_under_a_candidate_policy(
    client: TestClient[Any], agent: Key, make_key: KeyFactory
) -> None:
    items = [memory(namespace="hr", heading="Rollback of salary changes", content="HR rolls back salary changes by ticket."),
             memory(heading="Rollback procedure", content="Run atlasctl rollback --to <sha>.")]  # fmt: skip
    ids = [i["memory_id"] for i in client.post("/v1/memories/batch", json={"items": items}, headers=agent.headers).json()["items"]]  # fmt: skip
    original = client.post(
        "/v1/context", json={**ASK, "purpose": "ops"}, headers=agent.headers
    ).json()
    assert ids[0] in [i["memory_id"] for i in original["included"]]
    auditor = make_key(role="auditor")
    what_if = replay(
        client, auditor, original["receipt_id"], mode="what_if", policy_yaml=STRICT.decode()
    ).json()
    assert what_if["identical"] is False
    assert ids[0] in what_if["diff"]["removed"]
    assert {"memory_id": ids[0], "before": "admit", "after": "deny"} in what_if["diff"][
        "decision_changes"
    ]
    # The inline candidate was stored with the replay: its receipt names the candidate's
    # digest, and an exact replay of that receipt finds it and rebuilds the same bytes.
    again = replay(client, auditor, what_if["receipt_id"], mode="exact")
    assert again.status_code == 200, again.text
    assert again.json()["identical"] is True

    bad = replay(client, auditor, original["receipt_id"], mode="what_if", policy_yaml="spec: [\n")
    assert bad.status_code == 422 and ":" in bad.json()["errors"][0]["field"]
    unknown = replay(
        client, auditor, original["receipt_id"], mode="what_if", policy_digest="sha256:" + "1" * 64
    )
    assert unknown.status_code == 404
    assert replay(client, auditor, "01J00000000000000000000000", mode="exact").status_code == 404
    foreign = make_key(tenant="globex", role="auditor")
    assert replay(client, foreign, original["receipt_id"], mode="exact").status_code == 404
    assert replay(client, agent, original["receipt_id"], mode="exact").status_code == 403


def test_policy_what_if_over_a_window(
    client: TestClient[Any], agent: Key, make_key: KeyFactory
) -> None:
    hr = client.post("/v1/memories", json=memory(namespace="hr", heading="Rollback salary", content="roll back salary"), headers=agent.headers).json()["memory_id"]  # fmt: skip
    seed(client, agent)
    for task in ("roll back", "refund policy", "salary rollback"):
        client.post(
            "/v1/context", json={"task": task, "top_k": 8, "purpose": "x"}, headers=agent.headers
        )
    admin = make_key(role="admin")
    report = client.post("/v1/policies/what-if", json={"policy_yaml": STRICT.decode(), "last": 10}, headers=admin.headers).json()  # fmt: skip
    assert report["receipts_evaluated"] == 3
    assert report["bundles_changed"] >= 1
    assert report["newly_excluded"].get(hr, 0) >= 1
    assert report["rule_hits"]["hr-needs-privileged-role"] >= 1


def test_replay_of_a_log_only_bundle_uses_the_recorded_mode(
    client: TestClient[Any], agent: Key, make_key: KeyFactory
) -> None:
    seed(client, agent)
    activate(client, make_key(role="admin"), STRICT, "log_only")
    original = client.post("/v1/context", json=ASK, headers=agent.headers).json()
    assert original["policy"]["mode"] == "log_only"
    exact = replay(client, make_key(role="auditor"), original["receipt_id"], mode="exact").json()
    assert exact["identical"] is True


def test_as_of_assembles_the_past(
    client: TestClient[Any], agent: Key, make_key: KeyFactory
) -> None:
    ids = seed(client, agent)
    fetched = client.post("/v1/fetch", json={"ids": [ids[0]]}, headers=agent.headers).json()
    written_at = datetime.fromisoformat(fetched["memories"][0]["created_at"].replace("Z", "+00:00"))
    client.request(
        "DELETE", f"/v1/memories/{ids[0]}", json={"reason": "wrong"}, headers=agent.headers
    )
    auditor = make_key(role="auditor")
    as_of = (written_at + timedelta(milliseconds=1)).isoformat()
    past = client.post("/v1/context", json={**ASK, "as_of": as_of}, headers=auditor.headers)
    assert past.status_code == 200, past.text
    assert ids[0] in [i["memory_id"] for i in past.json()["included"]]
    now = client.post("/v1/context", json=ASK, headers=agent.headers).json()
    assert ids[0] not in [i["memory_id"] for i in now["included"]]

    future = (datetime.now(UTC) + timedelta(days=1)).isoformat()
    assert (
        client.post(
            "/v1/context", json={**ASK, "as_of": future}, headers=auditor.headers
        ).status_code
        == 422
    )
    ancient = "2001-01-01T00:00:00+00:00"
    too_old = client.post("/v1/context", json={**ASK, "as_of": ancient}, headers=auditor.headers)
    assert too_old.status_code == 422 and too_old.json()["errors"][0]["field"] == "as_of"
    assert (
        client.post("/v1/context", json={**ASK, "as_of": as_of}, headers=agent.headers).status_code
        == 403
    )


@contextlib.contextmanager
def building_with(client: TestClient[Any], assembler: Assembler) -> Iterator[None]:
    """The app builds new bundles with `assembler` while the block runs (a gateway configured
    with it), then with its own again."""
    state = client.app.state
    current = state.runtime
    discloser = dataclasses.replace(
        current.discloser,
        makers=dataclasses.replace(current.discloser.makers, assembler=assembler),
    )
    state.runtime = dataclasses.replace(
        current, disclosures=dataclasses.replace(current.disclosures, discloser=discloser)
    )
    try:
        yield
    finally:
        state.runtime = current


def test_a_receipt_of_an_assembler_not_built_here_is_refused_by_replay(
    client: TestClient[Any], agent: Key, make_key: KeyFactory
) -> None:
    # A gateway on another assembler wrote this receipt; this one does not build that version,
    # so it says so rather than rebuild the bundle with other rules.
    other = Assembler(version="assemble/1999-01-01.1")
    seed(client, agent)
    with building_with(client, other):
        original = client.post("/v1/context", json=ASK, headers=agent.headers).json()
    auditor = make_key(role="auditor")
    receipt = client.get(f"/v1/receipts/{original['receipt_id']}", headers=auditor.headers).json()
    assert receipt["body"]["assembler"]["version"] == other.version
    for mode in ("exact", "current", "what_if"):
        extra = {"policy_yaml": AGENTS_ONLY.decode()} if mode == "what_if" else {}
        refused = replay(client, auditor, original["receipt_id"], mode=mode, **extra)
        assert refused.status_code == 422, refused.text
        problem = refused.json()
        assert problem["code"] == "assembler_unknown" and other.version in problem["detail"]
    today = client.post("/v1/context", json=ASK, headers=agent.headers).json()
    exact = replay(client, auditor, today["receipt_id"], mode="exact").json()
    assert exact["identical"] is True


AGENTS_ONLY = b"""\
apiVersion: ctxgw/v1
kind: PolicyBundle
metadata: {name: agents-only}
spec:
  default_decision: allow
  rules:
    - id: agents-only
      effect: deny
      reason: Only agents read memories
      when: {field: request.role, op: ne, value: agent}
"""


def test_a_gateway_kept_on_an_assembler_before_budget_sized_tiers_asks_for_a_top_k(
    client: TestClient[Any], agent: Key
) -> None:
    # Before assemble/2026-12-04.2 a request named how many memories it shows in full: one that
    # names none is a 422 naming `top_k` (it was a 500), one that names it is answered.
    seed(client, agent)
    with building_with(client, ADMITTED):
        unnamed = {k: v for k, v in ASK.items() if k != "top_k"}
        refused = client.post("/v1/context", json=unnamed, headers=agent.headers)
        named = client.post("/v1/context", json=ASK, headers=agent.headers)
    assert refused.status_code == 422, refused.text
    problem = refused.json()
    assert problem["code"] == "invalid_request" and ADMITTED.version in problem["detail"]
    assert [e["field"] for e in problem["errors"]] == ["top_k"]
    assert named.status_code == 200 and named.json()["bundle"]


def test_a_replay_of_a_replay_judges_the_original_agent(
    client: TestClient[Any], agent: Key, make_key: KeyFactory
) -> None:
    """A replay receipt names the auditor as its subject and records the agent the policy judged
    as `judged`: replaying it again, or a window over it, judges that agent, not an auditor (whom
    this policy would deny everything)."""
    seed(client, agent)
    activate(client, make_key(role="admin"), AGENTS_ONLY, "enforce")
    original = client.post("/v1/context", json=ASK, headers=agent.headers).json()
    assert original["included"]
    auditor = make_key(role="auditor", agent_id=None)
    first = replay(client, auditor, original["receipt_id"], mode="exact").json()
    assert first["identical"] is True
    receipt = client.get(f"/v1/receipts/{first['receipt_id']}", headers=auditor.headers).json()
    assert receipt["body"]["subject"]["role"] == "auditor"
    assert receipt["body"]["judged"] == {
        "agent_id": "agent-1",
        "key_id": agent.key_id,
        "role": "agent",
    }

    second = replay(client, make_key(role="auditor"), first["receipt_id"], mode="exact").json()
    assert second["identical"] is True, second["diff"]
    third = replay(client, auditor, second["receipt_id"], mode="exact").json()
    assert third["identical"] is True, third["diff"]


NEEDS_PURPOSE = b"""\
apiVersion: ctxgw/v1
kind: PolicyBundle
metadata: {name: needs-purpose}
spec:
  default_decision: allow
  rules:
    - id: need-purpose
      stage: request
      effect: require
      reason: Declare a purpose
      when: {field: request.purpose, op: exists}
"""
ALLOW_ALL = b"""\
apiVersion: ctxgw/v1
kind: PolicyBundle
metadata: {name: allow-all}
spec:
  default_decision: allow
  rules: []
"""


def test_what_if_counts_requests_it_would_refuse_and_refusals_it_would_lift(
    client: TestClient[Any], agent: Key, make_key: KeyFactory
) -> None:
    """ "What would change if we enforced this policy": a window shows the past requests a
    candidate `require` would refuse, and past refusals a candidate would let through."""
    seed(client, agent)
    admin = make_key(role="admin")
    client.post("/v1/context", json={"task": "roll back"}, headers=agent.headers)  # no purpose
    client.post("/v1/context", json={"task": "roll back", "purpose": "ops"}, headers=agent.headers)
    ask = {"policy_yaml": NEEDS_PURPOSE.decode(), "last": 10}
    report = client.post("/v1/policies/what-if", json=ask, headers=admin.headers).json()
    assert (report["receipts_evaluated"], report["requests_refused"]) == (2, 1)
    assert sorted(r["refused_by"] or "" for r in report["receipts"]) == ["", "need-purpose"]
    assert report["refusals_evaluated"] == 0

    activate(client, admin, NEEDS_PURPOSE, "enforce")
    refused = client.post("/v1/context", json={"task": "roll back"}, headers=agent.headers)
    assert refused.status_code == 403
    lifting = {"policy_yaml": ALLOW_ALL.decode(), "last": 10}
    report = client.post("/v1/policies/what-if", json=lifting, headers=admin.headers).json()
    assert (report["refusals_evaluated"], report["refusals_lifted"]) == (1, 1)
    refusal = next(r for r in report["receipts"] if r["kind"] == "refusal")
    assert refusal == {
        "receipt_id": refused.json()["receipt_id"],
        "kind": "refusal",
        "refused_by": None,
    }
    keeping = client.post("/v1/policies/what-if", json=ask, headers=admin.headers).json()
    assert (keeping["refusals_evaluated"], keeping["refusals_lifted"]) == (1, 0)
    assert keeping["rule_hits"]["need-purpose"] >= 1


def test_exact_replay_ranks_from_the_recorded_statistics(
    client: TestClient[Any], agent: Key, make_key: KeyFactory
) -> None:
    seed(client, agent)
    original = client.post("/v1/context", json=ASK, headers=agent.headers).json()
    auditor = make_key(role="auditor")

    def statistics(receipt_id: str) -> Any:
        receipt = client.get(f"/v1/receipts/{receipt_id}", headers=auditor.headers).json()
        return receipt["body"]["ranking_input"]

    recorded = statistics(original["receipt_id"])
    assert recorded["median_tokens"] > 0 and recorded["newest_created_at"] is not None
    # A newer and much longer memory on the same task moves both statistics of today's recall.
    long_text = "To roll back a deploy, run the rollback for the previous release. " * 40
    written = client.post(
        "/v1/memories",
        json=memory(heading="Roll back a deploy, in full", content=long_text),
        headers=agent.headers,
    )
    assert written.status_code == 201, written.text

    exact = replay(client, auditor, original["receipt_id"], mode="exact").json()
    assert exact["identical"] is True and exact["problems"] == []
    assert statistics(exact["receipt_id"]) == recorded
    current = replay(client, auditor, original["receipt_id"], mode="current").json()
    assert statistics(current["receipt_id"])["newest_created_at"] > recorded["newest_created_at"]


def test_exact_replay_passes_context_from_the_recorded_neighbours(
    client: TestClient[Any], agent: Key, make_key: KeyFactory
) -> None:
    # A question, then its answer, which shares no word with the task: the answer is ranked by
    # the context its neighbour (the question) passes it, read back from the receipt's record.
    turns = [
        "Who was the cellist at the recital on Friday?",
        "Oh, that was Ana Duarte, she studied in Porto.",
        "Anyway, lunch tomorrow?",
    ]
    for text in turns:
        written = client.post(
            "/v1/memories",
            json=memory(namespace="chat", heading=text, content=text, memory_type="episodic"),
            headers=agent.headers,
        )
        assert written.status_code == 201, written.text
    ask = {"task": "which cellist played the recital", "namespaces": ["chat"],
           "budget_tokens": 600, "top_k": 3, "include_index": False}  # fmt: skip
    original = client.post("/v1/context", json=ask, headers=agent.headers).json()
    auditor = make_key(role="auditor")

    def context_of_included(receipt_id: str) -> dict[str, int]:
        receipt = client.get(f"/v1/receipts/{receipt_id}", headers=auditor.headers).json()
        return {
            item["memory_id"]: item["signals_micros"]["context"]
            for item in receipt["body"]["included"]
        }

    recorded = context_of_included(original["receipt_id"])
    assert len(recorded) == 3 and max(recorded.values()) > 0
    exact = replay(client, auditor, original["receipt_id"], mode="exact").json()
    assert exact["identical"] is True and exact["problems"] == []
    assert context_of_included(exact["receipt_id"]) == recorded
