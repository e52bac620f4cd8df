"""Every disclosure, one pipeline (ARCHITECTURE §1, rules 1-3):

    scope -> candidates (store) -> judgement (policy, once) -> assembly (pure) -> record (receipt)
    -> response

Each stage takes the previous stage's value and returns its own. `Discloser.admit` judges the
request stage once (a refusal is receipted, then raised: `gateway.usecases.disclosure.refusal`); the memory
stages follow from that same judgement. `compose` is the pure middle of a context bundle: the core
prepares and ranks, the policy judges what could be shown, the core selects, the policy redacts
exactly the selected texts, the core lays the bundle out. `Discloser.record` writes the receipt in
the request's transaction before anything is answered. A context request runs the stages in
order from its front, `gateway.usecases.disclosure.requests.Disclosures.context`. The list
disclosures (search, timeline, fetch) share the admission, the verdict and the record:
`gateway.usecases.disclosure.listing`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from gateway.core.bundle import lay_out
from gateway.core.model import Candidate, ContextRequest
from gateway.core.outcome import Assembly
from gateway.core.preparation import Found, Prepared, prepare
from gateway.core.profile import RankingProfile
from gateway.core.selection import select
from gateway.core.tokens import load_tokenizer
from gateway.core.versions import ASSEMBLER, ASSEMBLERS, DEFAULT_PROFILE, Assembler
from gateway.domain.principal import Principal
from gateway.embedding import Embedder
from gateway.responses.disclosures import ContextBundle
from gateway.responses.receipt_bodies import ContextBody
from gateway.responses.receipt_parts import (
    AssemblerRecord,
    EmbedderRecord,
    JudgedRecord,
    RankingProfileRecord,
    ReplayRecord,
)
from gateway.store.database import Connection
from gateway.usecases.access.need_to_know import Account, account_for
from gateway.usecases.access.policy import (
    PolicyInForce,
    PolicyRegistry,
    may_deny,
    memory_view,
    request_stage,
    shown_evaluation,
    shown_texts,
    verdict_of,
)
from gateway.usecases.disclosure.records import bundle_members, context_bundle, excluded
from gateway.usecases.disclosure.refusal import receipt_refusal
from gateway.usecases.receiptlog.kinds import CONTEXT, Kind
from gateway.usecases.receiptlog.recorder import Recorder, rfc3339
from gateway.usecases.tracing import KIND, TENANT, stage
from policies import Evaluation, Judgement, RequestJudgement

__all__ = [
    "Admitted",
    "Composed",
    "Discloser",
    "Makers",
    "assembler_named",
    "compose",
    "makers_of",
]


@dataclass(frozen=True, slots=True)
class Admitted:
    """A request the policy in force let through its request stage; `judging` judges the
    memories next, bound to the same request view and instant."""

    policy: PolicyInForce
    judging: RequestJudgement
    # Fields every judged item carries besides its own (a session context's `session.*`).
    scope: Mapping[str, object] | None = None


@dataclass(frozen=True, slots=True)
class Makers:
    """What makes a bundle's bytes, as its receipt's `assembler` member names it: a replay
    rebuilds with the recorded ones."""

    assembler: Assembler
    tokenizer: str
    profile: RankingProfile
    embedder_model: str
    embedder_dim: int

    def record(self, session_layout: str | UnsetType = UNSET) -> AssemblerRecord:
        profile = {**self.profile.canonical(), "digest": self.profile.digest}
        return AssemblerRecord(
            version=self.assembler.version,
            tokenizer=self.tokenizer,
            ranking_profile=msgspec.convert(profile, RankingProfileRecord),
            embedder=EmbedderRecord(model=self.embedder_model, dim=self.embedder_dim),
            session_layout=session_layout,
        )


@dataclass(frozen=True, slots=True)
class Composed:
    """A bundle made: the request, what the store found, how and under which policy, the result
    and the evaluation that shaped it. Everything a context receipt records."""

    request: ContextRequest
    found: Found
    at: datetime
    policy: PolicyInForce
    makers: Makers
    assembly: Assembly
    evaluation: Evaluation
    # The dead candidates (superseded, deleted, expired) the policy would deny: named to no
    # agent, as the live ones it denies (`gateway.usecases.access.need_to_know`). The receipt
    # keeps them, with their reasons.
    unseen: frozenset[str] = frozenset()


def compose(
    request: ContextRequest,
    found: Found,
    admitted: Admitted,
    makers: Makers,
    *,
    at: datetime,
) -> Composed:
    """The pure middle of a context bundle. The policy judges every memory that could reach the
    bundle once, and redacts only the texts the selection may show and those its defence reads
    before it decides (the admitted turns it compares, as the agent would be shown them, so
    what a redaction hides decides nothing); the evaluation recorded speaks of what the bundle
    did show (its index lines by heading, its blocks in full). A policy that may deny
    (`may_deny`) gets an index that states no count of what it omits.

    Under an assembler that ranks what the policy admits, a judgement that denies a retrieved
    candidate (or a dead one the policy would deny) ranks again without them and judges again
    in the new order, which caps follow; a request whose candidates the policy denies none of
    is judged once, as before."""
    prepared = prepare(request, found, profile=makers.profile, now=at)
    judgement = _judged(prepared.judged, admitted)
    unseen = _denied_dead(found, prepared, admitted)
    if makers.assembler.rank_admitted:
        retrieved = prepared.retrieved.keys()
        hidden = (verdict_of(judgement).denied.keys() | unseen) & retrieved
        if hidden:
            prepared = prepare(request, found, profile=makers.profile, now=at, hidden=hidden)
            judgement = _judged(prepared.judged, admitted)
    selection = select(
        prepared,
        verdict_of(judgement),
        makers.assembler,
        lambda memory_ids: shown_texts(judgement, (), memory_ids),
    )
    texts = shown_texts(judgement, selection.headings, selection.full)
    assembly = lay_out(
        selection,
        texts,
        tokenizer=load_tokenizer(makers.tokenizer),
        withhold_count=may_deny(admitted.policy.bundle),
        assembler=makers.assembler,
    )
    evaluation = shown_evaluation(
        judgement, assembly.index.entries, [i.memory_id for i in assembly.included]
    )
    return Composed(request, found, at, admitted.policy, makers, assembly, evaluation, unseen)


def _judged(memories: Sequence[Candidate], admitted: Admitted) -> Judgement:
    """The policy's memory stage over `memories` (traced: `gateway.usecases.tracing`)."""
    with stage("ctxgw.policy.memories") as span:
        span.label("ctxgw.memories", len(memories))
        return admitted.judging.judge(_views(memories, admitted))


