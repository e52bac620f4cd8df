"""Every disclosure, one shape: judge by the policy in force, decide in the pure core, then write
the receipt in the same transaction before anything is answered (ARCHITECTURE §1, rules 1-3).

Each function returns the exact payload to send and its receipt id, or raises
`PolicyRefusedError` once the refusal is receipted (`gateway.usecases.refusal`). The receipt's
`bundle` hashes the exact bytes delivered: the bundle string for context; for search, timeline
and fetch the RFC 8785 form of the disclosed list as sent (an auditor re-canonicalizes the
response field).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import rfc8785

from gateway.core.assembly import ASSEMBLER_VERSION
from gateway.core.model import ContextRequest, Exclusion, MemoryId, MemoryType
from gateway.core.outcome import Assembly
from gateway.core.ranking import DEFAULT_PROFILE, Ranked, RankingProfile
from gateway.core.render import one_line
from gateway.embedding import Embedder
from gateway.memory import MemoryVersion
from gateway.principal import Principal
from gateway.store.database import Connection
from gateway.usecases import context as retrieval
from gateway.usecases.memories import withheld_reason
from gateway.usecases.policy import (
    PolicyInForce,
    PolicyRegistry,
    may_deny,
    memory_view,
    policy_gate,
    request_view,
    verdict,
)
from gateway.usecases.receipting import Recorder, rfc3339
from gateway.usecases.records import (
    assembly_members,
    candidate_record,
    context_payload,
    context_request,
    exclusion,
    memory_payload,
    timeline_entry,
)
from gateway.usecases.refusal import Disclosure, judge_request
from policies import Evaluation, evaluate

__all__ = ["SNIPPET_CHARS", "Disclosed", "Discloser"]

SNIPPET_CHARS = 120


@dataclass(frozen=True, slots=True)
class Disclosed:
    payload: dict[str, Any]  # the response body, receipt id included
    receipt_id: str


@dataclass(frozen=True, slots=True)
class Discloser:
    embedder: Embedder
    tokenizer_name: str
    recorder: Recorder
    policies: PolicyRegistry
    profile: RankingProfile = DEFAULT_PROFILE
    # Which assembler builds new bundles; replays build the version their receipt names.
    assembler_version: str = ASSEMBLER_VERSION

    def _assembler(
        self, profile: RankingProfile | None = None, version: str | None = None
    ) -> dict[str, Any]:
        profile = profile or self.profile
        return {
            "version": version or self.assembler_version,
            "tokenizer": self.tokenizer_name,
            "ranking_profile": {**profile.canonical(), "digest": profile.digest},
            "embedder": {"model": self.embedder.model, "dim": self.embedder.dim},
        }

    async def _policy(
        self,
        conn: Connection,
        principal: Principal,
        view: dict[str, object],
        *,
        disclosure: Disclosure,
        request: dict[str, Any],
        at: datetime,
        issued_at: datetime,
    ) -> PolicyInForce:
        """The policy in force at `at`, once the request stage lets the request through; a
        refusal is receipted before it is raised (`gateway.usecases.refusal`)."""
        principal.require_purpose(request["purpose"])
        policy = await self.policies.in_force(conn, principal.tenant_id, at)
        await judge_request(
            conn,
            self.recorder,
            principal,
            policy,
            view,
            disclosure=disclosure,
            request=request,
            at=at,
            issued_at=issued_at,
        )
        return policy

    async def context(
        self,
        conn: Connection,
        principal: Principal,
        request: ContextRequest,
        now: datetime,
        as_of: datetime | None = None,
    ) -> Disclosed:
        """A bundle for the task at `now`, or as the memory state stood at `as_of` (auditors):
        liveness, the policy in force and its time predicates are all pinned to that instant."""
        at = as_of or now
        policy = await self._policy(
            conn,
            principal,
            context_view(principal, request),
            disclosure="context",
            request=context_request(request, as_of),
            at=at,
            issued_at=now,
        )
        inputs = await retrieval.gather_context(
            conn,
            self.embedder,
            principal,
            request,
            at,
            historical=as_of is not None,
            version=self.assembler_version,
        )
        disclosed, _, _ = await self.assemble_and_record(
            conn, principal, request, inputs, policy, at=at, issued_at=now, as_of=as_of
        )
        return disclosed

    async def assemble_and_record(
        self,
        conn: Connection,
        principal: Principal,
        request: ContextRequest,
        inputs: retrieval.ContextInputs,
        policy: PolicyInForce,
        *,
        at: datetime,
        issued_at: datetime,
        as_of: datetime | None = None,
        kind: str = "context",
        profile: RankingProfile | None = None,
        extra: dict[str, Any] | None = None,
        parent_receipt_id: str | None = None,
        policy_subject: Principal | None = None,
        tokenizer_name: str | None = None,
        version: str | None = None,
    ) -> tuple[Disclosed, Assembly, Evaluation]:
        """The pure core on given inputs, then the receipt; shared by context and replay, so a
        replay receipt holds everything a context receipt holds and can be replayed in turn.

        `policy_subject` is whom the policy judges (a replay judges the original agent, while
        the receipt names the auditor who replayed); the receipt then records it as `judged`,
        so a replay of this replay judges the same agent."""
        profile = profile or self.profile
        version = version or self.assembler_version
        assembly, evaluation = assemble_under(
            request,
            inputs,
            policy,
            context_view(policy_subject or principal, request),
            at=at,
            profile=profile,
            tokenizer_name=tokenizer_name or self.tokenizer_name,
            version=version,
        )
        policy_record = policy.record(evaluation)
        receipt_id = await self.recorder.record(
            conn,
            principal,
            kind=kind,
            issued_at=issued_at,
            purpose=request.purpose,
            delivered=assembly.bundle.encode("utf-8"),
            members={
                "request": context_request(request, as_of),
                "at": rfc3339(at),
                "policy": policy_record,
                "assembler": self._assembler(profile, version),
                "candidates": sorted(
                    (candidate_record(c) for c in inputs.candidates),
                    key=lambda r: r["memory_id"],
                ),
                "index_input": {
                    "ids": [c.memory_id for c in inputs.index_entries],
                    "total_live": inputs.total_live,
                },
                **assembly_members(assembly),
                **({} if policy_subject is None else {"judged": judged_record(policy_subject)}),
                **(extra or {}),
            },
            disclosed_ids=[i.memory_id for i in assembly.included] + list(assembly.index.entries),
            policy_digest=policy.digest,
            parent_receipt_id=parent_receipt_id,
        )
        payload = {**context_payload(assembly), "policy": policy_record, "receipt_id": receipt_id}
        return Disclosed(payload, receipt_id), assembly, evaluation

    async def search(
        self,
        conn: Connection,
        principal: Principal,
        *,
        query: str,
        namespaces: tuple[str, ...],
        memory_types: tuple[MemoryType, ...] | None,
        limit: int,
        purpose: str | None,
        now: datetime,
    ) -> Disclosed:
        view = request_view(principal, purpose=purpose, namespaces=namespaces, budget_tokens=None)
        request: dict[str, Any] = {
            "query": query,
            "namespaces": list(namespaces),
            "memory_types": list(memory_types) if memory_types else None,
            "limit": limit,
            "purpose": purpose,
        }
        policy = await self._policy(
            conn, principal, view, disclosure="search", request=request, at=now, issued_at=now
        )
        outcome = await retrieval.search(
            conn,
            self.embedder,
            principal,
            query=query,
            namespaces=namespaces,
            memory_types=memory_types,
            limit=None,
            now=now,
            profile=self.profile,
            recall_for=limit,
        )
        ranked = outcome.hits
        evaluation = evaluate(policy.bundle, view, [memory_view(r.candidate) for r in ranked], now)
        judged = verdict(evaluation, [r.candidate for r in ranked])
        hits: list[Ranked] = []
        excluded = list(outcome.excluded)
        for r in ranked:
            memory_id = r.candidate.memory_id
            if memory_id in judged.denied:
                excluded.append(judged.denied[memory_id])
            elif memory_id in judged.capped:
                excluded.append(judged.capped[memory_id])
            elif len(hits) < limit:
                hits.append(r)
            else:
                excluded.append(Exclusion(memory_id, "below_top_k", f"beyond the limit of {limit}"))
        results: list[dict[str, Any]] = []
        for r in hits:
            heading, content = judged.rewritten.get(
                r.candidate.memory_id, (r.candidate.heading, r.candidate.content)
            )
            results.append(
                {
                    "memory_id": r.candidate.memory_id,
                    "heading": heading,
                    "snippet": one_line(content)[:SNIPPET_CHARS],
                    "memory_type": r.candidate.memory_type,
                    "confidence": r.candidate.confidence,
                    "distance": r.candidate.vector_distance,
                    "score": r.score,
                }
            )
        excluded.sort(key=lambda e: e.memory_id)
        return await self._disclose_list(
            conn,
            principal,
            kind="search",
            now=now,
            purpose=purpose,
            policy=policy,
            evaluation=evaluation,
            delivered=results,
            request=request,
            members={
                "assembler": self._assembler(),
                "candidates": sorted(
                    (candidate_record(r.candidate) for r in ranked), key=lambda x: x["memory_id"]
                ),
                "included": [
                    {
                        "memory_id": r.candidate.memory_id,
                        "content_sha256": r.candidate.content_sha256,
                        "score_micros": r.score_micros,
                        "rewritten": r.candidate.memory_id in judged.rewritten,
                    }
                    for r in hits
                ],
                "excluded": [exclusion(e) for e in excluded],
            },
            disclosed_ids=[r.candidate.memory_id for r in hits],
            payload={"results": results, "excluded": [exclusion(e) for e in excluded]},
        )

    async def timeline(
        self,
        conn: Connection,
        principal: Principal,
        ids: Sequence[str],
        purpose: str | None,
        now: datetime,
    ) -> Disclosed:
        view = request_view(principal, purpose=purpose, namespaces=(), budget_tokens=None)
        request: dict[str, Any] = {"ids": list(ids), "purpose": purpose}
        policy = await self._policy(
            conn, principal, view, disclosure="timeline", request=request, at=now, issued_at=now
        )
        found = await retrieval.timeline(conn, principal, ids)
        evaluation = evaluate(policy.bundle, view, [memory_view(v) for v in found.entries], now)
        judged = verdict(evaluation, found.entries)
        shown = [v for v in found.entries if MemoryId(v.memory_id) not in judged.denied]
        entries = [timeline_entry(v) for v in shown]
        excluded = sorted(judged.denied.values(), key=lambda e: e.memory_id)
        return await self._disclose_list(
            conn,
            principal,
            kind="timeline",
            now=now,
            purpose=purpose,
            policy=policy,
            evaluation=evaluation,
            delivered=entries,
            request=request,
            members={
                "included": [{"memory_id": v.memory_id} for v in shown],
                "excluded": [exclusion(e) for e in excluded],
                "missing": found.missing,
            },
            disclosed_ids=[v.memory_id for v in shown],
            payload={
                "entries": entries,
                "missing": found.missing,
                "excluded": [exclusion(e) for e in excluded],
            },
        )

    async def fetch(
        self,
        conn: Connection,
        principal: Principal,
        ids: Sequence[str],
        purpose: str | None,
        now: datetime,
    ) -> Disclosed:
        view = request_view(principal, purpose=purpose, namespaces=(), budget_tokens=None)
        request: dict[str, Any] = {"ids": list(ids), "purpose": purpose}
        policy = await self._policy(
            conn, principal, view, disclosure="fetch", request=request, at=now, issued_at=now
        )
        unique = list(dict.fromkeys(ids))
        versions = await retrieval.readable_versions(conn, principal, unique)
        live: list[MemoryVersion] = []
        withheld: list[dict[str, str]] = []
        for memory_id in unique:
            version = versions.get(memory_id)
            if version is None:
                continue
            reason = withheld_reason(version, now)
            if reason is None:
                live.append(version)
            else:
                withheld.append({"memory_id": memory_id, "reason": reason, "detail": ""})
        evaluation = evaluate(policy.bundle, view, [memory_view(v) for v in live], now)
        judged = verdict(evaluation, live)
        memories: list[dict[str, Any]] = []
        delivered_versions: list[MemoryVersion] = []
        for version in live:
            memory_id = MemoryId(version.memory_id)
            blocked = judged.denied.get(memory_id) or judged.capped.get(memory_id)
            if blocked is not None:
                withheld.append(exclusion(blocked))
                continue
            heading, content = judged.rewritten.get(memory_id, (version.heading, version.content))
            memories.append(memory_payload(version, heading, content))
            delivered_versions.append(version)
        missing = [i for i in unique if i not in versions]
        withheld.sort(key=lambda w: w["memory_id"])
        return await self._disclose_list(
            conn,
            principal,
            kind="fetch",
            now=now,
            purpose=purpose,
            policy=policy,
            evaluation=evaluation,
            delivered=memories,
            request=request,
            members={
                "included": [
                    {
                        "memory_id": v.memory_id,
                        "content_sha256": v.content_sha256,
                        "rewritten": MemoryId(v.memory_id) in judged.rewritten,
                    }
                    for v in delivered_versions
                ],
                "excluded": withheld,
                "missing": missing,
            },
            disclosed_ids=[v.memory_id for v in delivered_versions],
            payload={"memories": memories, "withheld": withheld, "missing": missing},
        )

    async def _disclose_list(
        self,
        conn: Connection,
        principal: Principal,
        *,
        kind: str,
        now: datetime,
        purpose: str | None,
        policy: PolicyInForce,
        evaluation: Evaluation,
        delivered: list[dict[str, Any]],
        request: dict[str, Any],
        members: dict[str, Any],
        disclosed_ids: list[str],
        payload: dict[str, Any],
    ) -> Disclosed:
        """Receipt a list disclosure (search, timeline, fetch): the bundle hash covers the
        RFC 8785 form of exactly the list sent."""
        policy_record = policy.record(evaluation)
        receipt_id = await self.recorder.record(
            conn,
            principal,
            kind=kind,
            issued_at=now,
            purpose=purpose,
            delivered=rfc8785.dumps(delivered),
            members={"request": request, "policy": policy_record, **members},
            disclosed_ids=disclosed_ids,
            policy_digest=policy.digest,
        )
        return Disclosed({**payload, "policy": policy_record, "receipt_id": receipt_id}, receipt_id)


def assemble_under(
    request: ContextRequest,
    inputs: retrieval.ContextInputs,
    policy: PolicyInForce,
    view: dict[str, object],
    *,
    at: datetime,
    profile: RankingProfile,
    tokenizer_name: str,
    version: str = ASSEMBLER_VERSION,
) -> tuple[Assembly, Evaluation]:
    """The pure core under a policy: the bundle and the evaluation that shaped it. A policy that
    may deny (:func:`may_deny`) gets an index that states no count of what it does not list."""
    evaluations: list[Evaluation] = []
    assembly = retrieval.build_context(
        request,
        inputs,
        tokenizer_name=tokenizer_name,
        now=at,
        profile=profile,
        gate=policy_gate(policy, view, at, evaluations),
        withhold_count=may_deny(policy.bundle),
        version=version,
    )
    evaluation = evaluations[-1] if evaluations else evaluate(policy.bundle, view, [], at)
    return assembly, evaluation


def judged_record(subject: Principal) -> dict[str, str | None]:
    """Whom a replay's policy judged: the original agent, as its receipt's `subject` named it."""
    return {"agent_id": subject.agent_id, "key_id": subject.key_id, "role": subject.role}


def context_view(principal: Principal, request: ContextRequest) -> dict[str, object]:
    return request_view(
        principal,
        purpose=request.purpose,
        namespaces=request.namespaces,
        budget_tokens=request.budget_tokens,
    )
