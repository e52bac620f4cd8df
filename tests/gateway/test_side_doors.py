"""Need to know has no side doors (ARCHITECTURE §1 rule 1, §14): an agent learns nothing of what
its policy denies, through any endpoint, retired memories and sessions included.

Each test is a probe that once got through: a conflict naming its denied side, an exclusion
naming a denied memory's older or newer version, a write retiring a memory its writer may not
see, a secret session's task read back, an idempotency key answering for another namespace, the
console reading a memory outside an auditor's namespaces, and ranking signals that move with a
denied memory. Real HTTP through the app, the real PostgreSQL.
"""

from __future__ import annotations

import json
from typing import Any

import psycopg
from litestar.testing import TestClient

from tests.conftest import Key, KeyFactory
from tests.gateway.test_conflicts_in_bundles import say_and_compile
from tests.gateway.test_memories_write import write
from tests.gateway.test_policies_api import activate

# A purpose is required of every disclosure (writes and reads of a session's metadata declare
# none: a `require` rule must not make them fail); secrets are denied to everyone, a fact about
# the Payments team to every agent but the planner.
POLICY = b"""
apiVersion: ctxgw/v1
kind: PolicyBundle
metadata: {name: side-doors}
spec:
  default_decision: allow
  rules:
    - id: need-purpose
      effect: require
      when: {field: request.purpose, op: exists}
    - id: withhold-secrets
      effect: deny
      when: {field: memory.labels, op: contains_any, value: [secret]}
    - id: payments-for-the-planner
      effect: deny
      when:
        all:
          - {field: memory.content, op: contains, value: Payments}
          - {field: request.agent_id, op: ne, value: planner}
"""
PURPOSE = {"purpose": "support"}
UNKNOWN = "01ARZ3NDEKTSV4RRFFQ69G5FAV"


def _enforce(client: TestClient[Any], make_key: KeyFactory) -> Key:
    admin = make_key(role="admin", agent_id=None)
    activate(client, admin, POLICY, "enforce")
    return admin


def _said(answer: Any) -> str:
    return json.dumps(answer)


def _problem(response: Any, hidden: str) -> tuple[int, str, str]:
    """A 404's status, code and detail with the id asked for left out: the answers for a
    hidden memory and for an unknown one must not differ otherwise."""
    body = response.json()
    return response.status_code, body.get("code"), str(body.get("detail")).replace(hidden, "<id>")


# 1. Conflicts -----------------------------------------------------------------------------------


def test_a_conflict_is_shown_only_to_whom_may_see_both_its_sides(
    client: TestClient[Any], make_key: KeyFactory
) -> None:
    admin = _enforce(client, make_key)
    planner = make_key(agent_id="planner", namespaces=("team",))
    coder = make_key(agent_id="coder", namespaces=("team",))
    say_and_compile(client, planner, "I'm on the Payments team.")
    assert say_and_compile(client, coder, "I'm on the Fraud team.")["conflicts"] == 1
    [conflict] = client.get("/v1/conflicts", headers=planner.headers).json()["conflicts"]
    assert len(client.get("/v1/conflicts", headers=admin.headers).json()["conflicts"]) == 1
    payments = next(s for s in conflict["sides"] if "Payments" in s["heading"])

    # The coder may not see the Payments side: the conflict is not listed to it at all.
    listed = client.get("/v1/conflicts", headers=coder.headers)
    assert listed.status_code == 200 and listed.json() == {"conflicts": [], "next_after": None}
    # Nor may it resolve it: 404, as for a conflict that does not exist.
    fraud = next(s["memory_id"] for s in conflict["sides"] if s is not payments)
    answers = [
        client.post(
            f"/v1/conflicts/{conflict_id}/resolve",
            json={"winner": fraud, "reason": "the transfer went through"},
            headers=coder.headers,
        )
        for conflict_id in (conflict["conflict_id"], UNKNOWN)
    ]
    assert [a.status_code for a in answers] == [404, 404]
    assert answers[0].json()["code"] == answers[1].json()["code"] == "conflict_not_found"
    # Its bundle shows its own side alone, naming neither the other nor the conflict.
    ask = {"task": "Which team am I on?", "namespaces": ["team"], "budget_tokens": 800}
    bundle = client.post("/v1/context", json={**ask, **PURPOSE}, headers=coder.headers).json()
    assert "Fraud" in bundle["bundle"] and "Conflicting memories" not in bundle["bundle"]
    for said in (payments["memory_id"], payments["heading"], "Payments"):
        assert said not in _said(bundle), said
    # The planner sees both sides, together.
    both = client.post("/v1/context", json={**ask, **PURPOSE}, headers=planner.headers).json()
    assert "Conflicting memories: user.team" in both["bundle"]


