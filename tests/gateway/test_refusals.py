"""Policy refusals leave evidence: every disclosure an enforced `require` refuses writes a signed,
chained receipt of kind `refusal` before the 403, and that receipt can be listed, verified
offline and replayed (exact and what_if)."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
import pytest
from litestar.testing import TestClient

from gateway.shell.settings import Settings
from receipts import Envelope, Keyring, decode_body, leaf_hash, verify_export, verify_receipt
from tests.conftest import Key, KeyFactory
from tests.gateway.test_context import seed
from tests.gateway.test_policies_api import STRICT, activate
from tests.gateway.test_replay import replay

PURPOSE_RULE = {"rule_id": "need-purpose", "reason": "Every assembly declares a purpose"}
EMPTY = {"sha256": hashlib.sha256(b"").hexdigest(), "bytes": 0}
PROBLEM_FIELDS = {"type", "title", "status", "code", "detail", "instance", "receipt_id"}
LENIENT = b"""\
apiVersion: ctxgw/v1
kind: PolicyBundle
metadata: {name: lenient}
spec:
  mode: enforce
  combining: deny-overrides
  default_decision: allow
  rules:
    - id: withhold-secrets
      effect: deny
      when: {field: memory.labels, op: contains_any, value: [secret]}
      reason: Secrets are never disclosed