def _views(memories: Iterable[Candidate], admitted: Admitted) -> list[dict[str, object]]:
    """The memories as the policy judges them, with the fields every judged item of the
    disclosure carries (a session's)."""
    views = [memory_view(c) for c in memories]
    return [{**view, **admitted.scope} for view in views] if admitted.scope else views


def _denied_dead(found: Found, prepared: Prepared, admitted: Admitted) -> frozenset[str]:
    """The dead candidates the policy would deny, judged as the live ones are (and recorded
    nowhere: a dead memory is shown to no one, and its exclusion is for the dead). Only a
    bundle that can deny judges them."""
    dead = {e.memory_id for e in prepared.dead}
    if not dead or not may_deny(admitted.policy.bundle):
        return frozenset()
    versions = {c.memory_id: c for c in (*found.index_entries, *found.candidates)}
    judged = [versions[m] for m in sorted(dead)]
    return frozenset(verdict_of(_judged(judged, admitted)).denied)


def makers_of(assembler: Assembler, tokenizer_name: str, embedder: Embedder) -> Makers:
    """What builds this gateway's new bundles: `assembler`, the tokenizer, the ranking profile
    of its defaults and `embedder`'s model."""
    return Makers(assembler, tokenizer_name, DEFAULT_PROFILE, embedder.model, embedder.dim)


