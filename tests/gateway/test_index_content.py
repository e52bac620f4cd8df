"""Index entries (shown by heading only) are gathered without their contents unless a rule of
the policy in force reads `memory.content`: a large budget reaches thousands of index lines, and
redaction records nothing for content that was never disclosed. Real HTTP, real PostgreSQL."""

from __future__ import annotations

from typing import Any

from litestar.testing import TestClient

from tests.conftest import Key, KeyFactory
from tests.gateway.test_memories_write import memory
from tests.gateway.test_policies_api import activate
from tests.gateway.test_replay import replay

ASK = {"task": "how do I roll back a deploy?", "budget_tokens": 4000, "top_k": 2}


def _deny_by_content(numbers: set[int]) -> bytes:
    """A policy denying, by a rule on `memory.content`, the memories whose address is one of
    `ann<number>@`."""
    alternatives = "|".join(str(n) for n in sorted(numbers))
    return f"""\
apiVersion: ctxgw/v1
kind: PolicyBundle
metadata: {{name: deny-by-content}}
spec:
  default_decision: allow
  rules:
    - id: no-named-people
      effect: deny
      reason: Their contents name people this agent may not see
      when: {{field: memory.content, op: regex, value: "ann({alternatives})@"}}
""".encode()


def _seed(client: TestClient[Any], agent: Key) -> dict[str, int]:
    """60 memories (more than recall's 40 per retriever, so some are index-only), each content
    with an email address `ann<n>@`; their numbers by memory id."""
    items = [
        memory(heading=f"Runbook note {i}", content=f"Ask ann{i}@example.com about step {i}.")
        for i in range(60)
    ]
    response = client.post("/v1/memories/batch", json={"items": items}, headers=agent.headers)
    assert response.status_code == 200, response.text
    return {r["memory_id"]: i for i, r in enumerate(response.json()["items"])}


def _receipt(client: TestClient[Any], auditor: Key, receipt_id: str) -> dict[str, Any]:
    body: dict[str, Any] = client.get(f"/v1/receipts/{receipt_id}", headers=auditor.headers).json()[
        "body"
    ]
    return body


def test_index_only_memories_are_judged_without_content_unless_a_rule_reads_it(
    client: TestClient[Any], agent: Key, make_key: KeyFactory
) -> None:
    ids = _seed(client, agent)
    auditor = make_key(role="auditor")

    # The shipped default reads no content (its redaction rules are log_only): index-only
    # memories get no decisions about content nobody was shown.
    first = client.post("/v1/context", json=ASK, headers=agent.headers).json()
    body = _receipt(client, auditor, first["receipt_id"])
    candidates = {c["memory_id"] for c in body["candidates"]}
    index_only = set(body["index"]["entries"]) - candidates
    assert index_only, "the scenario needs index-only memories"
    decided = {d["memory_id"] for d in body["policy"]["decisions"] if d["memory_id"]}
    assert decided and decided <= candidates
    assert replay(client, auditor, first["receipt_id"], mode="exact").json()["identical"] is True

    # A rule on memory.content: index entries are gathered with their contents and judged on
    # them. Which memories recall reaches depends on the HNSW graph (approximate, built anew per
    # database), so the denied ones are picked from what this call showed: every index-only one
    # and two candidates.
    secret = index_only | set(sorted(candidates)[:2])
    activate(client, make_key(role="admin"), _deny_by_content({ids[m] for m in secret}), "enforce")
    second = client.post("/v1/context", json=ASK, headers=agent.headers).json()
    body = _receipt(client, auditor, second["receipt_id"])
    denied = {e["memory_id"] for e in body["excluded"] if e["reason"] == "policy_denied"}
    assert denied == secret
    assert not secret & set(body["index"]["entries"])
    assert secret - {c["memory_id"] for c in body["candidates"]}, "some were index-only"
    assert replay(client, auditor, second["receipt_id"], mode="exact").json()["identical"] is True
