"""The disclosure use cases as the edge calls them, one front per request: each takes the
caller's `Authorization` header and the request as decoded (`gateway.requests`), opens its unit of
work (`gateway.usecases.access.work`), checks the role, resolves what the key leaves to defaults,
runs the pipeline's stages (`gateway.usecases.disclosure.pipeline`) and returns the response
body."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

import msgspec

from gateway.core.model import ContextRequest, MemoryType
from gateway.domain.errors import FieldError, InvalidRequestError
from gateway.domain.principal import Role
from gateway.requests import ContextIn, FetchClaimsIn, FetchIn, ReplayIn, SearchIn, TimelineIn
from gateway.responses.disclosures import (
    ContextBundle,
    ContextReplay,
    FetchedMemories,
    RefusalReplay,
    SearchResults,
    Timeline,
)
from gateway.responses.sessions import SessionContextReplay
from gateway.store import memories as memory_store
from gateway.store.pool import Pool
from gateway.usecases.access.policy import context_view
from gateway.usecases.access.work import unit_of_work
from gateway.usecases.audit.replay import Replayer
from gateway.usecases.disclosure import listing, lookup, retrieval
from gateway.usecases.disclosure.pipeline import Discloser, compose
from gateway.usecases.disclosure.records import context_request
from gateway.usecases.disclosure.retrieval import check_as_of
from gateway.usecases.receiptlog.kinds import CONTEXT
from gateway.usecases.tracing import stage

__all__ = ["Disclosures"]


def _types(memory_types: Sequence[MemoryType] | None) -> tuple[MemoryType, ...] | None:
    return tuple(sorted(set(memory_types))) if memory_types else None


@dataclass(frozen=True, slots=True)
class Disclosures:
    pool: Pool
    discloser: Discloser
    replayer: Replayer
    clock: Callable[[], datetime]
    default_budget: Callable[[Role], int]  # the budget of a request that names none

    async def context(self, authorization: str | None, ask: ContextIn) -> ContextBundle:
        """A bundle for the task at now, or as the memory state stood at `as_of` (auditors):
        liveness, the policy in force and its time predicates are all pinned to that instant.
        The pipeline's stages in order: admission, recall, composition, record."""
        now = self.clock()
        async with unit_of_work(self.pool, authorization) as (conn, principal):
            if ask.as_of is None:
                principal.require_role("agent", "admin")
            else:
                principal.require_role("auditor", "admin")
                await check_as_of(conn, principal.tenant_id, ask.as_of, now)
            assembler = self.discloser.makers.assembler
            if ask.top_k is None and not assembler.budget_sized:
                # A gateway kept on a version before assemble/2026-12-04.2 sizes no full tier
                # by the budget: the request must say how many memories it shows in full.
                raise InvalidRequestError(
                    f"this gateway builds bundles with {assembler.version}, which needs a top_k",
                    (FieldError("top_k", "required by the gateway's assembler: 1 to 50"),),
                )
            request = ContextRequest(
                task=ask.task,
                namespaces=principal.namespaces_read(ask.namespaces),
                budget_tokens=ask.budget_tokens or self.default_budget(principal.role),
                top_k=ask.top_k,
                memory_types=_types(ask.memory_types),
                purpose=ask.purpose,
                include_index=ask.include_index,
                index_budget_tokens=ask.index_budget_tokens,
                fill=ask.fill,
            )
            at = ask.as_of or now
            discloser = self.discloser
            admitted = await discloser.admit(
                conn,
                principal,
                context_view(principal, request),
                disclosure=CONTEXT,
                request=context_request(request, ask.as_of),
                purpose=request.purpose,
                at=at,
                issued_at=now,
            )
            with stage("ctxgw.recall") as span:
                found = await retrieval.find(
                    conn,
                    discloser.embedder,
                    principal,
                    request,
                    at,
                    historical=ask.as_of is not None,
                    policy=admitted.policy.bundle,
                )
                span.label("ctxgw.candidates", len(found.candidates))
            with stage("ctxgw.assembly") as span:
                composed = compose(request, found, admitted, discloser.makers, at=at)
                span.label("ctxgw.tokens_used", composed.assembly.tokens_used)
            return await discloser.record(conn, principal, composed, issued_at=now, as_of=ask.as_of)

    async def search(self, authorization: str | None, ask: SearchIn) -> SearchResults:
        now = self.clock()
        async with unit_of_work(self.pool, authorization) as (conn, principal):
            principal.require_role("agent", "admin")
            return await listing.search(
                self.discloser,
                conn,
                principal,
                query=ask.query,
                namespaces=principal.namespaces_read(ask.namespaces),
                memory_types=_types(ask.memory_types),
                limit=ask.limit,
                purpose=ask.purpose,
                now=now,
            )

    async def timeline(self, authorization: str | None, ask: TimelineIn) -> Timeline:
        now = self.clock()
        async with unit_of_work(self.pool, authorization) as (conn, principal):
            principal.require_role("agent", "admin")
            return await lookup.timeline(self.discloser, conn, principal, ask.ids, ask.purpose, now)

    async def fetch(self, authorization: str | None, ask: FetchIn) -> FetchedMemories:
        now = self.clock()
        async with unit_of_work(self.pool, authorization) as (conn, principal):
            principal.require_role("agent", "admin")
            return await lookup.fetch(self.discloser, conn, principal, ask.ids, ask.purpose, now)

    async def fetch_claims(self, authorization: str | None, ask: FetchClaimsIn) -> FetchedMemories:
        """A fetch of the live memories holding the claim keys in one namespace: the claims
        resolve to ids under the tenant's wall (RLS) in the key's own namespace, then it is a
        fetch of those ids like any other (judged, redacted, receipted `fetch`, the ids in the
        receipt's request). The agent named no id, so `missing` names none: a memory the policy
        withholds from it is, to it, a claim no memory holds."""
        now = self.clock()
        async with unit_of_work(self.pool, authorization) as (conn, principal):
            principal.require_role("agent", "admin")
            principal.require_namespace(ask.namespace)
            ids = await memory_store.live_by_claim(
                conn, principal.tenant_id, ask.namespace, sorted(set(ask.claim_keys))
            )
            fetched = await lookup.fetch(self.discloser, conn, principal, ids, ask.purpose, now)
            return msgspec.structs.replace(fetched, missing=[])

    async def replay(
        self, authorization: str | None, receipt_id: str, ask: ReplayIn
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
