"""Under the assembler a context receipt records redaction only for the texts
the bundle renders: index lines (heading) and tier-2 blocks (heading and content). A memory
recalled but not rendered in full gets no content redaction; exact replay reproduces the
decisions. Real HTTP, real PostgreSQL; two tests run the use case on its own."""

from __future__ import annotations

import dataclasses
import hashlib
import re
from datetime import UTC, datetime, timedelta
from typing import Any

from litestar.testing import TestClient

from gateway.core.model import Candidate, ContextRequest, MemoryId
from gateway.core.preparation import Found
from gateway.core.tokens import load_tokenizer
from gateway.core.versions import ASSEMBLER, DEFAULT_PROFILE
from gateway.usecases.access.policy import PolicyInForce, request_stage
from gateway.usecases.disclosure.pipeline import Admitted, Composed, Makers, compose
from policies import Evaluation, load_bundle
from tests.conftest import Key, KeyFactory
from tests.gateway.test_memories_write import memory
from tests.gateway.test_policies_api import activate
from tests.gateway.test_replay import replay

MARKER = "[redacted:email]"
EMAIL = re.compile(r"[a-z0-9]+@example\.com")
ASK = {"task": "who do I ask about a deploy step?", "budget_tokens": 4000, "top_k": 3}
COUNT = 10

REDACT_EMAILS = b"""\
apiVersion: ctxgw/v1
kind: PolicyBundle
metadata: {name: redact-emails}
spec:
  default_decision: allow
  rules:
    - id: pii
      stage: transform
      effect: redact
      detectors: [email]
      reason: Email addresses are redacted before disclosure
"""


def heading_of(i: int) -> str:
    # Half the headings name an address too: their index lines are redacted.
    return f"Deploy step {i}" + (f" (owner ann{i}@example.com)" if i % 2 == 0 else "")


def content_of(i: int) -> str:
    return f"Ask ann{i}@example.com about deploy step {i} before you start it."


def _seed(client: TestClient[Any], agent: Key) -> dict[str, int]:
    """COUNT memories, every content with an address; their numbers by memory id."""
    items = [memory(heading=heading_of(i), content=content_of(i)) for i in range(COUNT)]
    response = client.post("/v1/memories/batch", json={"items": items}, headers=agent.headers)
    assert response.status_code == 200, response.text
    return {r["memory_id"]: i for i, r in enumerate(response.json()["items"])}


def _receipt(client: TestClient[Any], auditor: Key, receipt_id: str) -> dict[str, Any]:
    response = client.get(f"/v1/receipts/{receipt_id}", headers=auditor.headers)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()["body"]
    return body


def _context(client: TestClient[Any], agent: Key, **overrides: Any) -> dict[str, Any]:
    response = client.post("/v1/context", json={**ASK, **overrides}, headers=agent.headers)
    assert response.status_code == 200, response.text
    payload: dict[str, Any] = response.json()
    return payload


def _redacted_fields(policy: dict[str, Any]) -> dict[str, set[str]]:
    """By memory, the fields a `redact` decision rewrote."""
    found: dict[str, set[str]] = {}
    for d in policy["decisions"]:
        if d["effect"] == "redact":
            assert d["memory_id"] is not None and d["applied"] is True
            assert d["outcome"] == "redact" and d["rule_id"] == "pii"
            fields = found.setdefault(d["memory_id"], set())
            fields.update(r["field"] for r in d["redactions"])
    return found


def _outcome_fields(policy: dict[str, Any]) -> dict[str, set[str]]:
    return {o["memory_id"]: {r["field"] for r in o["redactions"]} for o in policy["outcomes"]}


def _rendered(payload: dict[str, Any]) -> tuple[set[str], set[str]]:
    """(memories in tier 2, memories with an index line)."""
    return {i["memory_id"] for i in payload["included"]}, set(payload["index"]["entries"])


