"""The quickstart's demo tenant: two keys and two dozen memories of every type in two namespaces,
and two agents sharing one namespace: a planner that deprecates a module, and a coder that asks
for context before acting and never sees the deprecated plan as current (ARCHITECTURE §12: the
newer plan carries the same claim key, so it supersedes the older one).

Idempotent: the keys are kept in `$GATEWAY_DATA_DIR/demo-keys.json` and reused while they still
authenticate; every memory carries an idempotency key, so a second run writes nothing new.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path

from gateway.core.model import MemoryType
from gateway.domain.errors import UnauthenticatedError
from gateway.domain.memory import MemoryDraft
from gateway.domain.principal import Principal
from gateway.requests import ContextIn
from gateway.responses.disclosures import ContextBundle
from gateway.shell.runtime import Runtime
from gateway.store.database import connect
from gateway.store.transactions import transaction
from gateway.usecases.access.keys import authenticate, issue_key

__all__ = ["DEMO_TENANT", "PLAN_KEY", "DemoKeys", "coder_context", "seed_demo"]

DEMO_TENANT = "demo"
PLANS_NAMESPACE = "plans"
PLAN_KEY = "plan.billing.invoice_module"
# The planner's two plans for one claim, in the order they were made.
_PLANS = (
    (
        "Plan: build invoicing on the legacy invoice module",
        "Build the new invoice exports on the legacy invoice module (billing/legacy_invoices).",
    ),
    (
        "Plan: the legacy invoice module is deprecated; use the Atlas ledger API",
        "The legacy invoice module (billing/legacy_invoices) is deprecated and will be removed in"
        " January. Build invoice exports on the Atlas ledger API instead.",
    ),
)
CODER_TASK = "Implement the invoice CSV export: which invoice module should the code use?"

# (namespace, type, confidence, heading, content)
_MEMORIES: tuple[tuple[str, MemoryType, float, str, str], ...] = (
    (
        "atlas",
        "semantic",
        0.95,
        "Atlas is the billing platform rewrite",
        "Project Atlas replaces the legacy billing monolith with event-sourced services in Go.",
    ),
    (
        "atlas",
        "semantic",
        0.9,
        "Atlas database is PostgreSQL 16",
        "Atlas stores ledgers in PostgreSQL 16 with logical replication to the analytics cluster.",
    ),
    (
        "atlas",
        "procedural",
        0.9,
        "How to deploy Atlas",
        "Deploy with `make release` from a clean main; the pipeline canaries 5% for 30 minutes.",
    ),
    (
        "atlas",
        "procedural",
        0.85,
        "Rollback procedure for Atlas",
        "To roll back a deploy, run `atlasctl rollback --to <sha>`; then page the on-call in"
        " #atlas-ops and file a report.",
    ),
    (
        "atlas",
        "episodic",
        0.8,
        "Invoice outage on 2026-10-14",
        "Invoices stalled for 40 minutes after a schema migration locked the ledger table.",
    ),
    (
        "atlas",
        "episodic",
        0.7,
        "Load test in November",
        "The November load test reached 4,800 invoices per second before p99 exceeded 300 ms.",
    ),
    (
        "atlas",
        "semantic",
        0.75,
        "Atlas owners",
        "The payments team owns Atlas; escalation goes to the platform on-call after 15 minutes.",
    ),
    (
        "atlas",
        "working",
        0.6,
        "Current task: currency rounding bug",
        "Investigating a rounding error in JPY invoices; suspect the minor-unit table.",
    ),
    (
        "atlas",
        "semantic",
        0.85,
        "Atlas API rate limits",
        "Public API: 100 requests per second per customer, bursts of 200, enforced at the gateway.",
    ),
    (
        "atlas",
        "procedural",
        0.8,
        "Schema migrations must be online",
        "Every Atlas migration runs with lock_timeout 2s and is split into expand and contract steps.",
    ),
    (
        "atlas",
        "episodic",
        0.65,
        "Decision: keep monthly invoices",
        "Product decided in September to keep monthly invoicing; weekly invoicing is postponed.",
    ),
    (
        "atlas",
        "working",
        0.5,
        "Open question on tax regions",
        "Unclear whether the EU one-stop-shop applies to the marketplace sellers; asked finance.",
    ),
    (
        "support",
        "semantic",
        0.9,
        "Support hours",
        "Support answers from 07:00 to 22:00 CET on weekdays; weekends are covered by on-call only.",
    ),
    (
        "support",
        "procedural",
        0.9,
        "Refund policy steps",
        "Refunds under 200 EUR need one approval; above that a team lead approves in the console.",
    ),
    (
        "support",
        "episodic",
        0.7,
        "Customer Borealis escalated twice",
        "Borealis escalated invoice duplication in October twice; both traced to retried webhooks.",
    ),
    (
        "support",
        "semantic",
        0.8,
        "Preferred channel is the portal",
        "Customers should open tickets through the portal; email tickets lose attachments over 10 MB.",
    ),
    (
        "support",
        "procedural",
        0.85,
        "How to reset a customer API key",
        "Verify the account owner by callback, then rotate the key in the console; never email it.",
    ),
    (
        "support",
        "episodic",
        0.6,
        "Survey results for Q3",
        "Q3 satisfaction was 4.4 of 5; slow refund approvals were the most common complaint.",
    ),
    (
        "support",
        "working",
        0.55,
        "Drafting the holiday rota",
        "Holiday rota draft covers 23 December to 2 January; two shifts still need volunteers.",
    ),
    (
        "support",
        "semantic",
        0.7,
        "Tier 2 handles billing disputes",
        "Billing disputes go to tier 2 within one business day; tier 1 only collects the invoice id.",
    ),
    (
        "support",
        "episodic",
        0.75,
        "Webhook retries caused duplicates",
        "A retry storm on 2026-10-20 duplicated 312 invoices; fixed by idempotency keys on webhooks.",
    ),
    (
        "support",
        "procedural",
        0.7,
        "Closing a ticket",
        "Close a ticket only after the customer confirms, or after 7 days without a reply.",
    ),
    (
        "support",
        "semantic",
        0.65,
        "Languages supported",
        "Support is offered in English, German and Spanish; other languages go through translation.",
    ),
    (
        "support",
        "working",
        0.5,
        "Reminder: update macros",
        "Update the refund macros after the policy change takes effect next month.",
    ),
)


@dataclass(frozen=True, slots=True)
class DemoKeys:
    tenant_id: str
    admin: str
    agent: str
    planner: str  # agent "planner", the plans namespace only
    coder: str  # agent "coder", the plans namespace only


def _issue_keys(url: str) -> DemoKeys:
    with connect(url) as conn:
        admin = issue_key(conn, tenant_id=DEMO_TENANT, role="admin", namespaces=["*"])
        agent = issue_key(
            conn, tenant_id=DEMO_TENANT, role="agent", namespaces=["*"], agent_id="demo-agent"
        )
        planner, coder = (
            issue_key(
                conn,
                tenant_id=DEMO_TENANT,
                role="agent",
                namespaces=[PLANS_NAMESPACE],
                agent_id=name,
            )
            for name in ("planner", "coder")
        )
    return DemoKeys(DEMO_TENANT, admin.key, agent.key, planner.key, coder.key)


async def _still_valid(runtime: Runtime, keys: DemoKeys) -> tuple[Principal, Principal] | None:
    """The demo agent's and the planner's principals, when every saved key still works."""
    try:
        async with transaction(runtime.pool) as conn:
            await authenticate(conn, f"Bearer {keys.admin}")
            await authenticate(conn, f"Bearer {keys.coder}")
            agent = await authenticate(conn, f"Bearer {keys.agent}")
            return agent, await authenticate(conn, f"Bearer {keys.planner}")
    except UnauthenticatedError:
        return None  # saved keys of another database, or revoked: issue new ones


def _saved(path: Path) -> DemoKeys | None:
    if not path.exists():
        return None
    saved = json.loads(path.read_text())
    try:
        return DemoKeys(**{name: str(saved[name]) for name in DemoKeys.__dataclass_fields__})
    except KeyError:
        return None  # keys saved by an older demo: issue the full set


async def seed_demo(runtime: Runtime) -> DemoKeys:
    """Create (or reuse) the demo keys and memories; return the keys."""
    import asyncio

    path = Path(runtime.settings.data_dir) / "demo-keys.json"
    keys = _saved(path)
    valid = await _still_valid(runtime, keys) if keys is not None else None
    if keys is None or valid is None:
        keys = await asyncio.to_thread(_issue_keys, runtime.database_url)
        valid = await _still_valid(runtime, keys)
        assert valid is not None
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(dataclasses.asdict(keys), indent=2) + "\n")
        path.chmod(0o600)
    agent, planner = valid
    drafts = [
        MemoryDraft(
            namespace=ns,
            memory_type=kind,
            heading=heading,
            content=content,
            confidence=confidence,
            labels=("demo",),
            source_type="demo",
            idempotency_key=f"demo-{index:02d}",
        )
        for index, (ns, kind, confidence, heading, content) in enumerate(_MEMORIES)
    ]
    plans = [
        MemoryDraft(
            namespace=PLANS_NAMESPACE,
            memory_type="semantic",
            heading=heading,
            content=content,
            confidence=0.9,
            labels=("demo", "plan"),
            source_type="demo",
            claim_key=PLAN_KEY,
            idempotency_key=f"demo-plan-{index}",
        )
        for index, (heading, content) in enumerate(_PLANS)
    ]
    async with transaction(runtime.pool, agent.tenant_id) as conn:
        await runtime.writer.write(conn, agent, drafts)
    # The planner deprecates the module: its second plan supersedes the first (same claim key).
    for plan in plans:
        async with transaction(runtime.pool, planner.tenant_id) as conn:
            await runtime.writer.write(conn, planner, [plan])
    return keys


async def coder_context(runtime: Runtime, keys: DemoKeys) -> ContextBundle:
    """What the coder is handed before acting: the current plan, never the deprecated one."""
    ask = ContextIn(task=CODER_TASK, namespaces=[PLANS_NAMESPACE], budget_tokens=600)
    return await runtime.disclosures.context(f"Bearer {keys.coder}", ask)