"""
# Each refusable disclosure: its path and a request body without a purpose, given seeded ids.
ASKS: dict[str, tuple[str, Callable[[list[str]], dict[str, Any]]]] = {
    "context": ("/v1/context", lambda ids: {"task": "roll back", "budget_tokens": 500}),
    "search": ("/v1/search", lambda ids: {"query": "refund", "limit": 3}),
    "timeline": ("/v1/timeline", lambda ids: {"ids": ids[:2]}),
    "fetch": ("/v1/fetch", lambda ids: {"ids": ids[:2]}),
}


def keyring_of(settings: Settings) -> Keyring:
    return Keyring.load(settings.data_dir / "keys" / "keyring.json")


def refusal_count(database_url: str) -> int:
    with psycopg.connect(database_url) as conn:
        row = conn.execute("SELECT count(*) FROM receipts WHERE kind = 'refusal'").fetchone()
    assert row is not None
    return int(row[0])


@pytest.mark.parametrize("kind", list(ASKS))
def test_a_refused_disclosure_leaves_a_verifiable_refusal_receipt(
    kind: str, client: TestClient[Any], agent: Key, make_key: KeyFactory, settings: Settings
) -> None:
    path, ask_for = ASKS[kind]
    ask = ask_for(seed(client, agent))
    auditor = make_key(role="auditor")
    digest = activate(client, make_key(role="admin"), STRICT, "enforce")

    refused = client.post(path, json=ask, headers=agent.headers)
    assert refused.status_code == 403
    problem = refused.json()
    assert set(problem) == PROBLEM_FIELDS
    assert problem["code"] == "policy_refused" and problem["status"] == 403
    assert problem["instance"] == path
    assert "Every assembly declares a purpose" in problem["detail"]
    refusal_id = problem["receipt_id"]

    receipt = client.get(f"/v1/receipts/{refusal_id}", headers=auditor.headers).json()
    body = receipt["body"]
    assert receipt["kind"] == body["kind"] == "refusal"
    assert receipt["bundle_sha256"] is None and receipt["policy_digest"] == digest
    assert body["disclosure"] == kind
    assert body["refused"] == PURPOSE_RULE
    subject = body["subject"]
    assert (subject["agent_id"], subject["key_id"], subject["role"], subject["purpose"]) == (
        "agent-1", agent.key_id, "agent", None,
    )  # fmt: skip
    assert body["at"] == body["issued_at"]
    policy = body["policy"]
    assert (policy["digest"], policy["mode"], policy["outcomes"]) == (digest, "enforce", [])
    [decision] = [d for d in policy["decisions"] if d["rule_id"] == "need-purpose"]
    assert (decision["stage"], decision["outcome"], decision["applied"]) == (
        "request", "refuse", True,
    )  # fmt: skip
    assert decision["evidence"][0]["field"] == "request.purpose"
    assert body["bundle"] == EMPTY  # it delivered nothing
    assert not {"candidates", "included", "excluded", "index", "assembler"} & set(body)
    # The owning agent may read its own refusal's row, like any of its receipts'.
    assert client.get(f"/v1/receipts/{refusal_id}", headers=agent.headers).status_code == 200

    # The same request with a purpose proceeds, and its receipt continues the chain.
    allowed = client.post(path, json={**ask, "purpose": "support"}, headers=agent.headers)
    assert allowed.status_code == 200, allowed.text
    allowed_receipt = client.get(
        f"/v1/receipts/{allowed.json()['receipt_id']}", headers=auditor.headers
    ).json()
    after = allowed_receipt["body"]
    # The refusal recorded the complete request, exactly as the endpoint records it when it
    # discloses.
    assert body["request"] == {**after["request"], "purpose": None}
    assert after["log"]["seq"] == body["log"]["seq"] + 1
    refusal_envelope = Envelope.from_json(receipt["envelope"])
    assert after["log"]["prev"] == leaf_hash(refusal_envelope.payload).hex()
    assert decode_body(refusal_envelope.payload) == body

    # Offline: the signature alone, then the whole exported log and its checkpoint.
    keyring = keyring_of(settings)
    verify_receipt(refusal_envelope, agent.tenant_id, keyring.public())
    export = client.get("/v1/receipts/export", headers=auditor.headers)
    report = verify_export(
        export.text.splitlines(), keyring, bundle=b"", receipt_id=refusal_id
    )  # raises on any failure
    assert report.complete and report.receipt is not None
    assert report.receipt.seq == body["log"]["seq"] and report.receipt.bundle_checked
    assert report.last_seq == after["log"]["seq"]
    verified = client.get(f"/v1/receipts/{refusal_id}/verify", headers=auditor.headers).json()
    assert verified["valid"], verified

    listed = client.get("/v1/receipts?kind=refusal", headers=auditor.headers).json()["receipts"]
    assert [r["receipt_id"] for r in listed] == [refusal_id]

    # Exact replay judges the recorded request again: the same rule refuses.
    exact = replay(client, auditor, refusal_id, mode="exact")
    assert exact.status_code == 200, exact.text
    assert exact.json()["identical"] is True
    assert exact.json()["replayed"]["refused"] == PURPOSE_RULE


def test_refusals_verify_with_the_receipts_cli(
    client: TestClient[Any], agent: Key, make_key: KeyFactory, settings: Settings, tmp_path: Path
) -> None:
    from receipts.__main__ import main

    activate(client, make_key(role="admin"), STRICT, "enforce")
    refusal_id = client.post("/v1/search", json={"query": "x"}, headers=agent.headers).json()[
        "receipt_id"
    ]
    client.post("/v1/search", json={"query": "x", "purpose": "ops"}, headers=agent.headers)
    export = client.get("/v1/receipts/export", headers=make_key(role="auditor").headers)
    (tmp_path / "export.jsonl").write_text(export.text)
    (tmp_path / "empty").write_bytes(b"")
    keyring = str(settings.data_dir / "keys" / "keyring.json")
    args = ["verify", str(tmp_path / "export.jsonl"), "--keyring", keyring]
    assert main(args) == 0
    assert main([*args, "--receipt", refusal_id, "--bundle", str(tmp_path / "empty")]) == 0
    (tmp_path / "something").write_bytes(b"something")
    assert main([*args, "--receipt", refusal_id, "--bundle", str(tmp_path / "something")]) == 1


@pytest.mark.parametrize("kind", list(ASKS))
def test_a_refusal_that_cannot_be_receipted_is_still_refused(
    kind: str,
    client: TestClient[Any],
    agent: Key,
    make_key: KeyFactory,
    database_url: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    path, ask_for = ASKS[kind]
    ask = ask_for(seed(client, agent))
    activate(client, make_key(role="admin"), STRICT, "enforce")
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("REVOKE INSERT ON receipts FROM ctxgw_app")
    with caplog.at_level(logging.ERROR):
        response = client.post(path, json=ask, headers=agent.headers)
    assert response.status_code == 403
    problem = response.json()
    assert set(problem) == PROBLEM_FIELDS  # no content, no driver error text
    assert problem["code"] == "policy_refused" and problem["receipt_id"] is None
    assert "permission" not in problem["detail"]
    assert "could not be receipted" in caplog.text
    assert refusal_count(database_url) == 0


def test_a_refusal_whose_receipt_fails_to_commit_is_still_refused(
    client: TestClient[Any], agent: Key, make_key: KeyFactory, database_url: str
) -> None:
    activate(client, make_key(role="admin"), STRICT, "enforce")
    # A deferred constraint trigger fails the transaction at COMMIT, after the receipt was
    # written: the one failure the use case cannot see.
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute(
            "CREATE FUNCTION fail_at_commit() RETURNS trigger LANGUAGE plpgsql"
            " AS $$ BEGIN RAISE EXCEPTION 'refusals may not commit'; END $$"
        )
        conn.execute(
            "CREATE CONSTRAINT TRIGGER refusals_fail AFTER INSERT ON receipts"
            " DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (NEW.kind = 'refusal')"
            " EXECUTE FUNCTION fail_at_commit()"
        )
    response = client.post("/v1/search", json={"query": "refund"}, headers=agent.headers)
    assert response.status_code == 403
    assert response.json()["code"] == "policy_refused"
    assert response.json()["receipt_id"] is None
    assert "refusals may not commit" not in response.text
    assert refusal_count(database_url) == 0


def test_an_auditors_historical_context_is_refused_and_receipted_at_as_of(
    client: TestClient[Any], agent: Key, make_key: KeyFactory
) -> None:
    seed(client, agent)
    activate(client, make_key(role="admin"), STRICT, "enforce")
    as_of = datetime.now(UTC).isoformat()  # the policy in force at as_of judges
    auditor = make_key(role="auditor", agent_id=None)
    refused = client.post(
        "/v1/context", json={"task": "roll back", "as_of": as_of}, headers=auditor.headers
    )
    assert refused.status_code == 403, refused.text
    receipt_id = refused.json()["receipt_id"]
    body = client.get(f"/v1/receipts/{receipt_id}", headers=auditor.headers).json()["body"]
    assert body["subject"]["role"] == "auditor"
    assert body["request"]["as_of"] == body["at"] != body["issued_at"]
    assert datetime.fromisoformat(body["at"]) == datetime.fromisoformat(as_of)
    exact = replay(client, auditor, receipt_id, mode="exact").json()
    assert exact["identical"] is True


def test_replaying_a_refusal(client: TestClient[Any], agent: Key, make_key: KeyFactory) -> None:
    digest = activate(client, make_key(role="admin"), STRICT, "enforce")
    auditor = make_key(role="auditor")
    refusal_id = client.post("/v1/search", json={"query": "refund"}, headers=agent.headers).json()[
        "receipt_id"
    ]

    exact = replay(client, auditor, refusal_id, mode="exact")
    assert exact.status_code == 200, exact.text
    result = exact.json()
    assert result["identical"] is True and result["problems"] == []
    assert result["original"] == {
        "receipt_id": refusal_id, "kind": "refusal", "disclosure": "search",
        "policy_digest": digest, "outcome": "refuse", "refused": PURPOSE_RULE,
    }  # fmt: skip
    assert result["replayed"]["outcome"] == "refuse"
    assert result["replayed"]["policy_digest"] == digest
    assert result["bundle"]["delivered"] is False and result["bundle"]["reproducible"] is False
    assert "no bundle was delivered" in result["bundle"]["detail"]
    assert result["diff"]["decision_changes"] == []
    written = client.get(f"/v1/receipts/{result['receipt_id']}", headers=auditor.headers).json()
    assert written["kind"] == "refusal_replay" and written["parent_receipt_id"] == refusal_id
    assert written["body"]["bundle"] == EMPTY
    assert written["body"]["replay"]["mode"] == "exact"
    assert written["body"]["subject"]["key_id"] == auditor.key_id
    verified = client.get(f"/v1/receipts/{result['receipt_id']}/verify", headers=auditor.headers)
    assert verified.json()["valid"], verified.json()

    # Under a policy without the require, the request would proceed; its bundle is unknowable.
    lenient = replay(client, auditor, refusal_id, mode="what_if", policy_yaml=LENIENT.decode())
    assert lenient.status_code == 200, lenient.text
    result = lenient.json()
    assert result["identical"] is False
    assert result["replayed"]["outcome"] == "proceed" and result["replayed"]["refused"] is None
    assert [p["code"] for p in result["problems"]] == ["no_candidates_recorded"]
    assert result["bundle"]["reproducible"] is False
    assert result["diff"] == {
        "outcome": {"before": "refuse", "after": "proceed"},
        "decision_changes": [{"rule_id": "need-purpose", "before": "refuse", "after": None}],
    }
    # Under log_only the require is evaluated and recorded, not enforced.
    log_only = STRICT.replace(b"  mode: enforce", b"  mode: log_only")
    assert log_only != STRICT
    watched = replay(client, auditor, refusal_id, mode="what_if", policy_yaml=log_only.decode())
    assert watched.json()["replayed"]["outcome"] == "proceed"
    assert watched.json()["diff"]["decision_changes"] == [
        {"rule_id": "need-purpose", "before": "refuse", "after": "proceed"}
    ]
    # The same bundle as a candidate refuses again, by the same rule.
    same = replay(client, auditor, refusal_id, mode="what_if", policy_digest=digest).json()
    assert same["identical"] is True

    current = replay(client, auditor, refusal_id, mode="current")
    assert current.status_code == 422
    assert current.json()["code"] == "replay_unsupported"
    assert current.json()["errors"][0]["field"] == "mode"
    again = replay(client, auditor, exact.json()["receipt_id"], mode="exact")
    assert again.status_code == 422 and again.json()["code"] == "replay_unsupported"
    assert refusal_id in again.json()["detail"]
    assert replay(client, agent, refusal_id, mode="exact").status_code == 403

    # Refusals and their replays stay out of the policy what-if window (no bundle to compare).
    window = client.post(
        "/v1/policies/what-if", json={"policy_yaml": LENIENT.decode()}, headers=auditor.headers
    )
    assert window.status_code == 200 and window.json()["receipts_evaluated"] == 0
    listed = client.get("/v1/receipts?kind=refusal", headers=auditor.headers).json()["receipts"]
    assert [r["receipt_id"] for r in listed] == [refusal_id]


def test_log_only_require_records_and_refuses_nothing(
    client: TestClient[Any], agent: Key, make_key: KeyFactory, database_url: str
) -> None:
    activate(client, make_key(role="admin"), STRICT, "log_only")
    response = client.post("/v1/search", json={"query": "refund"}, headers=agent.headers)
    assert response.status_code == 200
    [decision] = [
        d for d in response.json()["policy"]["decisions"] if d["rule_id"] == "need-purpose"
    ]
    assert (decision["applied"], decision["outcome_if_enforced"]) == (False, "refuse")
    assert refusal_count(database_url) == 0
