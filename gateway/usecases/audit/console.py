"""The auditor's console as views: each page's values, computed through the use cases the API
serves (a receipt, its verification, replay, the what-if window, the policy in force), so the
console is another rendering of the same data, not a second path to it. Auditor and admin keys
only: an agent key is refused on every page (403)."""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass
from datetime import datetime, timedelta

from gateway.domain.errors import NotFoundError
from gateway.domain.memory import MemoryVersion
from gateway.domain.principal import Principal
from gateway.domain.receipt_filter import ReceiptFilter
from gateway.responses.policies import ActivePolicy
from gateway.responses.receipts import ReceiptDetail, Verification
from gateway.store import console as console_store
from gateway.store.memories import fetch_versions
from gateway.store.policies import ActivationRow, BundleRow
from gateway.store.pool import Pool
from gateway.store.receipts import ReceiptRow, list_receipts
from gateway.store.supersessions import DecisionRow, decisions_about
from gateway.usecases.access.policy import PolicyRegistry
from gateway.usecases.access.policy_bundles import active_bundle
from gateway.usecases.access.work import unit_of_work
from gateway.usecases.audit.ledger import (
    LedgerRow,
    ReceiptFacts,
    ledger_of,
    read_loosely,
    reason_counts,
    receipt_facts,
)
from gateway.usecases.audit.requests import AUDITORS, read_receipt, verify_receipt
from gateway.usecases.receiptlog.kinds import CONTEXT
from gateway.usecases.receiptlog.recorder import rfc3339
from receipts import Signer, decode_body

__all__ = [
    "AgentInstant",
    "ListedReceipt",
    "MemoryLife",
    "PoliciesView",
    "ReceiptList",
    "ReceiptScreen",
    "agent_at",
    "console_principal",
    "memory_life",
    "policies_view",
    "receipt_list",
    "receipt_screen",
    "sha256_hex",
]

PAGE = 50  # receipts a list page shows
AROUND = 10  # receipts shown on each side of an agent's instant


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


async def console_principal(pool: Pool, authorization: str | None) -> Principal:
    """Who signs in: an auditor or admin key (401 for a bad key, 403 for an agent's)."""
    async with unit_of_work(pool, authorization) as (_, principal):
        principal.require_role(*AUDITORS)
    return principal


@dataclass(frozen=True, slots=True)
class ListedReceipt:
    receipt_id: str
    seq: int
    kind: str
    agent_id: str | None
    issued_at: str
    policy_digest: str | None
    facts: ReceiptFacts


@dataclass(frozen=True, slots=True)
class ReceiptList:
    receipts: list[ListedReceipt]
    next_cursor: str | None  # the position the next (older) page starts below


def _listed(row: ReceiptRow) -> ListedReceipt:
    return ListedReceipt(
        receipt_id=row.receipt_id,
        seq=row.seq,
        kind=row.kind,
        agent_id=row.agent_id,
        issued_at=rfc3339(row.issued_at),
        policy_digest=row.policy_digest,
        facts=receipt_facts(read_loosely(decode_body(bytes(row.body)))),
    )


async def receipt_list(pool: Pool, authorization: str | None, where: ReceiptFilter) -> ReceiptList:
    """One page of the tenant's receipts, newest first (the listing's own filter and store
    query, read backwards)."""
    async with unit_of_work(pool, authorization) as (conn, principal):
        principal.require_role(*AUDITORS)
        rows = await list_receipts(conn, principal.tenant_id, where)
    full = len(rows) == where.limit
    return ReceiptList([_listed(r) for r in rows], str(rows[-1].seq) if full else None)


@dataclass(frozen=True, slots=True)
class ReceiptScreen:
    detail: ReceiptDetail
    verification: Verification
    facts: ReceiptFacts
    ledger: list[LedgerRow]
    counts: list[tuple[str, int]]
    decisions: list[dict[str, object]]  # as the receipt spells each
    request: dict[str, object]
    # The heading of each memory of the ledger the key may read, by id (as it reads now: an
    # erased version's says so); turns and memories outside its namespaces have none.
    headings: dict[str, str] = dataclasses.field(default_factory=dict)


async def receipt_screen(
    pool: Pool, signer: Signer, authorization: str | None, receipt_id: str
) -> ReceiptScreen:
    """A receipt with its live verification (signatures, chain link, inclusion in the latest
    checkpoint) and its ledger."""
    # The console reads the primary: what it shows next to a replay it just made must be there.
    verification = await verify_receipt(pool, None, signer, authorization, receipt_id)
    detail = await read_receipt(pool, None, authorization, receipt_id)
    assert detail.body is not None  # an auditor's read: verify_receipt admitted only them
    body = read_loosely(detail.body)
    ledger = ledger_of(body)
    async with unit_of_work(pool, authorization) as (conn, principal):
        versions = await fetch_versions(conn, principal.tenant_id, [r.memory_id for r in ledger])
    headings = {
        v.memory_id: "(erased)" if v.erased_at is not None else v.heading
        for v in versions
        if principal.may_use(v.namespace)
    }
    return ReceiptScreen(
        detail=detail,
        verification=verification,
        facts=receipt_facts(body),
        ledger=ledger,
        counts=reason_counts(ledger),
        decisions=body.policy.decisions,
        request=body.request,
        headings=headings,
    )


