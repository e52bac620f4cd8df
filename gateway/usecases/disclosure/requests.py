"""The disclosure use cases as the edge calls them: each takes the caller's `Authorization`
header and a parsed request, opens its unit of work (`gateway.usecases.access.work`), checks the role,
resolves what the key leaves to defaults, runs the pipeline and returns the response body."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from gateway.core.model import ContextRequest, FillMode, MemoryType
from gateway.domain.principal import Role
from gateway.responses.disclosures import (
    ContextBundle,
    ContextReplay,
    FetchedMemories,
    RefusalReplay,
    SearchResults,
    Timeline,
)
from gateway.responses.sessions import SessionContextReplay
from gateway.store.database import Pool
from gateway.usecases.access.work import unit_of_work
from gateway.usecases.audit.replay import Replayer
from gateway.usecases.disclosure import listing
from gateway.usecases.disclosure.pipeline import Discloser
from gateway.usecases.disclosure.retrieval import check_as_of, resolve_namespaces

__all__ = [
    "ContextAsk",
    "Disclosures",
    "IdsAsk",
    "ReplayAsk",
    "SearchAsk",
]


@dataclass(frozen=True, slots=True)
class ContextAsk:
    """POST /v1/context as the caller sent it (validated); the key fills in the rest."""

    task: str
    namespaces: Sequence[str] | None = None
    budget_tokens: int | None = None
    top_k: int = 6
    memory_types: Sequence[MemoryType] | None = None
    purpose: str | None = None
    include_index: bool = True
    index_budget_tokens: int | None = None
    fill: FillMode = "skip"
    as_of: datetime | None = None


@dataclass(frozen=True, slots=True)
class SearchAsk:
    query: str
    namespaces: Sequence[str] | None = None
    memory_types: Sequence[MemoryType] | None = None
    limit: int = 8
    purpose: str | None = None


@dataclass(frozen=True, slots=True)
class IdsAsk:
    """A timeline or fetch: memories by id."""

    ids: Sequence[str]
    purpose: str | None = None


@dataclass(frozen=True, slots=True)
class ReplayAsk:
    mode: Literal["exact", "current", "what_if"]
    policy_digest: str | None = None
    policy_yaml: str | None = None


def _types(memory_types: Sequence[MemoryType] | None) -> tuple[MemoryType, ...] | None:
    return tuple(sorted(set(memory_types))) if memory_types else None


@dataclass(frozen=True, slots=True)
class Disclosures:
    pool: Pool
    discloser: Discloser
    replayer: Replayer
    clock: Callable[[], datetime]
    default_budget: Callable[[Role], int]  # the budget of a request that names none

    async def context(self, authorization: str | None, ask: ContextAsk) -> ContextBundle:
        now = self.clock()
        async with unit_of_work(self.pool, authorization) as (conn, principal):
            if ask.as_of is None:
                principal.require_role("agent", "admin")
            else:
                principal.require_role("auditor", "admin")
                await check_as_of(conn, principal.tenant_id, ask.as_of, now)
            request = ContextRequest(
                task=ask.task,
                namespaces=resolve_namespaces(principal, ask.namespaces),
                budget_tokens=ask.budget_tokens or self.default_budget(principal.role),
                top_k=ask.top_k,
                memory_types=_types(ask.memory_types),
                purpose=ask.purpose,
                include_index=ask.include_index,
                index_budget_tokens=ask.index_budget_tokens,
                fill=ask.fill,
            )
            return await self.discloser.context(conn, principal, request, now, as_of=ask.as_of)

    async def search(self, authorization: str | None, ask: SearchAsk) -> SearchResults:
        now = self.clock()
        async with unit_of_work(self.pool, authorization) as (conn, principal):
            principal.require_role("agent", "admin")
            return await listing.search(
                self.discloser,
                conn,
                principal,
                query=ask.query,
                namespaces=resolve_namespaces(principal, ask.namespaces),
                memory_types=_types(ask.memory_types),
                limit=ask.limit,
                purpose=ask.purpose,
                now=now,
            )

    async def timeline(self, authorization: str | None, ask: IdsAsk) -> Timeline:
        now = self.clock()
        async with unit_of_work(self.pool, authorization) as (conn, principal):
            principal.require_role("agent", "admin")
            return await listing.timeline(
                self.discloser, conn, principal, ask.ids, ask.purpose, now
            )

    async def fetch(self, authorization: str | None, ask: IdsAsk) -> FetchedMemories:
        now = self.clock()
        async with unit_of_work(self.pool, authorization) as (conn, principal):
            principal.require_role("agent", "admin")
            return await listing.fetch(self.discloser, conn, principal, ask.ids, ask.purpose, now)

    async def replay(
        self, authorization: str | None, receipt_id: str, ask: ReplayAsk
    ) -> ContextReplay | RefusalReplay | SessionContextReplay:
        now = self.clock()
        async with unit_of_work(self.pool, authorization) as (conn, principal):
            return await self.replayer.replay(
                conn,
                principal,
                receipt_id,
                ask.mode,
                now,
                policy_digest=ask.policy_digest,
                policy_yaml=ask.policy_yaml,
            )
