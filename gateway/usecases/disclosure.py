"""Every disclosure, one shape: judge by the policy in force, decide in the pure core, then write
the receipt in the same transaction before anything is answered (ARCHITECTURE §1, rules 1-3).

Each disclosure returns the exact payload to send and its receipt id, or raises
`PolicyRefusedError` once the refusal is receipted (`gateway.usecases.refusal`). The receipt's
`bundle` hashes the exact bytes delivered: the bundle string for context (here); for search,
timeline and fetch (`gateway.usecases.listing`) the RFC 8785 form of the disclosed list as sent
(an auditor re-canonicalizes the response field).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from gateway.core.assembly import ASSEMBLER_VERSION, redacts_rendered_only
from gateway.core.model import ContextRequest
from gateway.core.outcome import Assembly
from gateway.core.ranking import DEFAULT_PROFILE, RankingProfile
from gateway.embedding import Embedder
from gateway.principal import Principal
from gateway.store.database import Connection
from gateway.usecases import context as retrieval
from gateway.usecases.policy import (
    PolicyInForce,
    PolicyRegistry,
    may_deny,
    policy_gate,
    reads_content,
    request_view,
)
from gateway.usecases.receipting import Recorder, rfc3339
from gateway.usecases.records import (
    assembly_members,
    candidate_record,
    context_payload,
    context_request,
)
from gateway.usecases.refusal import Disclosure, judge_request
from policies import Evaluation, Judgement, evaluate

__all__ = ["Disclosed", "Discloser"]


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

    def assembler_record(
        self, profile: RankingProfile | None = None, version: str | None = None
    ) -> dict[str, Any]:
        profile = profile or self.profile
        return {
            "version": version or self.assembler_version,
            "tokenizer": self.tokenizer_name,
            "ranking_profile": {**profile.canonical(), "digest": profile.digest},
            "embedder": {"model": self.embedder.model, "dim": self.embedder.dim},
        }

    async def policy_for(
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
        policy = await self.policy_for(
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
            index_content=reads_content(policy.bundle),
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
                "assembler": self.assembler_record(profile, version),
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
    judgements: list[Judgement] = []
    assembly = retrieval.build_context(
        request,
        inputs,
        tokenizer_name=tokenizer_name,
        now=at,
        profile=profile,
        gate=policy_gate(
            policy, view, at, judgements, rendered_only=redacts_rendered_only(version)
        ),
        withhold_count=may_deny(policy.bundle),
        version=version,
    )
    if not judgements:
        return assembly, evaluate(policy.bundle, view, [], at)
    return assembly, shown_evaluation(judgements[-1], assembly, version)


def shown_evaluation(judgement: Judgement, assembly: Assembly, version: str) -> Evaluation:
    """The evaluation whose redaction covers what the bundle shows: its index lines (headings)
    and its blocks (in full); every candidate's texts for assemblers before
    `redacts_rendered_only`, as their receipts record."""
    if not redacts_rendered_only(version):
        return judgement.evaluation(full=range(len(judgement.ids)))
    position = {memory_id: m for m, memory_id in enumerate(judgement.ids)}
    return judgement.evaluation(
        headings=[position[memory_id] for memory_id in assembly.index.entries],
        full=[position[i.memory_id] for i in assembly.included],
    )


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
