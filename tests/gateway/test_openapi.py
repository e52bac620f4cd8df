"""The OpenAPI document (/schema) describes every request body and query the gateway decodes,
from the same wire types that decode them (gateway.http.openapi)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from litestar.testing import TestClient

from gateway.requests import NOT_WHITESPACE
from tests.conftest import Key
from tests.gateway.test_memories_write import memory

BODIES = {
    ("/v1/memories", "post"): "application/json",
    ("/v1/memories/batch", "post"): "application/json",
    ("/v1/memories/{memory_id}", "delete"): "application/json",
    ("/v1/fetch", "post"): "application/json",
    ("/v1/fetch/claims", "post"): "application/json",
    ("/v1/context", "post"): "application/json",
    ("/v1/search", "post"): "application/json",
    ("/v1/timeline", "post"): "application/json",
    ("/v1/policies", "post"): "application/yaml",
    ("/v1/policies/{digest}/activate", "post"): "application/json",
    ("/v1/receipts/{receipt_id}/replay", "post"): "application/json",
    ("/v1/policies/what-if", "post"): "application/json",
    ("/v1/sessions", "post"): "application/json",
    ("/v1/sessions/{session_id}/turns", "post"): "application/json",
    ("/v1/sessions/{session_id}/context", "post"): "application/json",
    ("/v1/memories/{memory_id}/erase", "post"): "application/json",
    ("/v1/sessions/{session_id}/turns/{seq}/erase", "post"): "application/json",
    ("/v1/compile", "post"): "application/json",
    ("/v1/conflicts/{conflict_id}/resolve", "post"): "application/json",
}


@pytest.fixture
def document(client: TestClient[Any]) -> dict[str, Any]:
    response = client.get("/schema/openapi.json")
    assert response.status_code == 200
    found: dict[str, Any] = response.json()
    return found


def _body(document: dict[str, Any], path: str, method: str) -> dict[str, Any]:
    body: dict[str, Any] = document["paths"][path][method]["requestBody"]
    return body


def _body_schema(document: dict[str, Any], path: str, method: str) -> dict[str, Any]:
    """The JSON body's schema: the component it names."""
    return _resolve(
        document, _body(document, path, method)["content"]["application/json"]["schema"]
    )


def test_every_operation_that_reads_a_body_describes_it(document: dict[str, Any]) -> None:
    for (path, method), media_type in BODIES.items():
        body = _body(document, path, method)
        assert body["required"] is True and list(body["content"]) == [media_type], path
    # Operations that read no body declare none.
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            if (path, method) not in BODIES:
                assert "requestBody" not in operation, (path, method)


def test_a_body_schema_is_what_the_gateway_accepts(document: dict[str, Any]) -> None:
    context = _body_schema(document, "/v1/context", "post")
    assert context["required"] == ["task"] and context["additionalProperties"] is False
    properties = context["properties"]
    assert properties["task"] == {
        "type": "string",
        "maxLength": 8000,
        "minLength": 1,
        "pattern": NOT_WHITESPACE,  # more than whitespace
    }
    # No default: without it the full tier is sized by the budget (assembler 2026-12-04.2).
    assert properties["top_k"] == {
        "anyOf": [{"type": "integer", "minimum": 1, "maximum": 50}, {"type": "null"}]
    }
    assert properties["fill"]["enum"] == ["skip", "stop"]
    batch = _body_schema(document, "/v1/memories/batch", "post")
    item = _resolve(document, batch["properties"]["items"]["items"])
    assert item["required"] == ["namespace", "heading", "content"]
    assert item["properties"]["confidence"]["maximum"] == 1.0


def test_every_json_body_is_a_named_component(document: dict[str, Any]) -> None:
    """A generated client names a body's model after its type (`ContextIn`), not after the
    operation and the type (`GetContextContextIn`)."""
    for (path, method), media_type in BODIES.items():
        if media_type == "application/json":
            schema = _body(document, path, method)["content"][media_type]["schema"]
            assert set(schema) == {"$ref"} and schema["$ref"].startswith("#/components/schemas/")
    assert _body(document, "/v1/context", "post")["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/ContextIn"
    }
    batch = document["components"]["schemas"]["BatchShape"]
    assert batch["properties"]["items"]["items"] == {"$ref": "#/components/schemas/MemoryIn"}


def test_the_receipt_listing_documents_its_query(document: dict[str, Any]) -> None:
    for path in ("/v1/receipts", "/v1/receipts/export"):
        parameters = {p["name"]: p for p in document["paths"][path]["get"]["parameters"]}
        assert set(parameters) >= {"agent_id", "kind", "since", "until", "memory_id", "limit"}
        assert all(p["in"] == "query" and p["required"] is False for p in parameters.values())