# 2. Retired memories in exclusions ----------------------------------------------------------------


def test_retired_versions_the_policy_denies_are_named_nowhere(
    client: TestClient[Any], make_key: KeyFactory, agent: Key
) -> None:
    admin = _enforce(client, make_key)

    def written(key: Key, **body: Any) -> str:
        response = write(client, key, namespace="vault", memory_type="semantic", **body)
        assert response.status_code == 201, response.text
        return str(response.json()["memory_id"])

    secret = {"labels": ["secret"]}
    old = written(
        agent, heading="Vault token", content="The vault token rotates monthly.", **secret
    )
    new = written(admin, heading="Vault token", content="The vault token rotates weekly.",
                  supersedes=old, **secret)  # fmt: skip
    shown = written(agent, heading="Vault rotation owner", content="Ops owns vault rotation.")
    successor = written(admin, heading="Vault rotation owner", supersedes=shown,
                        content="Security owns vault token rotation.", **secret)  # fmt: skip
    written(agent, heading="Vault runbook", content="Unseal the vault with three keys.")
    # A visible version superseding a secret one.
    latest = written(admin, heading="Vault token", content="The vault token rotates daily.",
                     supersedes=new)  # fmt: skip
    unseen = (old, new, successor)

    ask = {"task": "vault token rotation owner monthly weekly", **PURPOSE}
    context = client.post("/v1/context", json={**ask, "top_k": 10}, headers=agent.headers).json()
    search = client.post(
        "/v1/search", json={"query": ask["task"], "limit": 10, **PURPOSE}, headers=agent.headers
    ).json()
    for answer in (context, search):
        for memory_id in unseen:
            assert memory_id not in _said(answer), memory_id
        # The visible version it replaced is accounted for: superseded, by nothing it names.
        [retired] = [e for e in answer["excluded"] if e["memory_id"] == shown]
        assert retired["reason"] == "superseded" and retired["detail"].startswith("superseded at ")
    # Asked for by id, every one is missing, as another tenant's memory would be; the visible
    # retired version is withheld as superseded.
    fetched = client.post(
        "/v1/fetch", json={"ids": [old, new, shown, successor, UNKNOWN], **PURPOSE},
        headers=agent.headers,
    ).json()  # fmt: skip
    assert fetched["missing"] == [old, new, successor, UNKNOWN]
    assert [(w["memory_id"], w["reason"]) for w in fetched["withheld"]] == [(shown, "superseded")]
    # What it may see names none of them: not the version a memory superseded, nor the one
    # that superseded it, nor the decision that did.
    linked = client.post(
        "/v1/fetch", json={"ids": [latest], **PURPOSE}, headers=agent.headers
    ).json()
    timeline = client.post(
        "/v1/timeline", json={"ids": [shown, latest], **PURPOSE}, headers=agent.headers
    ).json()
    assert linked["memories"][0]["supersedes"] is None
    assert [
        (e["supersedes"], e["superseded_by"], e["supersession"]) for e in timeline["entries"]
    ] == [(None, None, None), (None, None, None)]
    for answer in (linked, timeline):
        for memory_id in unseen:
            assert memory_id not in _said(answer), memory_id
    # The receipts keep the whole account, for auditors.
    auditor = make_key(role="auditor", agent_id=None)
    receipt = client.get(f"/v1/receipts/{context['receipt_id']}", headers=auditor.headers).json()
    reasons = {e["memory_id"]: e["reason"] for e in receipt["body"]["excluded"]}
    assert reasons[old] == reasons[new] == "superseded"
    assert reasons[successor] == "policy_denied"


# 3. Writes that would retire what the writer may not see ----------------------------------------