def test_only_rendered_texts_are_redacted_and_exact_replay_records_the_same(
    client: TestClient[Any], agent: Key, make_key: KeyFactory
) -> None:
    number = _seed(client, agent)
    activate(client, make_key(role="admin"), REDACT_EMAILS, "enforce")
    auditor = make_key(role="auditor")

    context = _context(client, agent)
    body = _receipt(client, auditor, context["receipt_id"])
    assert body["assembler"]["version"] == ASSEMBLER.version
    # The agent is told only of what it received; here it received every memory recalled.
    assert body["policy"] == {k: v for k, v in context["policy"].items() if k != "withheld"}
    policy = body["policy"]
    full, lines = _rendered(context)
    recalled = {c["memory_id"] for c in body["candidates"]}
    assert recalled == set(number), "every memory is recalled"
    assert len(full) == ASK["top_k"] and lines == set(number), "the index lists them all"

    redacted = _redacted_fields(policy)
    assert redacted and set(redacted) <= full | lines
    # Every block is redacted in full, every index line where its heading names an address.
    for memory_id in full:
        assert redacted[memory_id] >= {"content"}
    beyond = recalled - full
    assert {e["memory_id"]: e["reason"] for e in context["excluded"]} == dict.fromkeys(
        beyond, "below_top_k"
    )
    for memory_id in beyond:
        # Recalled, its content holds an address, but only its heading was shown.
        assert EMAIL.search(content_of(number[memory_id]))
        assert "content" not in redacted.get(memory_id, set())
        assert "content" not in _outcome_fields(policy)[memory_id]
        if number[memory_id] % 2 == 0:
            assert redacted[memory_id] == {"heading"}
        else:
            assert memory_id not in redacted
            assert _outcome_fields(policy)[memory_id] == set()
    assert any(number[m] % 2 for m in beyond), "a memory beyond top_k without a decision"
    assert _outcome_fields(policy) == redacted | {m: set() for m in number if m not in redacted}

    bundle = context["bundle"]
    assert MARKER in bundle and not EMAIL.search(bundle)
    ref_of = {memory_id: ref for ref, memory_id in context["refs"].items()}
    for memory_id in full:
        assert f"\n[{ref_of[memory_id]} " in bundle  # the block is there, its address is not
        assert f"deploy step {number[memory_id]} before" in bundle

    exact = replay(client, auditor, context["receipt_id"], mode="exact").json()
    assert exact["identical"] is True and exact["problems"] == []
    replayed = _receipt(client, auditor, exact["receipt_id"])
    assert replayed["assembler"]["version"] == ASSEMBLER.version
    assert replayed["policy"]["decisions"] == policy["decisions"]
    assert replayed["policy"]["outcomes"] == policy["outcomes"]


def test_without_the_index_only_the_blocks_are_redacted(
    client: TestClient[Any], agent: Key, make_key: KeyFactory
) -> None:
    number = _seed(client, agent)
    activate(client, make_key(role="admin"), REDACT_EMAILS, "enforce")
    auditor = make_key(role="auditor")

    context = _context(client, agent, include_index=False)
    full, lines = _rendered(context)
    assert lines == set() and len(full) == ASK["top_k"]
    told = context["policy"]
    assert set(_redacted_fields(told)) == full
    body = _receipt(client, auditor, context["receipt_id"])
    policy = body["policy"]  # the whole ledger; the agent is told only of what it received
    assert {o["memory_id"] for o in told["outcomes"]} == full
    redacted = _redacted_fields(policy)
    assert set(redacted) == full
    recalled = {c["memory_id"] for c in body["candidates"]}
    assert recalled - full, "some memories are recalled but not rendered"
    for memory_id in recalled - full:
        assert _outcome_fields(policy)[memory_id] == set()
    bundle = context["bundle"]
    assert MARKER in bundle and not EMAIL.search(bundle)
    for memory_id in recalled - full:
        assert memory_id not in bundle
    assert {number[m] for m in full} == {
        i for i in range(COUNT) if f"deploy step {i} before" in bundle
    }

    exact = replay(client, auditor, context["receipt_id"], mode="exact").json()
    assert exact["identical"] is True and exact["problems"] == []
    replayed = _receipt(client, auditor, exact["receipt_id"])
    assert replayed["policy"]["decisions"] == policy["decisions"]


NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def candidate(
    memory_id: str,
    *,
    heading: str,
    content: str,
    confidence: float = 0.8,
    vector_rank: int | None = None,
    vector_distance: float | None = None,
) -> Candidate:
    """A live semantic memory in `ops`, as the store would hand it to the core."""
    tokenizer = load_tokenizer()
    return Candidate(
        memory_id=MemoryId(memory_id),
        namespace="ops",
        memory_type="semantic",
        heading=heading,
        content=content,
        confidence=confidence,
        labels=(),
        source_type=None,
        source_ref=None,
        created_at=NOW - timedelta(days=2),
        expires_at=None,
        deleted_at=None,
        superseded_by=None,
        content_sha256=hashlib.sha256(content.encode("utf-8")).hexdigest(),
        tokens=tokenizer.count(content),
        heading_tokens=tokenizer.count(heading),
        vector_rank=vector_rank,
        vector_distance=vector_distance,
        lexical_rank=None,
        lexical_score=None,
    )


def _decided(evaluation: Evaluation) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for d in evaluation.decisions:
        if d.effect == "redact":
            assert d.memory_id is not None
            found.setdefault(d.memory_id, set()).update(r.field for r in d.redactions)
    return found


