"""Bad input gets a clear RFC 9457 problem naming the field; never a 500 or a partial write."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest
from litestar.testing import TestClient

from tests.conftest import Key, KeyFactory
from tests.gateway.test_memories_write import memory

PROBLEM = "application/problem+json"


def post(client: TestClient[Any], key: Key, body: Any, path: str = "/v1/memories") -> Any:
    return client.post(path, json=body, headers=key.headers)


def error_fields(response: Any) -> dict[str, str]:
    assert response.headers["content-type"].startswith(PROBLEM), response.text
    return {e["field"]: e["message"] for e in response.json().get("errors", [])}


@pytest.mark.parametrize(
    ("overrides", "field", "fragment"),
    [
        ({"heading": "h" * 201}, "heading", "length <= 200"),
        ({"heading": ""}, "heading", "length >= 1"),
        ({"confidence": 1.5}, "confidence", "<= 1.0"),
        ({"confidence": -0.1}, "confidence", ">= 0.0"),
        ({"confidence": "high"}, "confidence", "Expected `float`"),
        ({"memory_type": "dream"}, "memory_type", "expected one of semantic, episodic"),
        ({"content": "a\x00b"}, "content", "NUL"),
        ({"heading": "nul\x00"}, "heading", "NUL"),
        ({"labels": ["ok", "bad\x00"]}, "labels/1", "NUL"),
        ({"expires_at": "2030-01-01T00:00:00"}, "expires_at", "timezone"),
        ({"namespace": "no spaces"}, "namespace", "matching regex"),
        ({"supersedes": "not-a-ulid"}, "supersedes", "matching regex"),
        ({"colour": "blue"}, "colour", "unknown field"),
        ({"confidenc": 0.2}, "confidenc", "did you mean 'confidence'"),
        ({"content": "x" * (64 * 1024 + 1)}, "content", "exceeds the limit"),
    ],
)
def test_each_bad_field_is_named(
    client: TestClient[Any], agent: Key, overrides: dict[str, Any], field: str, fragment: str
) -> None:
    response = post(client, agent, memory(**overrides))
    assert response.status_code == 422
    fields = error_fields(response)
    assert field in fields, fields
    assert fragment in fields[field]
    assert response.json()["code"] == "invalid_request"
    assert response.json()["status"] == 422


def test_every_bad_field_is_listed_at_once(client: TestClient[Any], agent: Key) -> None:
    body = {"heading": "h" * 300, "confidence": 9, "memory_type": "x", "extra": 1}
    fields = error_fields(post(client, agent, body))
    assert set(fields) == {"namespace", "content", "heading", "confidence", "memory_type", "extra"}


def test_missing_fields_are_required(client: TestClient[Any], agent: Key) -> None:
    fields = error_fields(post(client, agent, {}))
    assert fields == {"namespace": "required", "heading": "required", "content": "required"}


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        (b"{not json", "malformed_json"),
        (b"", "empty_body"),
        (b'{"heading": "\xff\xfe"}', "malformed_json"),
    ],
)
def test_unparseable_bodies_are_400(
    client: TestClient[Any], agent: Key, raw: bytes, code: str
) -> None:
    response = client.post(
        "/v1/memories",
        content=raw,
        headers={**agent.headers, "content-type": "application/json"},
    )
    assert response.status_code == 400
    assert response.json()["code"] == code


def test_json_that_is_not_an_object(client: TestClient[Any], agent: Key) -> None:
    response = post(client, agent, [1, 2, 3])
    assert response.status_code == 422
    assert error_fields(response) == {"/": "expected a JSON object"}


def test_body_over_one_mebibyte_is_413(client: TestClient[Any], agent: Key) -> None:
    response = post(client, agent, memory(content="x" * (1024 * 1024 + 10)))
    assert response.status_code == 413
    assert response.json()["code"] == "payload_too_large"


def test_fetch_limits(client: TestClient[Any], agent: Key) -> None:
    too_many = post(client, agent, {"ids": ["01J00000000000000000000000"] * 51}, "/v1/fetch")
    assert too_many.status_code == 422 and "ids" in error_fields(too_many)
    empty = post(client, agent, {"ids": []}, "/v1/fetch")
    assert empty.status_code == 422


def test_no_partial_write_on_any_rejection(
    client: TestClient[Any], agent: Key, database_url: str
) -> None:
    for body in (memory(heading="h" * 201), memory(content="\x00"), {"items": [memory(), {}]}):
        path = "/v1/memories/batch" if "items" in body else "/v1/memories"
        assert post(client, agent, body, path).status_code == 422
    with psycopg.connect(database_url) as conn:
        assert conn.execute("SELECT count(*) FROM memories").fetchone() == (0,)


def test_unknown_route_is_a_problem(client: TestClient[Any], agent: Key) -> None:
    response = client.get("/v1/nothing-here", headers=agent.headers)
    assert response.status_code == 404
    assert response.json()["code"] == "route_not_found"


def test_namespace_the_key_may_not_write(client: TestClient[Any], make_key: KeyFactory) -> None:
    scoped = make_key(namespaces=("support",))
    response = post(client, scoped, memory(namespace="ops"))
    assert response.status_code == 403
    assert response.json()["code"] == "namespace_forbidden"
    assert "ops" in response.json()["detail"]


def test_a_task_of_whitespace_alone_is_named_as_such(client: TestClient[Any], agent: Key) -> None:
    """A task of spaces (any of Unicode's) is told so, not shown the pattern that refused it."""
    response = post(client, agent, {"task": " \t\u3000\n"}, "/v1/context")
    assert response.status_code == 422
    assert error_fields(response)["task"] == "must contain more than whitespace"
