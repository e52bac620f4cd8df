"""The index's "…N more" count under a policy that can deny: withheld, so that an agent does not
learn how many memories it may not see. Real HTTP, real PostgreSQL."""

from __future__ import annotations

import re
from typing import Any

import pytest
from litestar.testing import TestClient

from gateway.core.render import more_line
from gateway.core.versions import ASSEMBLER
from tests.conftest import Key, KeyFactory
from tests.gateway.test_memories_write import memory
from tests.gateway.test_policies_api import activate

# The index points where the full tier stops (assembler 2026-12-04.2): its "more" line.
COUNTED = re.compile(r"…(\d+) more: search for them, or fetch a ref above in full")
MORE_UNCOUNTED = more_line(0, with_count=False, pointing=True)
# A small budget: the index cannot list the 20 ops memories, so it ends with a "more" line.
ASK = {"task": "how do I roll back a deploy?", "budget_tokens": 300, "top_k": 2}

DENY_HR = b"""\
apiVersion: ctxgw/v1
kind: PolicyBundle
metadata: {name: no-hr}
spec:
  mode: enforce
  default_decision: allow
  rules:
    - id: no-hr
      effect: deny
      when: {field: memory.namespace, op: eq, value: hr}
      reason: HR memories are not for this agent
"""
DENY_HR_LOG_ONLY_RULE = DENY_HR.replace(
    b"      effect: deny\n", b"      effect: deny\n      mode: log_only\n"
)
OPS_ONLY_BY_DEFAULT = b"""\
apiVersion: ctxgw/v1
kind: PolicyBundle
metadata: {name: ops-only}
spec:
  mode: enforce
  default_decision: deny
  rules:
    - id: ops
      effect: allow
      when: {field: memory.namespace, op: eq, value: ops}
      reason: Only operations memories are for this agent
"""


def write(client: TestClient[Any], key: Key, namespace: str, count: int, start: int = 0) -> None:
    # The hr memories rank below the ops ones in the index (lower confidence), and all memories
    # stay within what recall returns (40 a retriever for top_k 2): hr memories could otherwise
    # push ops ones out of the store's index cut or out of recall, which changes the bundle for
    # reasons other than the count.
    confidence = 0.9 if namespace == "ops" else 0.3
    items = [
        memory(
            namespace=namespace,
            heading=f"{namespace} note {n}",
            content=f"Note {n} of the {namespace} team.",
            confidence=confidence,
        )
        for n in range(start, start + count)
    ]
    response = client.post("/v1/memories/batch", json={"items": items}, headers=key.headers)
    assert response.status_code == 200, response.text


def context(client: TestClient[Any], key: Key) -> Any:
    response = client.post("/v1/context", json=ASK, headers=key.headers)
    assert response.status_code == 200, response.text
    return response.json()


def receipt_body(client: TestClient[Any], key: Key, receipt_id: str) -> Any:
    return client.get(f"/v1/receipts/{receipt_id}", headers=key.headers).json()["body"]


@pytest.mark.parametrize(
    "policy", [DENY_HR, OPS_ONLY_BY_DEFAULT], ids=["enforced-deny-rule", "default-deny"]
)
def test_an_enforced_deny_withholds_the_count_whatever_is_hidden(
    client: TestClient[Any], agent: Key, make_key: KeyFactory, policy: bytes
) -> None:
    activate(client, make_key(role="admin"), policy, "enforce")
    write(client, agent, "ops", 20)
    write(client, agent, "hr", 8)
    first = context(client, agent)
    assert 0 < first["index"]["shown"] < 20
    assert first["bundle"].count(MORE_UNCOUNTED) == 1
    assert not COUNTED.search(first["bundle"]) and "hr note" not in first["bundle"]

    write(client, agent, "hr", 5, start=8)  # five more the agent may not see: same bytes
    second = context(client, agent)
    assert second["bundle"] == first["bundle"]
    assert second["bundle_sha256"] == first["bundle_sha256"]

    # The receipt tells the auditor the count was withheld, and keeps the true live total.
    body = receipt_body(client, make_key(role="auditor"), second["receipt_id"])
    assert body["assembler"]["version"] == ASSEMBLER.version
    assert body["index"]["count_withheld"] is True
    assert body["index"]["total_live"] == body["index_input"]["total_live"] == 33


@pytest.mark.parametrize(
    ("policy", "mode"),
    [(None, None), (DENY_HR, "log_only"), (DENY_HR_LOG_ONLY_RULE, "enforce")],
    ids=["shipped-default", "bundle-log-only", "rule-log-only"],
)
def test_without_an_enforced_deny_the_count_is_stated_as_before(
    client: TestClient[Any],
    agent: Key,
    make_key: KeyFactory,
    policy: bytes | None,
    mode: str | None,
) -> None:
    if policy is not None and mode is not None:
        activate(client, make_key(role="admin"), policy, mode)
    write(client, agent, "ops", 20)
    write(client, agent, "hr", 8)
    body = context(client, agent)
    found = COUNTED.search(body["bundle"])
    assert found is not None and MORE_UNCOUNTED not in body["bundle"]
    # Every live memory neither listed nor shown in full.
    assert int(found.group(1)) == 28 - body["index"]["shown"] - len(body["included"])
    assert body["index"]["count_withheld"] is False


def test_exact_replay_reproduces_the_withheld_form(
    client: TestClient[Any], agent: Key, make_key: KeyFactory
) -> None:
    activate(client, make_key(role="admin"), DENY_HR, "enforce")
    write(client, agent, "ops", 20)
    write(client, agent, "hr", 8)
    original = context(client, agent)
    write(client, agent, "hr", 5, start=8)
    auditor = make_key(role="auditor")
    exact = client.post(
        f"/v1/receipts/{original['receipt_id']}/replay",
        json={"mode": "exact"},
        headers=auditor.headers,
    ).json()
    assert exact["identical"] is True and exact["problems"] == []
    assert exact["replayed"]["bundle"] == original["bundle"]
    replayed = receipt_body(client, auditor, exact["receipt_id"])
    assert replayed["assembler"]["version"] == ASSEMBLER.version
    assert replayed["index"]["count_withheld"] is True
