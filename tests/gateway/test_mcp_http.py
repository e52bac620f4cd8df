"""Streamable HTTP MCP at /mcp: the SDK's own HTTP client against the gateway; the key checked
(401) and the Origin checked (403) before any tool runs."""

from __future__ import annotations

import json
import logging
import time
from typing import Any

import httpx
import psycopg
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.types import TextContent

from gateway import __version__
from gateway.client import Client
from gateway.client.mcp_server import TOOLS
from gateway.store.keys import revoke_key
from tests.conftest import Key
from tests.gateway.test_rate_limits import limited_key

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "probe", "version": "0"},
    },
}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def _tool(url: str, key: str, tool: str, **arguments: Any) -> tuple[bool, str]:
    headers = {"Authorization": f"Bearer {key}"}
    async with (
        httpx.AsyncClient(headers=headers, timeout=30) as http,
        streamable_http_client(f"{url}/mcp/", http_client=http) as (read, write, _),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        assert {t.name for t in (await session.list_tools()).tools} == TOOLS["agent"]
        result = await session.call_tool(tool, arguments)
    [content] = result.content
    assert isinstance(content, TextContent)
    return result.isError, content.text


@pytest.mark.anyio
async def test_tools_over_streamable_http_are_receipted_requests_of_the_key(
    served: str, agent: Key
) -> None:
    with Client(agent.key, served) as ctxgw:
        written = ctxgw.write_memory("ops", "Rollback", "Run atlasctl rollback --to <sha>.")
    failed, text = await _tool(served, agent.key, "get_context", task="how do I rollback?")
    assert not failed, text
    bundle = json.loads(text)
    assert written.memory_id in bundle["refs"].values()
    with Client(agent.key, served) as ctxgw:  # the owning agent may read its receipt
        assert ctxgw.receipt(bundle["receipt_id"]).kind == "context"
    failed, text = await _tool(
        served, agent.key, "remember", namespace="bad ns", heading="h", content="c"
    )
    assert failed and "invalid_request: " in text and "namespace" in text


def test_a_bad_or_revoked_key_is_401_before_any_tool(
    served: str, agent: Key, database_url: str
) -> None:
    for header in ({}, {"Authorization": "Bearer ctxgw_nope"}):
        answer = httpx.post(f"{served}/mcp/", json=INITIALIZE, headers={**ACCEPT, **header})
        assert answer.status_code == 401 and answer.json()["status"] == 401
    good = {**ACCEPT, **agent.headers}
    initialized = httpx.post(f"{served}/mcp/", json=INITIALIZE, headers=good)
    assert initialized.status_code == 200
    assert initialized.json()["result"]["serverInfo"] == {"name": "ctxgw", "version": __version__}
    with psycopg.connect(database_url, autocommit=True) as conn:
        assert revoke_key(conn, agent.key_id)
    answer = httpx.post(f"{served}/mcp/", json=INITIALIZE, headers=good)
    assert answer.status_code == 401 and answer.json()["code"] == "revoked_credentials"


def _call(url: str, key: Key, tool: str, **arguments: Any) -> httpx.Response:
    """One stateless JSON-RPC `tools/call` POST: one request of the key."""
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments},
    }
    return httpx.post(f"{url}/mcp/", json=call, headers={**ACCEPT, **key.headers}, timeout=30)


def test_a_tool_call_is_one_request_of_the_key_and_its_writes_still_count(
    served: str, database_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    # A burst of one request: the tool's own in-process request must not be charged again
    # (were it, it would be refused, and answered only once the client's retry had waited).
    once = limited_key(database_url, requests=0.5, writes=None)
    with caplog.at_level(logging.INFO, logger="ctxgw.request"):
        answer = _call(served, once, "get_context", task="how do I rollback?")
        assert answer.status_code == 200, answer.text
        served_requests = _logged_requests(caplog, count=2)
    assert sorted(served_requests) == [("/mcp", 200), ("/v1/context", 200)]
    result = answer.json()["result"]
    assert not result["isError"], result
    assert json.loads(result["content"][0]["text"])["receipt_id"]
    scraped = httpx.get(f"{served}/metrics").text  # the mount is named by its path
    assert 'ctxgw_http_requests_total{method="POST",route="/mcp",status="200"} 1.0' in scraped
    # Writes are still charged, one per memory: a burst of one write, drawn to empty.
    writes = limited_key(database_url, requests=None, writes=0.5)
    first = _call(served, writes, "remember", namespace="ops", heading="One", content="First.")
    assert not first.json()["result"]["isError"], first.text
    with psycopg.connect(database_url) as conn:
        buckets = conn.execute(
            "SELECT key_id, bucket, tokens FROM rate_buckets ORDER BY key_id, bucket"
        ).fetchall()
    # Each bucket was charged once, at full, to empty: the call's request, the memory's write.
    assert buckets == sorted([(once.key_id, "requests", 0.0), (writes.key_id, "writes", 0.0)])


def _logged_requests(
    caplog: pytest.LogCaptureFixture, *, count: int, seconds: float = 10
) -> list[tuple[str, object]]:
    """The requests the server logged, once `count` of them are: a request is logged when it
    has ended, after its answer was sent, so the client may read its answer first."""
    deadline = time.monotonic() + seconds
    while True:
        logged = [
            (r.route, getattr(r, "status", None)) for r in caplog.records if hasattr(r, "route")
        ]
        if len(logged) >= count or time.monotonic() > deadline:
            return logged
        time.sleep(0.01)


@pytest.mark.parametrize(
    ("origin", "status"),
    [("http://evil.example", 403), ("http://localhost:5173", 200), ("http://127.0.0.1", 200)],
)
def test_a_browser_origin_must_be_loopback_or_allowed(
    served: str, agent: Key, origin: str, status: int
) -> None:
    headers = {**ACCEPT, **agent.headers, "Origin": origin}
    answer = httpx.post(f"{served}/mcp/", json=INITIALIZE, headers=headers)
    assert answer.status_code == status, answer.text
    if status == 403:
        assert answer.json()["code"] == "forbidden"


def test_mcp_origins_is_read_and_checked() -> None:
    from gateway.shell.settings import SettingsError, load_settings

    read = load_settings({"GATEWAY_MCP_ORIGINS": "https://app.example.com, http://tool:3000/"})
    assert read.mcp_origins == ("https://app.example.com", "http://tool:3000")
    with pytest.raises(SettingsError) as bad:
        load_settings({"GATEWAY_MCP_ORIGINS": "app.example.com"})
    assert "GATEWAY_MCP_ORIGINS" in bad.value.problems