def test_the_session_history_documents_its_paging(document: dict[str, Any]) -> None:
    operation = document["paths"]["/v1/sessions/{session_id}/turns"]["get"]
    parameters = {p["name"]: p for p in operation["parameters"] if p["in"] == "query"}
    assert set(parameters) == {"after", "limit", "purpose"}
    append = _body(document, "/v1/sessions/{session_id}/turns", "post")
    turns = _resolve(document, append["content"]["application/json"]["schema"])["properties"][
        "turns"
    ]
    assert turns["maxItems"] == 100
    assert _resolve(document, turns["items"])["required"] == ["role", "content"]


def test_a_body_built_from_the_documented_fields_is_accepted(
    client: TestClient[Any], agent: Key, document: dict[str, Any]
) -> None:
    """Every documented property of a memory is one the gateway takes (and no other is)."""
    schema = _body_schema(document, "/v1/memories", "post")
    written = memory()
    assert set(written) <= set(schema["properties"])
    assert client.post("/v1/memories", json=written, headers=agent.headers).status_code == 201
    extra = {**written, "not_documented": 1}
    assert client.post("/v1/memories", json=extra, headers=agent.headers).status_code == 422


TEXT_BODIES = {
    ("/v1/receipts/export", "get"): "application/jsonl",
    ("/v1/log/checkpoint", "get"): "text/plain",
    ("/metrics", "get"): "text/plain",
}
# Bodies still built as dicts by the disclosure pipeline, which is being rewritten: documented as
# free-form objects until then. Nothing may join this set.


