"""The scenario's later phases (see `scenario`): disclosures under the shipped default policy,
then under strict.yaml (log_only, enforced, refusals), then erasures."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tests.gateway.golden.seeding import Written, append, instant, memory, open_session

if TYPE_CHECKING:
    from tests.gateway.golden.scenario import Gateway, Key, Versioned

__all__ = ["disclose", "enforce_strict", "erase"]

IDENTICAL = "identical"
POLICIES = Path(__file__).resolve().parents[3] / "policies" / "bundles"
STRICT = (POLICIES / "strict.yaml").read_text(encoding="utf-8")
DEFAULT_POLICY = (POLICIES / "default.yaml").read_text(encoding="utf-8")
ROLLBACK = "How do I run a rollback of a deploy?"
ASK_OPS = {"task": ROLLBACK, "namespaces": ["ops"], "budget_tokens": 350, "top_k": 3}
# Every namespace, about the chat: the 40 retrieved are mostly remembered turns, so the ops
# memories (the most confident) are index-only entries, more than the index shows.
ASK_WIDE = {"task": "Which museum in Lisbon opens on Mondays?", "budget_tokens": 300, "top_k": 8}
ASK_STRICT = {"task": ROLLBACK, "namespaces": ["ops", "hr"], "budget_tokens": 1500, "top_k": 8, "purpose": "support"}  # fmt: skip
# One side of the conflict in the top_k (its partner joins it from below), and both sides.
ASK_SIDE = {"task": "Which team am I on?", "namespaces": ["team"], "memory_types": ["semantic"], "budget_tokens": 800, "top_k": 1}  # fmt: skip
ASK_BOTH = {"task": "Which team am I on?", "namespaces": ["team"], "budget_tokens": 800}
MUSEUM = "When does museum 3 in Lisbon open?"
# A question of the user's own about what they said in the chat (each day another museum): an
# assembler that reads the question (`asked_values`, from 2026-12-05.2) may leave the older days'
# turns out. Its bundles differ between the weighings (2026-12-06.3, .4, .5).
ASK_OWN = {"task": "Which museum are we visiting now?", "namespaces": ["chat"], "budget_tokens": 600}  # fmt: skip


def _named_top_k(assembler: Versioned, ask: dict[str, Any]) -> dict[str, Any]:
    """Before budget-sized tiers (2026-12-04.2) a request named its top_k, 6 when the client
    sent none (the wire's default then): the same request, named."""
    return ask if getattr(assembler, "budget_sized", False) else {**ask, "top_k": 6}


async def _context(gateway: Gateway, what: str, key: Key, ask: dict[str, Any]) -> Any:
    return await gateway.receipted(
        f"context: {what}", "POST", "/v1/context", key, ask, replay=IDENTICAL
    )


async def _replay(
    gateway: Gateway, what: str, auditor: Key, receipt_id: str, replay: str | None, **ask: str
) -> Any:
    path = f"/v1/receipts/{receipt_id}/replay"
    return await gateway.receipted(what, "POST", path, auditor, ask, replay=replay)


def _chat(day: int) -> tuple[dict[str, str], ...]:
    said = f"Day {day}: we decided to visit museum {day} in Lisbon. Is it open Mondays?"
    answer = f"Museum {day} opens at 10:00, tickets cost {day} euros."
    return {"role": "user", "content": said}, {"role": "assistant", "content": answer}


async def disclose(
    gateway: Gateway,
    keys: dict[str, Key],
    written: Written,
    assemblers: Sequence[Versioned],
    layouts: Sequence[Versioned],
) -> str:
    """Every disclosure under the shipped default policy; the id of the session it talks in."""
    agent, auditor, coder = keys["agent"], keys["auditor"], keys["coder"]
    ids = written.ids
    ops = await _context(gateway, "ops, dead near matches (superseded, deleted, expired), below_top_k, the default policy's log_only decisions (a secret label, contacts)", agent, ASK_OPS)  # fmt: skip
    await _context(gateway, "compiled facts (claim account.plan), the older superseded by a compile decision", agent, {"task": "Which Tallyworks plan are we on?", "namespaces": ["account"], "budget_tokens": 800})  # fmt: skip
    as_of = {**ASK_OPS, "as_of": instant(written.before_changes)}
    await _context(gateway, "as_of, asked by an auditor: ops before the new versions and the deletion", auditor, as_of)  # fmt: skip
    for assembler in assemblers:
        with gateway.assembler(assembler):
            both = _named_top_k(assembler, ASK_BOTH)
            for ask, shown in ((ASK_SIDE, "one side in the top_k"), (both, "both sides")):
                await _context(gateway, f"assembler {assembler.version}, an open conflict (claim user.team) between two writers, {shown}", coder, ask)  # fmt: skip
    await gateway.receipted("search: ops pointers", "POST", "/v1/search", agent, {"query": "rollback of a deploy", "namespaces": ["ops"], "limit": 5})  # fmt: skip
    versions = [ids[name] for name in ("day", "day-2", "database", "database-2", "holidays")]
    await gateway.receipted("timeline: a claim-key supersession, an explicit new version, a deletion", "POST", "/v1/timeline", agent, {"ids": versions})  # fmt: skip
    fetched = [ids["rollback"], ids["support"], ids["day-2"]]
    await gateway.receipted("fetch: three memories in full", "POST", "/v1/fetch", agent, {"ids": fetched})  # fmt: skip
    session_id, last = await _session_contexts(gateway, agent, layouts)
    page = {"after": 20, "limit": 4}
    await gateway.receipted("history: a page of the session's turns", "GET", f"/v1/sessions/{session_id}/turns", agent, params=page)  # fmt: skip
    await _asked_of_the_chat(gateway, agent, assemblers)
    await _context(gateway, "every namespace: index-only entries cut (index_truncated), over_budget", agent, ASK_WIDE)  # fmt: skip
    exact = await _replay(gateway, "replay (exact) of the ops context", auditor, ops["receipt_id"], IDENTICAL, mode="exact")  # fmt: skip
    await _replay(gateway, "replay (exact) of a replay", auditor, exact["receipt_id"], IDENTICAL, mode="exact")  # fmt: skip
    await _replay(gateway, "replay (current) of the ops context", auditor, ops["receipt_id"], IDENTICAL, mode="current")  # fmt: skip
    await _replay(gateway, "replay (what_if) of the ops context under strict.yaml given inline (an inline bundle is not stored: its exact replay finds it because strict.yaml is uploaded later)", auditor, ops["receipt_id"], IDENTICAL, mode="what_if", policy_yaml=STRICT)  # fmt: skip
    await _replay(gateway, "session_replay: exact replay of the session context of the current layout", auditor, last, None, mode="exact")  # fmt: skip
    [conflict] = (await gateway.call("GET", "/v1/conflicts", coder))["conflicts"]
    fraud = next(s["memory_id"] for s in conflict["sides"] if "Fraud" in s["heading"])
    resolution = {"winner": fraud, "reason": "the transfer went through"}
    await gateway.call("POST", f"/v1/conflicts/{conflict['conflict_id']}/resolve", coder, resolution)  # fmt: skip
    await _context(gateway, "after the conflict was resolved (a supersession with rule resolved)", coder, ASK_BOTH)  # fmt: skip
    return session_id


async def _session_contexts(
    gateway: Gateway, agent: Key, layouts: Sequence[Versioned]
) -> tuple[str, str]:
    """A session's contexts, one per layout (two more days of chat before each): its id and the
    last context's receipt id."""
    session_id = await open_session(gateway, agent, "chat", "Help the user plan a trip to Lisbon.", budget_tokens=600, system_prompt="You are a concise travel planner.", labels=["trip"])  # fmt: skip
    for day in range(12):
        await append(gateway, agent, session_id, *_chat(day))
    receipt_id = ""
    for number, layout in enumerate(layouts):
        for day in range(12 + 2 * number, 14 + 2 * number):
            await append(gateway, agent, session_id, *_chat(day))
        with gateway.layout(layout):
            made = await gateway.receipted(f"session_context: layout {layout.version}, a summary, recent turns, recalled memories", "POST", f"/v1/sessions/{session_id}/context", agent, {"query": MUSEUM}, replay=IDENTICAL)  # fmt: skip
        receipt_id = made["receipt_id"]
    return session_id, receipt_id


async def _asked_of_the_chat(gateway: Gateway, agent: Key, assemblers: Sequence[Versioned]) -> None:
    """Of each assembler that reads the question (`asked_values`), a bundle answering a question
    of the user's own about the session's turns (none before 2026-12-05.2)."""
    for assembler in assemblers:
        if getattr(assembler, "asked_values", False):
            with gateway.assembler(assembler):
                await _context(gateway, f"assembler {assembler.version}, a question of the user's own about the museums the chat's days decided on (the newest is current)", agent, _named_top_k(assembler, ASK_OWN))  # fmt: skip


async def _activate_strict(gateway: Gateway, admin: Key, mode: str) -> None:
    yaml = {**admin.headers, "content-type": "application/yaml"}
    gateway.before_request()
    uploaded = await gateway.http.post("/v1/policies", content=STRICT.encode(), headers=yaml)
    if uploaded.status_code not in (200, 201):
        raise RuntimeError(f"POST /v1/policies: {uploaded.status_code} {uploaded.text}")
    digest = uploaded.json()["digest"]
    await gateway.call("POST", f"/v1/policies/{digest}/activate", admin, {"mode": mode})


async def enforce_strict(
    gateway: Gateway, keys: dict[str, Key], written: Written, session_id: str
) -> None:
    agent, admin, auditor = keys["agent"], keys["admin"], keys["auditor"]
    ids = written.ids
    await _activate_strict(gateway, admin, "log_only")
    await _context(gateway, "strict.yaml in log_only: every rule recorded, none applied", agent, ASK_STRICT)  # fmt: skip
    gateway.elapse(timedelta(days=8))  # the working memory is now older than a week
    await _activate_strict(gateway, admin, "enforce")
    await _context(gateway, "strict.yaml enforced: policy_denied (hr, secret, low confidence, stale working memory), policy_capped (episodes), contacts redacted", agent, ASK_STRICT)  # fmt: skip
    await gateway.receipted("search under strict.yaml enforced", "POST", "/v1/search", agent, {"query": "rollback vault", "limit": 6, "purpose": "support"})  # fmt: skip
    await gateway.receipted("fetch under strict.yaml enforced: a secret denied, contacts redacted", "POST", "/v1/fetch", agent, {"ids": [ids["vault"], ids["support"]], "purpose": "support"})  # fmt: skip
    session = f"/v1/sessions/{session_id}"
    await gateway.receipted("session_context under strict.yaml enforced", "POST", f"{session}/context", agent, {"query": "Which museum opens at 10:00?", "purpose": "planning"}, replay=IDENTICAL)  # fmt: skip
    await gateway.receipted("history under strict.yaml enforced", "GET", f"{session}/turns", agent, params={"after": 30, "limit": 3, "purpose": "planning"})  # fmt: skip
    refusals: dict[str, tuple[str, str, object, dict[str, str | int] | None]] = {
        "context": ("POST", "/v1/context", {"task": "roll back", "budget_tokens": 500}, None),
        "search": ("POST", "/v1/search", {"query": "refund", "limit": 3}, None),
        "timeline": ("POST", "/v1/timeline", {"ids": [ids["rollback"], ids["refunds"]]}, None),
        "fetch": ("POST", "/v1/fetch", {"ids": [ids["rollback"]]}, None),
        "session_context": ("POST", f"{session}/context", {"budget_tokens": 500}, None),
        "history": ("GET", f"{session}/turns", None, {"after": 2, "limit": 2}),
    }
    refused: dict[str, str] = {}
    for disclosure, (method, path, body, params) in refusals.items():
        problem = await gateway.receipted(f"refusal of a {disclosure}: strict.yaml's need-purpose not met", method, path, agent, body, params=params, status=403, replay=IDENTICAL)  # fmt: skip
        refused[disclosure] = problem["receipt_id"]
    await _replay(gateway, "refusal_replay: exact replay of the context refusal", auditor, refused["context"], None, mode="exact")  # fmt: skip
    await _replay(gateway, "refusal_replay: what_if replay of the search refusal under default.yaml", auditor, refused["search"], None, mode="what_if", policy_yaml=DEFAULT_POLICY)  # fmt: skip


async def erase(gateway: Gateway, keys: dict[str, Key]) -> None:
    """A memory a bundle used, erased (its exact replay then answers `memory_erased`); a turn."""
    agent, admin = keys["agent"], keys["admin"]
    vault = memory("Quixotrand vault", "The Quixotrand vault code is 4471.", namespace="vault")
    memory_id = (await gateway.call("POST", "/v1/memories", agent, vault, status=201))["memory_id"]
    ask = {"task": "What is the Quixotrand vault code?", "namespaces": ["vault"], "purpose": "support"}  # fmt: skip
    await gateway.receipted("context: a memory erased afterwards", "POST", "/v1/context", agent, ask, replay="memory_erased")  # fmt: skip
    reason = {"reason": "subject request"}
    await gateway.receipted("erasure of a memory", "POST", f"/v1/memories/{memory_id}/erase", admin, reason)  # fmt: skip
    session_id = await open_session(gateway, agent, "scratch", "Take a note.")
    noted = ({"role": "user", "content": "My locker code is 9917."}, {"role": "assistant", "content": "Noted."})  # fmt: skip
    await append(gateway, agent, session_id, *noted)
    await gateway.receipted("erasure of a turn (and the memory remembered from it)", "POST", f"/v1/sessions/{session_id}/turns/1/erase", admin, reason)  # fmt: skip
