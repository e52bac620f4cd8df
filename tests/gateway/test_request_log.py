"""The request log: one line per request, identifiers only, its id echoed in X-Request-ID."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from litestar.testing import TestClient

from gateway.shell.logs import JsonFormatter, TextFormatter
from gateway.shell.settings import load_settings
from tests.conftest import Key

PRIVATE_TASK = "Which vault holds the zebra-quartz launch codes?"
PRIVATE_CONTENT = "The zebra-quartz launch codes live in vault 7 behind the tapestry."


def _request_lines(caplog: pytest.LogCaptureFixture) -> list[dict[str, Any]]:
    formatter = JsonFormatter()
    return [json.loads(formatter.format(r)) for r in caplog.records if r.name == "ctxgw.request"]


def test_each_request_is_one_json_line_of_identifiers(
    client: TestClient[Any], agent: Key, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    written = client.post(
        "/v1/memories",
        json={"namespace": "ops", "heading": "Launch codes", "content": PRIVATE_CONTENT},
        headers=agent.headers,
    )
    assert written.status_code == 201, written.text
    asked = client.post(
        "/v1/context",
        json={"task": PRIVATE_TASK},
        headers={**agent.headers, "X-Request-ID": "trace-42.a:b"},
    )
    assert asked.status_code == 200, asked.text
    assert asked.headers["x-request-id"] == "trace-42.a:b"

    lines = _request_lines(caplog)
    assert [(line["method"], line["route"], line["status"]) for line in lines] == [
        ("POST", "/v1/memories", 201),
        ("POST", "/v1/context", 200),
    ]
    context_line = lines[1]
    assert context_line["request_id"] == "trace-42.a:b"
    assert context_line["tenant"] == agent.tenant_id
    assert context_line["key_id"] == agent.key_id
    assert context_line["receipt_id"] == asked.json()["receipt_id"]
    assert context_line["duration_ms"] > 0
    assert lines[0]["receipt_id"] is None  # a write discloses nothing: no receipt
    assert lines[0]["request_id"] == written.headers["x-request-id"]

    # Nothing anyone logged during these requests carries the texts or the key's secret.
    everything = "\n".join(JsonFormatter().format(r) for r in caplog.records)
    secret = agent.key.rsplit(".", 1)[1]
    for leaked in (PRIVATE_TASK, "zebra-quartz", PRIVATE_CONTENT, secret, agent.key):
        assert leaked not in everything


def test_a_hostile_request_id_is_replaced_and_unmatched_routes_are_logged(
    client: TestClient[Any], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    response = client.get("/v1/nowhere?q=secret", headers={"X-Request-ID": 'bad id\twith="x"'})
    assert response.status_code == 404
    request_id = response.headers["x-request-id"]
    assert request_id != 'bad id\twith="x"' and len(request_id) == 32
    (line,) = _request_lines(caplog)
    assert line["route"] == "unmatched" and line["status"] == 404
    assert line["request_id"] == request_id
    assert line["tenant"] is None and line["key_id"] is None  # no key authenticated
    assert "secret" not in json.dumps(line)  # the path and its query are never logged


def test_a_key_that_did_not_authenticate_is_not_named(
    client: TestClient[Any], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    forged = "ctxgw.acme.01jzzzzzzzzzzzzzzzzzzzzzzz." + "A" * 43
    response = client.post("/v1/context", json={"task": "x"}, headers={"Authorization": f"Bearer {forged}"})  # fmt: skip
    assert response.status_code == 401
    (line,) = _request_lines(caplog)
    assert line["status"] == 401 and line["tenant"] is None and line["key_id"] is None


def test_text_lines_carry_the_same_fields() -> None:
    record = logging.LogRecord("ctxgw.request", logging.INFO, "", 0, "request", None, None)
    record.request_id, record.status, record.tenant = "r1", 200, None
    assert TextFormatter().format(record) == "INFO ctxgw.request: request request_id=r1 status=200"


def test_the_log_format_is_a_setting() -> None:
    assert load_settings({"GATEWAY_LOG_FORMAT": "json"}).log_format == "json"
    assert load_settings({}).log_format == "text"
    with pytest.raises(Exception, match="GATEWAY_LOG_FORMAT"):
        load_settings({"GATEWAY_LOG_FORMAT": "xml"})