def test_an_agent_cannot_retire_a_memory_it_may_not_see(
    client: TestClient[Any], make_key: KeyFactory, agent: Key, database_url: str
) -> None:
    admin = _enforce(client, make_key)
    hidden = write(
        client, admin, heading="Account plan", content="The account is on the Pro plan.",
        claim_key="account.plan", labels=["secret"],
    ).json()["memory_id"]  # fmt: skip

    # Superseding or deleting it is answered as for a memory that does not exist.
    superseding = [
        write(client, agent, heading="Account plan", content="Team plan.", supersedes=target)
        for target in (hidden, UNKNOWN)
    ]
    assert _problem(superseding[0], hidden) == _problem(superseding[1], UNKNOWN)
    assert superseding[0].status_code == 404  # naming only the id asked for, as for any
    deleting = [
        client.request(
            "DELETE", f"/v1/memories/{target}", json={"reason": "x"}, headers=agent.headers
        )
        for target in (hidden, UNKNOWN)
    ]
    assert _problem(deleting[0], hidden) == _problem(deleting[1], UNKNOWN)
    assert deleting[0].status_code == 404

    # A fact for its claim key does not retire it: both stay live, in a conflict the agent
    # does not see (an auditor, or an agent that may see both, resolves it).
    mine = write(client, agent, heading="Account plan", content="The account is on the Team plan.",
                 claim_key="account.plan")  # fmt: skip
    assert mine.status_code == 201 and hidden not in mine.text
    with psycopg.connect(database_url) as conn:
        live = conn.execute(
            "SELECT memory_id FROM memories WHERE claim_key = 'account.plan' AND deleted_at IS NULL"
        ).fetchall()
    assert {row[0] for row in live} == {hidden, mine.json()["memory_id"]}
    [conflict] = client.get("/v1/conflicts", headers=admin.headers).json()["conflicts"]
    assert {s["memory_id"] for s in conflict["sides"]} == {hidden, mine.json()["memory_id"]}
    assert client.get("/v1/conflicts", headers=agent.headers).json()["conflicts"] == []

    # What it may see it still retires, although its writes declare no purpose.
    first = write(client, agent, heading="Deploy day", content="Deploys happen on Tuesdays.")
    second = write(client, agent, heading="Deploy day", content="Deploys happen on Wednesdays.",
                   supersedes=first.json()["memory_id"])  # fmt: skip
    assert second.status_code == 201, second.text
    gone = client.request(
        "DELETE", f"/v1/memories/{second.json()['memory_id']}", json={"reason": "x"},
        headers=agent.headers,
    )  # fmt: skip
    assert gone.status_code == 200, gone.text


# 4. Sessions ------------------------------------------------------------------------------------


def test_a_session_the_policy_denies_is_not_found(
    client: TestClient[Any], make_key: KeyFactory, agent: Key
) -> None:
    admin = _enforce(client, make_key)
    created = client.post(
        "/v1/sessions",
        json={"namespace": "chat", "task": "Rotate the launch code 77815304.", "labels": ["secret"],
              "system_prompt": "You guard the launch codes."},
        headers=admin.headers,
    )  # fmt: skip
    assert created.status_code == 201, created.text
    secret = created.json()["session_id"]
    plain = client.post(
        "/v1/sessions", json={"namespace": "chat", "task": "Plan a trip."}, headers=agent.headers
    ).json()["session_id"]

    def asked(session_id: str) -> list[Any]:
        base = f"/v1/sessions/{session_id}"
        return [
            client.get(base, headers=agent.headers),
            client.post(f"{base}/context", json=PURPOSE, headers=agent.headers),
            client.get(f"{base}/turns", params=PURPOSE, headers=agent.headers),
            client.post(
                f"{base}/turns", json={"turns": [{"role": "user", "content": "hi"}]},
                headers=agent.headers,
            ),
        ]  # fmt: skip

    for hidden, unknown in zip(asked(secret), asked(UNKNOWN), strict=True):
        assert _problem(hidden, secret) == _problem(unknown, UNKNOWN)
        assert hidden.status_code == 404 and "77815304" not in hidden.text
    # A session it may see reads as before; the admin sees everything.
    assert [r.status_code for r in asked(plain)] == [200, 200, 200, 200]
    shown = client.get(f"/v1/sessions/{secret}", headers=admin.headers)
    assert shown.status_code == 200 and "77815304" in shown.json()["task"]


# 5. Idempotency keys ----------------------------------------------------------------------------


def test_an_idempotency_key_answers_for_the_namespace_it_was_used_in(
    client: TestClient[Any], make_key: KeyFactory
) -> None:
    elsewhere = make_key(agent_id="elsewhere", namespaces=("hr",))
    here = make_key(agent_id="here", namespaces=("ops",))
    key = {"idempotency_key": "retry-7"}
    assert write(client, elsewhere, namespace="hr", content="Band 4.", **key).status_code == 201
    # The same key in a namespace the first writer's is not: a fresh write, not a 409.
    fresh = write(client, here, namespace="ops", content="Deploys on Tuesdays.", **key)
    assert fresh.status_code == 201, fresh.text
    again = write(client, here, namespace="ops", content="Deploys on Tuesdays.", **key)
    assert again.status_code == 200 and again.json()["memory_id"] == fresh.json()["memory_id"]
    other = write(client, here, namespace="ops", content="Deploys on Fridays.", **key)
    assert other.status_code == 409  # a reused key in its own namespace still conflicts
    # Sessions alike.
    sessions = [
        client.post(
            "/v1/sessions", json={"namespace": namespace, "task": task, **key},
            headers=who.headers,
        )
        for who, namespace, task in ((elsewhere, "hr", "Review bands."), (here, "ops", "Deploy."))
    ]  # fmt: skip
    assert [s.status_code for s in sessions] == [201, 201], sessions[1].text