def assembler_named(version: str | None) -> Assembler:
    """The assembler new bundles are built by: the newest, or the `version` an operator pins
    (`GATEWAY_ASSEMBLER`); raises `UnknownVersionError` for one this gateway does not build."""
    return ASSEMBLER if version is None else ASSEMBLERS.resolve(version)


@dataclass(frozen=True, slots=True)
class Discloser:
    embedder: Embedder
    recorder: Recorder
    policies: PolicyRegistry
    # What builds new bundles (`makers_of`); replays build with what their receipt names.
    makers: Makers

    async def admit(
        self,
        conn: Connection,
        principal: Principal,
        view: dict[str, object],
        *,
        disclosure: Kind[Any],
        request: msgspec.Struct,
        purpose: str | None,
        at: datetime,
        issued_at: datetime,
    ) -> Admitted:
        """The policy in force at `at`, once its request stage lets the request through; a
        refusal is receipted before it is raised (`gateway.usecases.disclosure.refusal`)."""
        principal.require_purpose(purpose)
        with stage("ctxgw.policy.request") as span:
            span.label(TENANT, principal.tenant_id)
            span.label(KIND, disclosure.name)
            policy = await self.policies.in_force(conn, principal.tenant_id, at)
            judging = request_stage(policy, view, at)
            span.label("ctxgw.refused", judging.refused is not None)
        if judging.refused is not None:
            await receipt_refusal(
                conn,
                self.recorder,
                principal,
                policy,
                judging,
                disclosure=disclosure,
                request=request,
                purpose=purpose,
                at=at,
                issued_at=issued_at,
            )
        return Admitted(policy, judging)

    async def record(
        self,
        conn: Connection,
        principal: Principal,
        composed: Composed,
        *,
        issued_at: datetime,
        as_of: datetime | None = None,
        kind: Kind[ContextBody] = CONTEXT,
        judged: Principal | None = None,
        parent_receipt_id: str | None = None,
        replay: ReplayRecord | UnsetType = UNSET,
    ) -> ContextBundle:
        """Receipt a composed bundle; shared by context and replay, so a replay receipt holds
        everything a context receipt holds and can be replayed in turn.

        `judged` is whom the policy judged when not the caller (a replay judges the original
        agent, while the receipt names the auditor who replayed); the receipt records it, so a
        replay of this replay judges the same agent."""
        assembly = composed.assembly
        policy_record = composed.policy.record(composed.evaluation)
        members = bundle_members(composed.request, as_of, composed.found, assembly)
        received = [i.memory_id for i in assembly.included] + list(assembly.index.entries)
        receipt_id = await self.recorder.record(
            conn,
            principal,
            kind=kind,
            issued_at=issued_at,
            purpose=composed.request.purpose,
            delivered=assembly.bundle.encode("utf-8"),
            members=ContextBody(
                **msgspec.structs.asdict(members),
                at=rfc3339(composed.at),
                policy=policy_record,
                assembler=composed.makers.record(),
                judged=UNSET if judged is None else judged_record(judged),
                replay=replay,
            ),
            disclosed_ids=received,
            policy_digest=composed.policy.digest,
            parent_receipt_id=parent_receipt_id,
        )
        told = account_for(
            principal,
            composed.policy,
            policy_record,
            [excluded(e) for e in assembly.excluded],
            Account(received, unseen=composed.unseen),
        )
        return context_bundle(assembly, told, receipt_id)


def judged_record(subject: Principal) -> JudgedRecord:
    """Whom a replay's policy judged: the original agent, as its receipt's `subject` named it."""
    return JudgedRecord(agent_id=subject.agent_id, key_id=subject.key_id, role=subject.role)