@dataclass(frozen=True, slots=True)
class AgentInstant:
    agent_id: str
    at: datetime
    before: list[ListedReceipt]  # the newest first, up to the instant
    after: list[ListedReceipt]  # the oldest first, after it
    request: dict[str, object]  # the last context request before it: the form's defaults


async def agent_at(
    pool: Pool, authorization: str | None, agent_id: str, at: datetime
) -> AgentInstant:
    """The receipts around an agent's instant (one issued at it counts as known by then), and
    what it last asked up to it."""
    # The listing's `until` is exclusive; receipt times are microseconds (PostgreSQL's unit).
    cut = at + timedelta(microseconds=1)
    async with unit_of_work(pool, authorization) as (conn, principal):
        principal.require_role(*AUDITORS)
        before = await list_receipts(
            conn,
            principal.tenant_id,
            ReceiptFilter(agent_id=agent_id, until=cut, newest_first=True, limit=AROUND),
        )
        after = await list_receipts(
            conn, principal.tenant_id, ReceiptFilter(agent_id=agent_id, since=cut, limit=AROUND)
        )
    asked = next((r for r in before if r.kind == CONTEXT.name), None)
    request = read_loosely(decode_body(bytes(asked.body))).request if asked is not None else {}
    return AgentInstant(
        agent_id, at, [_listed(r) for r in before], [_listed(r) for r in after], request
    )


@dataclass(frozen=True, slots=True)
class MemoryLife:
    memory_id: str
    versions: list[MemoryVersion]  # oldest first
    erasures: dict[str, str]  # memory id → the recorded reason of its erasure
    disclosed_by: dict[str, list[ListedReceipt]]  # version id → receipts that disclosed it
    decisions: list[DecisionRow]  # every supersession that retired a version or was won by one


def _readable_chain(
    principal: Principal, versions: list[MemoryVersion], memory_id: str
) -> list[MemoryVersion]:
    """The versions of the chain the key may read (its namespaces, as the API's reads by id
    keep to them), reached from `memory_id` through them alone, their links to any other
    version left out; empty when `memory_id` itself is not among them."""
    readable = {v.memory_id: v for v in versions if principal.may_use(v.namespace)}
    if memory_id not in readable:
        return []
    linked: dict[str, set[str]] = {m: set() for m in readable}
    for v in readable.values():
        for other in (v.supersedes, v.superseded_by):
            if other in readable:
                linked[v.memory_id].add(other)
                linked[other].add(v.memory_id)
    reached, frontier = {memory_id}, [memory_id]
    while frontier:
        for other in linked[frontier.pop()] - reached:
            reached.add(other)
            frontier.append(other)
    return [
        dataclasses.replace(
            v,
            supersedes=v.supersedes if v.supersedes in reached else None,
            superseded_by=v.superseded_by if v.superseded_by in reached else None,
        )
        for v in versions
        if v.memory_id in reached
    ]


async def memory_life(pool: Pool, authorization: str | None, memory_id: str) -> MemoryLife:
    """A memory's versions, the supersession decisions between them (rule, score, threshold,
    claim key, compile job), its deletions and erasure, and every receipt that disclosed each
    version (the listing's `memory_id` filter, newest first, a page per version). Only what the
    auditor's namespaces hold: a memory outside them is 404, as for an unknown one."""
    async with unit_of_work(pool, authorization) as (conn, principal):
        principal.require_role(*AUDITORS)
        chain = await console_store.version_chain(conn, principal.tenant_id, memory_id)
        versions = _readable_chain(principal, chain, memory_id)
        if not versions:
            raise NotFoundError(f"memory {memory_id} not found", code="memory_not_found")
        erasures: dict[str, str] = {}
        disclosed: dict[str, list[ListedReceipt]] = {}
        for version in versions:
            if version.erased_at is not None:
                reason = await console_store.erasure_reason(
                    conn, principal.tenant_id, version.memory_id
                )
                erasures[version.memory_id] = reason or ""
            where = ReceiptFilter(memory_id=version.memory_id, newest_first=True, limit=PAGE)
            rows = await list_receipts(conn, principal.tenant_id, where)
            disclosed[version.memory_id] = [_listed(r) for r in rows]
        shown = {v.memory_id for v in versions}
        decisions = [
            d
            for d in await decisions_about(conn, principal.tenant_id, sorted(shown))
            if d.older in shown and d.newer in shown
        ]
    return MemoryLife(memory_id, versions, erasures, disclosed, decisions)


@dataclass(frozen=True, slots=True)
class PoliciesView:
    active: ActivePolicy
    bundles: list[BundleRow]
    activations: list[ActivationRow]


async def policies_view(
    pool: Pool, registry: PolicyRegistry, authorization: str | None, at: datetime
) -> PoliciesView:
    """The bundle in force, every stored bundle with its source, and who activated what, when,
    in which mode."""
    active = await active_bundle(pool, registry, authorization, at)  # auditors and admins
    async with unit_of_work(pool, authorization) as (conn, principal):
        principal.require_role(*AUDITORS)
        bundles = await console_store.stored_bundles(conn, principal.tenant_id)
        activations = await console_store.activation_history(conn, principal.tenant_id, at)
    return PoliciesView(active, bundles, activations)