def test_compose_redacts_only_what_the_bundle_renders() -> None:
    # The use case on its own, on identical inputs: no clock, no store.
    loaded = load_bundle(REDACT_EMAILS.decode(), "redact-emails.yaml")
    bundle = dataclasses.replace(loaded.bundle, mode="enforce")
    policy = PolicyInForce(loaded.digest, "enforce", bundle, activated=True)
    candidates = [
        candidate(
            f"m{i}",
            heading=heading_of(i),
            content=content_of(i),
            vector_rank=i + 1,
            vector_distance=0.05 + i / 20,
        )
        for i in range(COUNT)
    ]
    index_only = [candidate("i-x", heading="Ask x@example.com", content="")]
    index = sorted([*candidates, *index_only], key=lambda c: (-c.confidence, c.memory_id))
    found = Found(tuple(candidates), tuple(index), COUNT + 1)
    request = ContextRequest(task="t", namespaces=("ops",), budget_tokens=4000, top_k=3)
    composed = _compose(request, found, policy)
    new, new_evaluation = composed.assembly, composed.evaluation
    again = _compose(request, found, policy)
    assert again.assembly.bundle.encode() == new.bundle.encode()
    assert again.assembly == new
    full = {i.memory_id for i in new.included}
    assert len(full) == 3 and set(new.index.entries) == {*(c.memory_id for c in candidates), "i-x"}
    assert MARKER in new.bundle and not EMAIL.search(new.bundle)

    new_decided = _decided(new_evaluation)
    headed = {f"m{i}" for i in range(0, COUNT, 2)} | {"i-x"}
    rendered_only: dict[str, set[str]] = {m: {"heading"} for m in headed}
    for m in full:
        rendered_only[m] = {"content"} | rendered_only.get(m, set())
    assert new_decided == rendered_only
    # Not rendered in full: no content redaction, and the outcome's redactions say so too.
    for outcome in new_evaluation.outcomes:
        fields = {r.field for r in outcome.redactions}
        assert fields == new_decided.get(outcome.memory_id, set())
        if outcome.memory_id not in full:
            assert "content" not in fields


def _compose(request: ContextRequest, found: Found, policy: PolicyInForce) -> Composed:
    makers = Makers(ASSEMBLER, "cl100k_base", DEFAULT_PROFILE, "hash", 384)
    admitted = Admitted(policy, request_stage(policy, {}, NOW))
    return compose(request, found, admitted, makers, at=NOW)


def test_texts_the_layout_left_out_are_not_recorded_as_redacted() -> None:
    # The layout is handed redacted texts for everything it may render, since redaction changes
    # their lengths; the receipt's redaction covers only what it then showed. A long memory
    # that does not fit (over_budget) and index lines cut by the budget (index_truncated)
    # were redacted to be measured, yet appear in no decision.
    loaded = load_bundle(REDACT_EMAILS.decode(), "redact-emails.yaml")
    policy = PolicyInForce(loaded.digest, "enforce", loaded.bundle, activated=True)
    long = content_of(1) + " Then follow the runbook. " * 200
    candidates = [
        candidate(
            f"m{i}",
            heading=heading_of(i),
            content=long if i == 1 else content_of(i),
            vector_rank=i + 1,
            vector_distance=0.05 + i / 20,
        )
        for i in range(3)
    ]
    index_only = [
        candidate(f"x{i:03d}", heading=f"Ask x{i}@example.com", content="", confidence=0.5)
        for i in range(60)
    ]
    found = Found(tuple(candidates), (*candidates, *index_only), 63)
    request = ContextRequest(task="t", namespaces=("ops",), budget_tokens=500, top_k=3)
    composed = _compose(request, found, policy)
    assembly, evaluation = composed.assembly, composed.evaluation
    reasons = {e.memory_id: e.reason for e in assembly.excluded}
    assert reasons[MemoryId("m1")] == "over_budget"
    assert "index_truncated" in reasons.values()
    shown_full = {i.memory_id for i in assembly.included}
    shown = shown_full | set(assembly.index.entries)
    decided = _decided(evaluation)
    assert decided and set(decided) <= shown
    assert "m1" not in shown_full and "content" not in decided.get("m1", set())
    for memory_id, fields in decided.items():
        assert "content" not in fields or memory_id in shown_full
    assert all(
        not outcome.redactions for outcome in evaluation.outcomes if outcome.memory_id not in shown
    )


def test_search_redacts_and_records_its_hits_alone(
    client: TestClient[Any], agent: Key, make_key: KeyFactory
) -> None:
    # Search shows a heading and a snippet per hit: the candidates beyond the limit are judged
    # (every candidate accounted for) but neither redacted nor recorded as redacted.
    number = _seed(client, agent)
    activate(client, make_key(role="admin"), REDACT_EMAILS, "enforce")
    auditor = make_key(role="auditor")
    response = client.post(
        "/v1/search", json={"query": "deploy step", "limit": 3}, headers=agent.headers
    )
    assert response.status_code == 200, response.text
    found = response.json()
    hits = {r["memory_id"] for r in found["results"]}
    assert len(hits) == 3
    for result in found["results"]:
        assert not EMAIL.search(result["heading"] + result["snippet"])
        assert MARKER in result["snippet"]
    body = _receipt(client, auditor, found["receipt_id"])
    candidates = {c["memory_id"] for c in body["candidates"]}
    assert candidates > hits, "more candidates than hits"
    redacted = _redacted_fields(body["policy"])
    assert set(redacted) == hits
    assert all(fields >= {"content"} for fields in redacted.values())
    outcomes = _outcome_fields(body["policy"])
    assert {m for m, fields in outcomes.items() if fields} == hits
    assert all(r["rewritten"] for r in body["included"])
    assert set(number) >= candidates
