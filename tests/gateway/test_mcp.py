"""`ctxgw mcp` end to end: the MCP SDK's own client over stdio, against a real gateway."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import CallToolResult, TextContent

from gateway.core.tokens import load_tokenizer
from tests.conftest import Key, KeyFactory

TOOLS = {
    "get_context", "search_memories", "memory_timeline", "fetch_memories", "remember", "forget",
    "get_receipt", "verify_receipt", "replay_receipt",
    "create_session", "session_append", "session_context",
}  # fmt: skip


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@asynccontextmanager
async def session(url: str, key: str) -> AsyncIterator[ClientSession]:
    env = {**os.environ, "CTXGW_API_KEY": key, "CTXGW_URL": url}
    params = StdioServerParameters(command=sys.executable, args=["-m", "gateway", "mcp"], env=env)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as opened:
        await opened.initialize()
        yield opened


def text(result: CallToolResult) -> str:
    [content] = result.content
    assert isinstance(content, TextContent)
    return content.text


def count_tokens(result: str) -> int:
    """A tool result's tokens as the gateway counts them (its default tokenizer, the tests')."""
    return load_tokenizer().count(result)


def said(result: CallToolResult) -> str:
    """A tool error's own words, after the SDK's "Error executing tool NAME: " prefix."""
    assert result.isError
    prefix, _, rest = text(result).partition(": ")
    assert prefix.startswith("Error executing tool")
    return rest


async def call(mcp: ClientSession, tool: str, **arguments: Any) -> Any:
    result = await mcp.call_tool(tool, arguments)
    assert not result.isError, text(result)
    return json.loads(text(result))


@pytest.mark.anyio
async def test_the_agent_loop_over_mcp(served: str, agent: Key, make_key: KeyFactory) -> None:
    async with session(served, agent.key) as mcp:
        listed = await mcp.list_tools()
        assert {tool.name for tool in listed.tools} == TOOLS
        assert all(tool.description and tool.inputSchema["properties"] for tool in listed.tools)
        assert not any("ctx" in tool.inputSchema["properties"] for tool in listed.tools)

        content = "Run atlasctl rollback --to <sha>, then page the on-call."
        written = await call(mcp, "remember", namespace="ops", heading="Rollback", content=content)
        memory_id = written["memory_id"]
        # The compact results: what the agent asked for, its receipt, and the refs.
        bundle = await call(mcp, "get_context", task="how do I run a rollback?", budget_tokens=300)
        assert set(bundle) == {"bundle", "receipt_id", "refs"}
        assert "atlasctl rollback" in bundle["bundle"] and memory_id in bundle["refs"].values()
        hits = await call(mcp, "search_memories", query="rollback", limit=3)
        assert set(hits) == {"results", "receipt_id"}
        pointer = {"memory_id": memory_id, "heading": "Rollback", "snippet": content}
        assert hits["results"][0] == pointer
        timeline = await call(mcp, "memory_timeline", ids=[memory_id])
        fetched = await call(mcp, "fetch_memories", ids=[memory_id])
        assert timeline["receipt_id"] and timeline["entries"][0]["memory_id"] == memory_id
        memory = {"memory_id": memory_id, "heading": "Rollback", "content": content}
        assert fetched["memories"] == [memory]
        assert "policy" not in timeline and "policy" not in fetched
        # `verbose`: the gateway's whole response, for debugging.
        full = await call(mcp, "fetch_memories", ids=[memory_id], verbose=True)
        assert full["policy"] and full["memories"][0]["content_sha256"]
        assert (await call(mcp, "forget", memory_id=memory_id, reason="done"))["deleted_at"]

        # Wrong argument types: a tool error naming the argument, no request made.
        wrong = await mcp.call_tool("get_context", {"task": "x", "budget_tokens": "lots"})
        assert wrong.isError and "budget_tokens" in text(wrong)
        # A problem from the gateway: a tool error led by its code, with every bad field.
        bad = await mcp.call_tool(
            "remember", {"namespace": "no spaces", "heading": "h", "content": "c"}
        )
        assert said(bad).startswith("invalid_request:") and "; namespace: " in said(bad)
        # An agent may not audit: the problem's code, not a crash.
        denied = await mcp.call_tool("verify_receipt", {"receipt_id": bundle["receipt_id"]})
        assert said(denied).startswith("wrong_role:")

    async with session(served, make_key(role="auditor").key) as audit:
        receipt = await call(audit, "get_receipt", receipt_id=bundle["receipt_id"])
        assert receipt["kind"] == "context"
        assert (await call(audit, "verify_receipt", receipt_id=bundle["receipt_id"]))["valid"]
        replayed = await call(audit, "replay_receipt", receipt_id=bundle["receipt_id"])
        assert replayed["identical"] and replayed["receipt_id"]


@pytest.mark.anyio
async def test_a_session_over_mcp_stays_within_its_budget(served: str, agent: Key) -> None:
    async with session(served, agent.key) as mcp:
        opened = await call(
            mcp, "create_session", namespace="chat", task="Plan the Atlas migration",
            budget_tokens=300, keep_last=2, remember_turns=False,
        )  # fmt: skip
        session_id = opened["session_id"]
        for n in range(12):
            role = "user" if n % 2 == 0 else "assistant"
            content = f"Turn {n}: we decided step {n} runs on host atlas-{n} at 0{n % 10}:00 UTC."
            appended = await call(mcp, "session_append", session_id=session_id, role=role, content=content)  # fmt: skip
            assert appended["first_seq"] == n + 1 and appended["turn_ids"]
        # The compact step (the text, its receipt, the memories' refs) within the session's
        # budget as a whole, the envelope included.
        step = await mcp.call_tool("session_context", {"session_id": session_id})
        assert not step.isError and count_tokens(text(step)) <= 300
        compact = json.loads(text(step))
        assert "Turn 11" in compact["text"] and compact["receipt_id"]
        assert set(compact) <= {"text", "receipt_id", "refs", "refs_left_out"}
        full = await call(mcp, "session_context", session_id=session_id, verbose=True)
        assert full["tokens_used"] <= 300 and full["receipt_id"]
        assert full["turns"]["last_seq"] == 12 and "Turn 11" in full["text"]
        assert full["summary"] is not None  # the older turns were folded, not dropped
        assert full["messages"][0]["role"] == "system"

        # Wrong argument types and values: tool errors naming the argument.
        wrong = await mcp.call_tool("session_append", {"session_id": session_id, "role": "robot", "content": "x"})  # fmt: skip
        assert wrong.isError and "role" in text(wrong)
        empty = await mcp.call_tool("session_append", {"session_id": session_id, "role": "user", "content": " "})  # fmt: skip
        assert said(empty).startswith("invalid_request:") and "content" in said(empty)
        unknown = await mcp.call_tool("session_context", {"session_id": "0" * 26})
        assert said(unknown).startswith("session_not_found:")


@pytest.mark.anyio
async def test_a_bad_key_is_a_tool_error_with_its_code(served: str) -> None:
    async with session(served, "ctxgw_not_a_key") as mcp:
        result = await mcp.call_tool("get_context", {"task": "anything"})
    assert said(result).startswith("invalid_credentials:")


@pytest.mark.parametrize("client", ["claude-code", "cursor", "vscode"])
def test_mcp_config_prints_each_clients_snippet(client: str) -> None:
    env = {**os.environ, "CTXGW_API_KEY": "ctxgw_abc", "CTXGW_URL": "http://gw:8080"}
    printed = subprocess.run(
        [sys.executable, "-m", "gateway", "mcp", "config", "--client", client],
        env=env, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert "ctxgw_abc" in printed and "http://gw:8080" in printed
    if client == "claude-code":
        assert printed.startswith("claude mcp add ctxgw ") and printed.strip().endswith(" mcp")
    else:
        servers = json.loads(printed)["mcpServers" if client == "cursor" else "servers"]
        assert servers["ctxgw"]["args"] == ["mcp"]
