"""Response bodies: one RFC 3339 form for every instant, the batch's two item shapes, and
readiness failing closed with a problem that does not echo the driver."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from litestar.testing import TestClient

from tests.conftest import Key, KeyFactory
from tests.gateway.test_memories_write import memory

# The form receipt bodies use (gateway.usecases.receiptlog.recorder.rfc3339): UTC, microseconds, Z.
INSTANT = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")
STRICT = (Path(__file__).resolve().parents[2] / "policies/bundles/strict.yaml").read_bytes()


def test_every_instant_is_one_rfc3339_form(
    client: TestClient[Any], agent: Key, make_key: KeyFactory
) -> None:
    auditor, admin = make_key(role="auditor"), make_key(role="admin")
    memory_id = client.post("/v1/memories", json=memory(), headers=agent.headers).json()[
        "memory_id"
    ]
    deleted = client.request(
        "DELETE", f"/v1/memories/{memory_id}", json={"reason": "wrong"}, headers=agent.headers
    ).json()
    receipt_id = client.post("/v1/search", json={"query": "x"}, headers=agent.headers).json()[
        "receipt_id"
    ]
    [listed] = client.get("/v1/receipts", headers=auditor.headers).json()["receipts"]
    receipt = client.get(f"/v1/receipts/{receipt_id}", headers=auditor.headers).json()
    digest = client.post(
        "/v1/policies",
        content=STRICT,
        headers={**admin.headers, "content-type": "application/yaml"},
    ).json()["digest"]
    activated = client.post(
        f"/v1/policies/{digest}/activate", json={"mode": "log_only"}, headers=admin.headers
    ).json()
    active = client.get("/v1/policies/active", headers=admin.headers).json()
    stored = client.get(f"/v1/policies/{digest}", headers=admin.headers).json()
    instants = [
        deleted["deleted_at"],
        listed["issued_at"],
        receipt["issued_at"],
        activated["activated_at"],
        active["uploaded_at"],
        stored["uploaded_at"],
    ]
    assert all(INSTANT.match(instant) for instant in instants), instants
    # The row and the signed body spell the receipt's instant the same way, byte for byte.
    assert receipt["issued_at"] == listed["issued_at"] == receipt["body"]["issued_at"]


def test_a_batch_reports_written_and_refused_items_in_their_own_shapes(
    client: TestClient[Any], agent: Key
) -> None:
    unknown = "0" * 26
    body = client.post(
        "/v1/memories/batch",
        json={"items": [memory(), {**memory(), "supersedes": unknown}]},
        headers=agent.headers,
    ).json()
    written, refused = body["items"]
    assert list(written) == ["index", "status", "memory_id", "created", "supersedes"]
    assert (written["status"], written["created"], written["supersedes"]) == (201, True, None)
    assert refused == {
        "index": 1,
        "status": 404,
        "code": "not_found",
        "detail": f"supersedes: memory {unknown} not found",
    }
    assert (body["written"], body["failed"]) == (1, 1)


def test_not_ready_is_a_503_problem_that_names_what_failed(client: TestClient[Any]) -> None:
    assert client.get("/readyz").json() == {"status": "ready"}
    runtime = client.app.state.runtime
    client.blocking_portal.call(runtime.pool.close)  # the database is gone for this process
    response = client.get("/readyz")
    assert response.status_code == 503
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json() == {
        "type": "/problems/not_ready",
        "title": "Service unavailable",
        "status": 503,
        "code": "not_ready",
        "detail": "the database does not answer; nothing was disclosed (fail closed)",
    }
