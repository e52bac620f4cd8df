"""The disclosing MCP tools' results are bounded by the budget the agent names: the whole tool
result, counted with the gateway's tokenizer, over the budget is at most 1.0, on a namespace too
large for any of the budgets; each result names a receipt that verifies. `verbose` returns the
gateway's whole response; a key is offered only its role's tools. Over /mcp, the SDK's own
client, a real gateway."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import msgspec
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, TextContent

from gateway.client import Client, NewMemory
from gateway.client.mcp_server import TOOLS
from gateway.client.tool_results import LEAST_TEXT_BUDGET, fit_text, text_budget
from gateway.core.tokens import load_tokenizer
from gateway.domain.principal import ROLES
from gateway.responses.disclosures import ContextBundle
from tests.conftest import Key, KeyFactory

BUDGETS = (300, 800, 2000, 4000)
TASK = "how do we roll back a failed deploy of the billing service?"
SYSTEMS = ("billing", "search", "auth", "payments", "ledger", "gateway")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@asynccontextmanager
async def mcp_session(url: str, key: str) -> AsyncIterator[ClientSession]:
    headers = {"Authorization": f"Bearer {key}"}
    async with (
        httpx.AsyncClient(headers=headers, timeout=60) as http,
        streamable_http_client(f"{url}/mcp/", http_client=http) as (read, write, _),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


def text(result: CallToolResult) -> str:
    [content] = result.content
    assert isinstance(content, TextContent)
    return content.text


def _remember_many(url: str, key: Key, count: int = 180) -> None:
    """Runbook notes and incident turns on a few systems: far more than 4,000 tokens of them,
    most of them about deploys and rollbacks, so every budget overflows."""
    memories = [
        NewMemory(
            namespace="ops",
            heading=f"{SYSTEMS[n % 6]} deploy note {n}",
            content=(
                f"Deploy {n} of the {SYSTEMS[n % 6]} service: roll back with "
                f'`atlasctl rollback --service {SYSTEMS[n % 6]} --to "release-{n}"`, then check '
                f"the error rate on dashboard {n % 11} and page the on-call of team {n % 7}.\n"
                f"Incident {n}: the rollback took {n % 13 + 2} minutes; the canary stayed at "
                f"{n % 5 * 10}% while the schema migration {n} was reverted by hand."
            ),
        )
        for n in range(count)
    ]
    with Client(key.key, url) as ctxgw:
        for start in range(0, count, 100):
            ctxgw.write_batch(memories[start : start + 100])


@pytest.mark.anyio
async def test_tool_results_fit_the_budget_and_name_a_verifiable_receipt(
    served: str, agent: Key, make_key: KeyFactory
) -> None:
    _remember_many(served, agent)
    tokens = load_tokenizer()
    receipts: list[str] = []
    shown: list[int] = []
    async with mcp_session(served, agent.key) as mcp:
        for budget in BUDGETS:
            result = await mcp.call_tool("get_context", {"task": TASK, "budget_tokens": budget})
            assert not result.isError, text(result)
            assert tokens.count(text(result)) / budget <= 1.0
            bundle = json.loads(text(result))
            assert set(bundle) <= {"bundle", "receipt_id", "refs", "refs_left_out"}
            assert "atlasctl rollback" in bundle["bundle"]
            assert all(f"[{ref} " in bundle["bundle"] for ref in bundle["refs"])
            receipts.append(bundle["receipt_id"])

            # At most 50 hits may be asked: at small budgets fewer fit, and are counted.
            result = await mcp.call_tool(
                "search_memories", {"query": TASK, "limit": 50, "budget_tokens": budget}
            )
            assert not result.isError, text(result)
            assert tokens.count(text(result)) / budget <= 1.0
            found = json.loads(text(result))
            assert found["results"] and len(found["results"]) + found.get("left_out", 0) == 50
            shown.append(len(found["results"]))
            receipts.append(found["receipt_id"])
    # Hits are trimmed to fit, not capped: a larger budget shows more of them.
    assert shown == sorted(shown) and shown[0] < shown[-1]

    with Client(make_key(role="auditor").key, served) as audit:
        for receipt_id in receipts:
            assert audit.verify_receipt(receipt_id).valid


@pytest.mark.anyio
async def test_verbose_is_the_gateways_whole_response(served: str, agent: Key) -> None:
    _remember_many(served, agent, count=20)
    async with mcp_session(served, agent.key) as mcp:
        asked: dict[str, Any] = {"task": TASK, "budget_tokens": 800, "verbose": True}
        full = json.loads(text(await mcp.call_tool("get_context", asked)))
        compact = json.loads(text(await mcp.call_tool("get_context", {**asked, "verbose": False})))
        search = {"query": TASK, "verbose": True}
        hits = json.loads(text(await mcp.call_tool("search_memories", search)))
    # The same request the compact result is made from: the bundle's budget is its share.
    assert full["budget_tokens"] == text_budget(800) and full["bundle"] == compact["bundle"]
    assert {"included", "excluded", "index", "policy", "tokenizer", "refs"} <= set(full)
    # The refs that fit come in reference order (m1, m2, …); those left out are counted.
    kept = list(compact["refs"].items())
    in_order = sorted(full["refs"].items(), key=lambda ref: int(ref[0].removeprefix("m")))
    assert kept == in_order[: len(kept)]
    assert len(kept) + compact.get("refs_left_out", 0) == len(full["refs"])
    assert {"excluded", "policy"} <= set(hits) and "score" in hits["results"][0]


@pytest.mark.anyio
async def test_a_budget_too_small_for_the_envelope_is_a_tool_error(served: str, agent: Key) -> None:
    async with mcp_session(served, agent.key) as mcp:
        small = {"task": TASK, "budget_tokens": LEAST_TEXT_BUDGET - 1}
        refused = await mcp.call_tool("get_context", small)
        tiny = await mcp.call_tool("search_memories", {"query": TASK, "budget_tokens": 5})
    assert refused.isError and "budget_too_small: " in text(refused)
    assert f"at least {LEAST_TEXT_BUDGET}" in text(refused)
    assert tiny.isError and "budget_too_small: " in text(tiny)
    assert text_budget(LEAST_TEXT_BUDGET) == 1


def test_the_text_budget_is_the_budget_less_the_envelopes_share() -> None:
    assert [text_budget(b) for b in BUDGETS] == [238, 688, 1768, 3568]  # B - 32 - ceil(B/10)


def test_refs_are_kept_in_reference_order_while_they_fit() -> None:
    ids = {f"m{n}": f"01JREF{n:020d}" for n in range(12, 0, -1)}  # any order in, m10 after m9
    policy: dict[str, object] = {
        "digest": "d",
        "mode": "enforce",
        "decisions": [],
        "outcomes": [],
        "refused": None,
    }
    response = msgspec.convert(
        {
            "bundle": "x", "bundle_sha256": "s", "tokens_used": 1, "budget_tokens": 1,
            "utilization": 1.0, "tokenizer": "cl100k_base",
            "ranking_profile": {"version": "v", "digest": "d"},
            "index": {"entries": [], "shown": 0, "total_live": 0, "tokens": 0,
                      "count_withheld": False},
            "included": [], "excluded": [], "refs": ids, "policy": policy, "receipt_id": "r",
        },
        ContextBundle,
    )  # fmt: skip
    whole = fit_text(response, 10_000)
    assert list(whole.refs) == [f"m{n}" for n in range(1, 13)] and whole.refs_left_out == 0
    tokens = load_tokenizer()
    budget = tokens.count(msgspec.json.encode(whole).decode()) - 1
    trimmed = fit_text(response, budget)
    assert list(trimmed.refs) == [f"m{n}" for n in range(1, 12)] and trimmed.refs_left_out == 1
    assert tokens.count(msgspec.json.encode(trimmed).decode()) <= budget


def test_the_tools_of_each_role_are_the_domains_roles() -> None:
    assert set(TOOLS) == set(ROLES)
    assert TOOLS["admin"] == TOOLS["agent"] | TOOLS["auditor"]


@pytest.mark.anyio
@pytest.mark.parametrize("role", ROLES)
async def test_a_key_is_offered_only_its_roles_tools(
    served: str, make_key: KeyFactory, role: str
) -> None:
    key = make_key(role=role)
    async with mcp_session(served, key.key) as mcp:
        offered = {tool.name for tool in (await mcp.list_tools()).tools}
        assert offered == TOOLS[role]
        others = TOOLS["admin"] - offered
        for tool in others:  # not listed, and not run either
            refused = await mcp.call_tool(tool, {})
            assert refused.isError and "Unknown tool" in text(refused)
    if role == "agent":
        assert {"verify_receipt", "replay_receipt"} <= others
    if role == "auditor":
        assert {"get_context", "search_memories", "remember", "forget"} <= others


@pytest.mark.anyio
async def test_text_that_escaping_inflates_is_asked_for_again_and_still_fits(
    served: str, agent: Key, make_key: KeyFactory
) -> None:
    # Quotes and backslashes, each escaped in JSON: far more than the tenth a bundle's escaping
    # is given, so the first bundle's result overflows and a shorter one is asked for.
    quoted = 'C:\\"deploy"\\"rollback"\\' * 12
    memories = [
        NewMemory(namespace="ops", heading=f"Quoted rollback {n}", content=f"{n}: {quoted}")
        for n in range(40)
    ]
    with Client(agent.key, served) as ctxgw:
        ctxgw.write_batch(memories)
    async with mcp_session(served, agent.key) as mcp:
        result = await mcp.call_tool("get_context", {"task": "rollback", "budget_tokens": 800})
    assert not result.isError, text(result)
    assert load_tokenizer().count(text(result)) <= 800
    bundle = json.loads(text(result))
    with Client(make_key(role="auditor").key, served) as audit:
        asked = audit.receipts(kind="context").receipts
        # The first ask, then a shorter one (or two): the result names the last.
        assert 2 <= len(asked) <= 3
        assert bundle["receipt_id"] == asked[-1].receipt_id
        assert audit.verify_receipt(bundle["receipt_id"]).valid