# 6. The console ---------------------------------------------------------------------------------


def test_the_console_shows_an_auditor_only_its_namespaces(
    client: TestClient[Any], make_key: KeyFactory, agent: Key
) -> None:
    hr = write(client, agent, namespace="hr", heading="Salary bands", content="Band 4 pays 80k.")
    ops = write(client, agent, namespace="ops", heading="Deploys", content="Deploys on Tuesdays.")
    auditor = make_key(role="auditor", agent_id=None, namespaces=("ops",))
    headers = {"Accept": "text/html", **auditor.headers}
    outside = client.get(f"/console/memories/{hr.json()['memory_id']}", headers=headers)
    unknown = client.get(f"/console/memories/{UNKNOWN}", headers=headers)
    assert outside.status_code == unknown.status_code == 404
    assert "80k" not in outside.text
    inside = client.get(f"/console/memories/{ops.json()['memory_id']}", headers=headers)
    assert inside.status_code == 200 and "Deploys on Tuesdays." in inside.text


# 7. Ranking signals -----------------------------------------------------------------------------


def test_no_signal_moves_with_a_denied_memory(
    client: TestClient[Any], make_key: KeyFactory, agent: Key
) -> None:
    _enforce(client, make_key)
    # In write order: the denied memory is written next to visible ones, and only it holds the
    # word one task names; the other task names a word no memory holds (both words are rare
    # alike to the embedder, so no visible memory is nearer one task than the other).
    for heading, content, labels in (
        ("Room booking", "Book the large room for the review.", []),
        ("Alpha launch checklist", "The alpha launch needs a signed checklist.", []),
        ("Follow-up", "Send the notes to the whole team afterwards.", []),
        ("Quarterly numbers", "zqxvbt revenue figures before the board meeting.", ["secret"]),
        ("Catering", "Order lunch for twelve people.", []),
    ):
        response = write(client, agent, namespace="plans", heading=heading, content=content,
                         labels=labels, memory_type="episodic")  # fmt: skip
        assert response.status_code == 201, response.text

    def answered(task: str) -> dict[str, Any]:
        body = {"task": task, "namespaces": ["plans"], "top_k": 5, **PURPOSE}
        answer: dict[str, Any] = client.post("/v1/context", json=body, headers=agent.headers).json()
        del answer["receipt_id"]
        return answer

    named, unnamed = answered("alpha zqxvbt"), answered("alpha kqjwpm")
    assert [i["memory_id"] for i in named["included"]] == [
        i["memory_id"] for i in unnamed["included"]
    ]
    assert [i["signals"] for i in named["included"]] == [i["signals"] for i in unnamed["included"]]
    assert named == unnamed


def test_a_bundle_ranked_over_what_the_policy_admits_replays_exactly_and_what_if(
    client: TestClient[Any], make_key: KeyFactory, agent: Key
) -> None:
    for heading, content, labels in (
        ("Rollback procedure", "Run atlasctl rollback --to <sha> to roll back a deploy.", []),
        ("Rollback tokens", "The rollback signing token is rotated weekly.", ["secret"]),
        ("Deploy window", "Deploys roll out on Tuesdays after the rollback drill.", []),
    ):
        assert write(client, agent, heading=heading, content=content, labels=labels).is_success
    ask = {"task": "how do I roll back a deploy with the rollback token?", **PURPOSE}
    auditor = make_key(role="auditor", agent_id=None)

    def replayed(receipt_id: str, **body: Any) -> dict[str, Any]:
        response = client.post(
            f"/v1/receipts/{receipt_id}/replay", json=body, headers=auditor.headers
        )
        assert response.status_code == 200, response.text
        result: dict[str, Any] = response.json()
        return result

    # Made under the default policy (it denies nothing), then judged under one that denies the
    # secret: the what-if ranks without it, which is no drift of the store's candidates.
    before = client.post("/v1/context", json=ask, headers=agent.headers).json()
    what_if = replayed(before["receipt_id"], mode="what_if", policy_yaml=POLICY.decode())
    assert what_if["problems"] == [] and what_if["identical"] is False
    # Made under it, a bundle ranked without the denied memory replays byte for byte.
    _enforce(client, make_key)
    after = client.post("/v1/context", json=ask, headers=agent.headers).json()
    exact = replayed(after["receipt_id"], mode="exact")
    assert exact["identical"] is True and exact["problems"] == []
