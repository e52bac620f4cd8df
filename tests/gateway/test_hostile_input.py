"""Hostile bodies and paths: deep nesting and NUL bytes are a 4xx problem, never a 500."""

from __future__ import annotations

from typing import Any

import pytest
from litestar.testing import TestClient

from gateway.http.validation import MAX_DEPTH
from tests.conftest import Key, KeyFactory

PROBLEM = "application/problem+json"
UNISSUED = "ctxgw.acme." + "0" * 26 + "." + "A" * 43


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 990, 5000, 100_000])
@pytest.mark.parametrize("path", ["/v1/memories", "/v1/context", "/v1/memories/batch"])
def test_deep_json_is_400_before_authentication(
    client: TestClient[Any], depth: int, path: str
) -> None:
    body = b'{"items": ' + b"[" * depth + b"]" * depth + b"}"
    # A key of the right shape that no one issued: the body is judged before the key is looked
    # up. (With no Authorization header at all a /v1 route answers 401 before reading anything.)
    headers = {"content-type": "application/json", "authorization": f"Bearer {UNISSUED}"}
    response = client.post(path, content=body, headers=headers)
    assert response.status_code == 400, response.text
    assert response.headers["content-type"].startswith(PROBLEM)
    assert response.json()["code"] == "too_deep"
    assert str(MAX_DEPTH) in response.json()["detail"]


def test_nesting_up_to_the_bound_is_judged_on_its_content(
    client: TestClient[Any], agent: Key
) -> None:
    # `labels` nested exactly MAX_DEPTH deep (the object itself is level 1): a 422 about the
    # field, not a 400 about depth.
    inner = "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1)
    body = f'{{"namespace": "ops", "heading": "h", "content": "c", "labels": {inner}}}'
    response = client.post(
        "/v1/memories", content=body, headers={**agent.headers, "content-type": "application/json"}
    )
    assert response.status_code == 422, response.text
    assert [e["field"] for e in response.json()["errors"]] == ["labels"]


@pytest.mark.parametrize(
    ("method", "path", "role"),
    [
        ("GET", "/v1/receipts/%00", "auditor"),
        ("GET", "/v1/receipts/a%00b/verify", "auditor"),
        ("GET", "/v1/receipts/%00/proof", "auditor"),
        ("POST", "/v1/receipts/%00/replay", "auditor"),
        ("GET", "/v1/policies/%00", "admin"),
        ("POST", "/v1/policies/%00/activate", "admin"),
        ("DELETE", "/v1/memories/%00", "agent"),
    ],
)
def test_nul_in_a_path_parameter_is_a_4xx_problem(
    client: TestClient[Any], make_key: KeyFactory, method: str, path: str, role: str
) -> None:
    key = make_key(role=role, agent_id=None if role != "agent" else "agent-1")
    body = {"reason": "x"} if method == "DELETE" else {"mode": "exact"}
    response = client.request(method, path, headers=key.headers, json=body)
    assert response.status_code in (400, 404), response.text
    assert response.headers["content-type"].startswith(PROBLEM)


def test_two_authorization_headers_are_refused(
    client: TestClient[Any], agent: Key, make_key: KeyFactory
) -> None:
    # Which one counts would depend on who reads the request (a proxy, the gateway): neither.
    admin = make_key(role="admin")
    headers = [
        ("Authorization", agent.headers["Authorization"]),
        ("Authorization", admin.headers["Authorization"]),
    ]
    for method, path in (("GET", "/v1/policies/active"), ("POST", "/v1/search")):
        response = client.request(method, path, headers=headers, json={"query": "x"})
        assert response.status_code == 401, (path, response.text)
        assert response.json()["code"] == "ambiguous_credentials"