def _resolve(document: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        *_, section, name = node["$ref"].split("/")
        node = document["components"][section][name]
    return node


def test_every_operation_documents_its_success_body(document: dict[str, Any]) -> None:
    untyped = set()
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            # One success, or two (201 created, 200 for the same idempotent request again).
            successes = [r for s, r in operation["responses"].items() if s.startswith("2")]
            assert 1 <= len(successes) <= 2, (path, method)
            for response in successes:
                [(media_type, content)] = response["content"].items()
                schema = _resolve(document, content["schema"])
                if (path, method) in TEXT_BODIES:
                    assert media_type == TEXT_BODIES[path, method]
                    assert schema == {"type": "string"}, path
                elif "$ref" in content["schema"] or "oneOf" in schema:
                    assert media_type == "application/json", path
                    # One shape, or one of several (a replay of a bundle or of a refusal).
                    for choice in schema.get("oneOf", [content["schema"]]):
                        shape = _resolve(document, choice)
                        assert "$ref" in choice, path
                        assert shape["type"] == "object" and shape["properties"], path
                        assert set(shape["required"]) <= set(shape["properties"]), path
                else:
                    untyped.add((path, method))
    assert not untyped, untyped


# The problems an operation can answer with follow from what it is (gateway.http.openapi): any
# request may be refused for two Authorization headers (401); a key may lack the role or be
# rate-limited, and its lookup needs the database (403, 429, 503); a body may be malformed, slow,
# large, of another type or invalid (400, 408, 413, 415, 422); an id in the path may hold a NUL or
# name nothing (400, 404); a query may be invalid (422). Some routes name more (a state: 409).
KEYED = {403, 429, 503}
BODY = {400, 408, 413, 415, 422}
PATH = {400, 404}
EXPECTED_PROBLEMS = {
    ("/healthz", "get"): {401},
    ("/readyz", "get"): {401, 503},
    ("/metrics", "get"): {401, 403, 503},
    ("/v1/context", "post"): {401} | KEYED | BODY,
    ("/v1/memories", "post"): {401, 404, 409} | KEYED | BODY,
    ("/v1/memories/batch", "post"): {401} | KEYED | BODY,
    ("/v1/receipts", "get"): {401, 409, 422} | KEYED,
    ("/v1/receipts/{receipt_id}", "get"): {401, 409} | KEYED | PATH,
    ("/v1/log/checkpoint", "get"): {401, 404, 409} | KEYED,
    ("/v1/policies/active", "get"): {401} | KEYED,
    ("/v1/sessions/{session_id}/turns", "get"): {401, 422} | KEYED | PATH,
}
UNKEYED = {"/healthz", "/readyz", "/metrics"}
FOUND_BY_BODY = {
    ("/v1/memories", "post"),
    ("/v1/policies/what-if", "post"),
    ("/v1/compile", "post"),
    ("/v1/log/checkpoint", "get"),  # the log is empty
}


def _operations(document: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (path, method, operation)
        for path, operations in document["paths"].items()
        for method, operation in operations.items()
    ]


def test_every_operation_documents_the_problems_it_can_answer(document: dict[str, Any]) -> None:
    for path, method, operation in _operations(document):
        statuses = {int(s) for s in operation["responses"] if not s.startswith("2")}
        if (path, method) in EXPECTED_PROBLEMS:
            assert statuses == EXPECTED_PROBLEMS[path, method], (path, method)
        assert 401 in statuses  # two Authorization headers are refused everywhere
        if "{" in path:
            assert statuses >= PATH, (path, method)
        elif 404 in statuses:  # an id in the body (`supersedes`, `policy_digest`, ...)
            assert (path, method) in FOUND_BY_BODY, (path, method)
        assert statuses >= KEYED or path in UNKEYED, (path, method)
        assert ("requestBody" in operation) == (statuses >= BODY), (path, method)
        for status in statuses:
            reference = operation["responses"][str(status)]
            assert reference == {"$ref": f"#/components/responses/Problem{status}"}
            response = _resolve(document, reference)
            [(media_type, content)] = response["content"].items()
            assert media_type == "application/problem+json", (path, method, status)
            assert content["schema"] == {"$ref": "#/components/schemas/Problem"}
    # One Problem schema for all of them, as the gateway sends it.
    problem = document["components"]["schemas"]["Problem"]
    assert problem["title"] == "Problem"
    assert problem["required"] == ["code", "detail", "status", "title", "type"]
    assert {"instance", "receipt_id", "errors"} <= set(problem["properties"])
    field_problem = document["components"]["schemas"]["FieldProblem"]
    assert field_problem["required"] == ["field", "message"]
    assert "examples" not in problem  # no invented values in the reference


def test_the_bearer_key_is_declared_on_every_keyed_operation(document: dict[str, Any]) -> None:
    scheme = document["components"]["securitySchemes"]["bearerAuth"]
    assert scheme["type"] == "http" and scheme["scheme"] == "bearer"
    assert "security" not in document  # per operation: health, readiness, metrics take no key
    for path, method, operation in _operations(document):
        if path in UNKEYED:
            assert "security" not in operation, path
        else:
            assert operation["security"] == [{"bearerAuth": []}], (path, method)


def test_operations_have_readable_ids_and_one_tag_by_area(document: dict[str, Any]) -> None:
    areas = [tag["name"] for tag in document["tags"]]
    assert areas == [
        "memories", "disclosure", "sessions", "compiling", "receipts", "policies", "operations"
    ]  # fmt: skip
    assert all(tag["description"] for tag in document["tags"])
    ids = [operation["operationId"] for _, _, operation in _operations(document)]
    assert len(ids) == len(set(ids))
    assert all(re.fullmatch(r"[a-z]+(?:[A-Z][a-z]*)*", i) for i in ids), ids
    found = {(p, m): o["operationId"] for p, m, o in _operations(document)}
    assert found["/v1/memories", "post"] == "writeMemory"
    assert found["/v1/context", "post"] == "getContext"
    assert found["/v1/receipts/{receipt_id}/replay", "post"] == "replayReceipt"
    assert found["/v1/memories/{memory_id}/erase", "post"] == "eraseMemory"
    for path, method, operation in _operations(document):
        [tag] = operation["tags"]
        assert tag in areas, (path, method)
    tagged = {(p, m): o["tags"][0] for p, m, o in _operations(document)}
    assert tagged["/v1/policies/what-if", "post"] == "policies"
    assert tagged["/v1/fetch", "post"] == "disclosure"
    assert tagged["/healthz", "get"] == "operations"


def test_a_documented_problem_is_what_an_operation_answers(
    client: TestClient[Any], agent: Key
) -> None:
    """Statuses the document names for an operation, provoked: no key (401), two keys on an
    unkeyed route (401), a state that forbids it (409 on a second delete)."""
    no_key = client.post("/v1/context", json={"task": "x"})
    assert no_key.status_code == 401 and no_key.headers["www-authenticate"].startswith("Bearer")
    two = client.get(
        "/healthz", headers=[("Authorization", "Bearer a"), ("Authorization", "Bearer b")]
    )
    assert two.status_code == 401 and two.json()["code"] == "ambiguous_credentials"
    written = client.post("/v1/memories", json=memory(), headers=agent.headers).json()
    path = f"/v1/memories/{written['memory_id']}"
    for expected in (200, 409):
        gone = client.request("DELETE", path, json={"reason": "test"}, headers=agent.headers)
        assert gone.status_code == expected


def test_a_documented_response_is_what_the_gateway_sends(
    client: TestClient[Any], agent: Key, document: dict[str, Any]
) -> None:
    """The body of a write and of a problem carry exactly the documented members."""
    operation = document["paths"]["/v1/memories"]["post"]
    written = client.post("/v1/memories", json=memory(), headers=agent.headers)
    schema = _resolve(document, operation["responses"]["201"]["content"]["application/json"])
    schema = _resolve(document, schema["schema"])
    assert (
        list(written.json()) == list(schema["properties"]) == ["memory_id", "created", "supersedes"]
    )
    bad = client.post("/v1/memories", json={"namespace": 1}, headers=agent.headers)
    assert bad.status_code == 422 and bad.headers["content-type"] == "application/problem+json"
    problem = _resolve(document, operation["responses"]["422"])["content"]
    schema = _resolve(document, problem["application/problem+json"]["schema"])
    assert set(bad.json()) <= set(schema["properties"])
    assert [e["field"] for e in bad.json()["errors"]] == ["namespace", "heading", "content"]
