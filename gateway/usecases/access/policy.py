"""Policy bundles in the gateway: upload, activation, the bundle in force, and the translation
of its judgement into what the core applies (`verdict_of`) and shows (`shown_texts`).

Identity fields the policy sees (tenant, agent_id, role) come from the API key; the request only
contributes what the caller legitimately declares (purpose, namespaces, budget).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from gateway.core.model import Candidate, ContextRequest, Exclusion, MemoryId
from gateway.core.verdict import Verdict
from gateway.domain.errors import (
    FieldError,
    InvalidRequestError,
    NotFoundError,
    PolicyRefusedError,
)
from gateway.domain.memory import MemoryVersion
from gateway.domain.principal import Principal
from gateway.responses.disclosures import (
    DecisionRecord,
    Evidence,
    MemoryOutcome,
    RedactionCount,
    RefusalRecord,
)
from gateway.responses.receipt_parts import PolicyRecord
from gateway.store import policies as policy_store
from gateway.store.database import Connection
from policies import (
    Bundle,
    Decision,
    Evaluation,
    Judgement,
    LoadedBundle,
    PolicyLintError,
    Redaction,
    RequestJudgement,
    default_bundle,
    judge_request,
    load_bundle,
    load_canonical,
)
from policies import MemoryOutcome as PolicyOutcome
from policies.detectors import redact_text

__all__ = [
    "DEFAULT_UPLOADER",
    "PolicyInForce",
    "PolicyRegistry",
    "context_view",
    "decision_record",
    "lint_or_reject",
    "may_deny",
    "may_rewrite",
    "memory_view",
    "outcome_record",
    "reads_content",
    "refuse_unless_required_met",
    "request_stage",
    "request_view",
    "searchable",
    "shown_evaluation",
    "shown_texts",
    "verdict_of",
]

Mode = Literal["enforce", "log_only"]
DEFAULT_UPLOADER = "ctxgw:shipped-default"


@dataclass(frozen=True, slots=True)
class PolicyInForce:
    """The bundle a disclosure is judged by, with the activation's mode applied to it."""

    digest: str
    mode: Mode
    bundle: Bundle
    activated: bool  # False: no activation yet, the shipped default applies

    def record(self, *evaluations: Evaluation) -> PolicyRecord:
        """The `policy` member of receipt bodies (and, narrowed, of responses): every decision
        of every evaluation one disclosure made, in order (a session context judges its turns
        and summary, then its memories, and records both)."""
        refused = next((e.refused for e in evaluations if e.refused is not None), None)
        return PolicyRecord(
            digest=self.digest,
            mode=self.mode,
            decisions=[decision_record(d) for e in evaluations for d in e.decisions],
            outcomes=[outcome_record(o) for e in evaluations for o in e.outcomes],
            refused=None if refused is None else RefusalRecord(refused.reason, refused.rule_id),
        )


def _redactions(redactions: Sequence[Redaction]) -> list[RedactionCount]:
    return [RedactionCount(r.count, r.detector, r.field) for r in redactions]


def decision_record(d: Decision) -> DecisionRecord:
    return DecisionRecord(
        applied=d.applied,
        effect=d.effect,
        error=d.error,
        evidence=[Evidence(e.actual, e.expected, e.field, e.op, e.result) for e in d.evidence],
        memory_id=d.memory_id,
        mode=d.mode,
        outcome=d.outcome,
        outcome_if_enforced=d.outcome_if_enforced,
        reason=d.reason,
        redactions=_redactions(d.redactions),
        rule_id=d.rule_id,
        stage=d.stage,
    )


def outcome_record(o: PolicyOutcome) -> MemoryOutcome:
    return MemoryOutcome(
        memory_id=o.memory_id,
        outcome=o.outcome,
        outcome_if_enforced=o.outcome_if_enforced,
        redactions=_redactions(o.redactions),
        redactions_if_enforced=_redactions(o.redactions_if_enforced),
        rule_id=o.rule_id,
        rule_id_if_enforced=o.rule_id_if_enforced,
    )


@dataclass
class PolicyRegistry:
    """Each tenant's stored bundles by digest (parsed once per process), and the activation
    in force per tenant."""

    shipped: LoadedBundle = field(default_factory=default_bundle)
    # Keyed by tenant as well: a bundle one tenant stored is not another's to name (the cache
    # must never answer for a tenant the store would not).
    _parsed: dict[tuple[str, str], Bundle] = field(default_factory=dict)

    async def in_force(self, conn: Connection, tenant_id: str, at: datetime) -> PolicyInForce:
        state = await policy_store.policy_state(conn, tenant_id, at, self.shipped.digest)
        activation = state.activation
        if activation is None:
            if not state.default_stored:
                await self.store_default(conn, tenant_id)
            bundle = self.shipped.bundle
            return PolicyInForce(self.shipped.digest, bundle.mode, bundle, activated=False)
        bundle = await self.bundle(conn, tenant_id, activation.digest)
        mode: Mode = "log_only" if activation.mode == "log_only" else "enforce"
        return PolicyInForce(
            activation.digest, mode, dataclasses.replace(bundle, mode=mode), activated=True
        )

    async def bundle(self, conn: Connection, tenant_id: str, digest: str) -> Bundle:
        """A stored bundle by digest (404 when this tenant never stored it)."""
        cached = self._parsed.get((tenant_id, digest))
        if cached is not None:
            return cached
        if digest == self.shipped.digest:
            return self.shipped.bundle
        row = await policy_store.find_bundle(conn, tenant_id, digest)
        if row is None:
            raise NotFoundError(f"policy bundle {digest} not found", code="policy_not_found")
        parsed = load_canonical(row.canonical)
        self._parsed[tenant_id, digest] = parsed
        return parsed

    async def store_default(self, conn: Connection, tenant_id: str) -> None:
        """Store the shipped default for the tenant, in the caller's transaction (a no-op when
        stored). Receipts cite the digest of the bundle in force; storing the default whenever
        it serves a tenant whose store lacks it keeps every cited digest loadable for replay,
        forever: it commits with the receipt that cites it, or neither does."""
        await policy_store.insert_bundle(
            conn,
            tenant_id,
            digest=self.shipped.digest,
            canonical=self.shipped.canonical,
            source=self.shipped.source,
            name=self.shipped.bundle.name,
            revision=self.shipped.bundle.revision or None,
            uploaded_by=DEFAULT_UPLOADER,
        )


def request_view(
    principal: Principal,
    *,
    purpose: str | None,
    namespaces: Sequence[str],
    budget_tokens: int | None,
) -> dict[str, object]:
    return {
        "tenant": principal.tenant_id,
        "agent_id": principal.agent_id,
        "role": principal.role,
        "purpose": purpose,
        "namespaces": list(namespaces),
        "budget_tokens": budget_tokens,
    }


def context_view(principal: Principal, request: ContextRequest) -> dict[str, object]:
    """A context request as the policy's request stage judges it."""
    return request_view(
        principal,
        purpose=request.purpose,
        namespaces=request.namespaces,
        budget_tokens=request.budget_tokens,
    )


def memory_view(memory: Candidate | MemoryVersion) -> dict[str, object]:
    return {
        "memory_id": memory.memory_id,
        "namespace": memory.namespace,
        "memory_type": memory.memory_type,
        "heading": memory.heading,
        "content": memory.content,
        "confidence": memory.confidence,
        "labels": list(memory.labels),
        "source_type": memory.source_type,
        "source_ref": memory.source_ref,
        "created_at": memory.created_at,
        "expires_at": memory.expires_at,
        "tokens": memory.tokens,
    }


def may_deny(bundle: Bundle) -> bool:
    """Whether ``bundle`` (with the activation's mode applied) can withhold memories at admission
    under enforcement: an enforced ``deny`` rule, or ``default_decision: deny`` in enforce mode.

    Judged from the bundle's shape alone, never from the memories, so that acting on it (the
    index then states no count of what it does not list) reveals nothing about what was denied.
    A change to this rule changes bundle bytes: it needs a new assembler version.
    """
    if bundle.mode == "enforce" and bundle.default_decision == "deny":
        return True
    return any(
        rule.effect == "deny" and bundle.effective_mode(rule) == "enforce" for rule in bundle.rules
    )


def may_rewrite(bundle: Bundle) -> bool:
    """Whether ``bundle`` (with the activation's mode applied) can rewrite what it shows: an
    enforced ``redact`` rule."""
    return any(
        rule.effect == "redact" and bundle.effective_mode(rule) == "enforce"
        for rule in bundle.rules
    )


def searchable(bundle: Bundle, text: str) -> str:
    """``text`` (a task, a query) as a recall may read it under ``bundle``: every value of a
    kind an enforced redaction hides (an email, a phone number, a token, ...) replaced by its
    marker, so no hidden value steers a recall. An agent shown "[redacted:email]" could
    otherwise learn which memory holds an address it guesses from the order, or the presence,
    of what it is shown; the values it may see it still finds by."""
    hidden = (
        rule.detectors
        for rule in bundle.rules
        if rule.effect == "redact" and bundle.effective_mode(rule) == "enforce"
    )
    kinds = tuple(dict.fromkeys(kind for detectors in hidden for kind in detectors))
    return redact_text(text, kinds).text if kinds else text


def reads_content(bundle: Bundle) -> bool:
    """Whether a rule of ``bundle`` reads ``memory.content``. Otherwise index entries (shown by
    heading only) are gathered without their contents (`gateway.usecases.disclosure.retrieval`); redaction
    then records nothing for content that was never disclosed."""
    return "content" in bundle.memory_fields()


def request_stage(
    policy: PolicyInForce, view: Mapping[str, object], now: datetime
) -> RequestJudgement:
    """Run the request stage alone (no memories); `refused` is set when an enforced `require`
    is not met. The memory stages follow from it (`RequestJudgement.judge`)."""
    return judge_request(policy.bundle, view, now)


def refuse_unless_required_met(
    policy: PolicyInForce, view: Mapping[str, object], now: datetime
) -> RequestJudgement:
    """The request stage alone: an enforced `require` that is not met raises
    `PolicyRefusedError` (403) and records nothing. Disclosures go through
    `gateway.usecases.disclosure.pipeline.Discloser.admit`, which receipts the refusal first."""
    judging = request_stage(policy, view, now)
    if judging.refused is not None:
        raise PolicyRefusedError(judging.refused.rule_id, judging.refused.reason)
    return judging


def verdict_of(judgement: Judgement) -> Verdict:
    """The memories a judgement denies or caps, as the core applies them (their texts are asked
    for separately, for what is shown: `shown_texts`)."""
    denied: dict[MemoryId, Exclusion] = {}
    capped: dict[MemoryId, Exclusion] = {}
    verdicts = judgement.verdicts
    for memory_id, outcome, rule_id in zip(
        judgement.ids, verdicts.outcome, verdicts.rule_id, strict=True
    ):
        if outcome == "deny":
            denied[MemoryId(memory_id)] = Exclusion(
                MemoryId(memory_id), "policy_denied", rule_id or "default_decision"
            )
        elif outcome == "cap":
            capped[MemoryId(memory_id)] = Exclusion(
                MemoryId(memory_id), "policy_capped", rule_id or "default_decision"
            )
    return Verdict(denied=denied, capped=capped)


def shown_texts(
    judgement: Judgement, headings: Sequence[MemoryId], full: Sequence[MemoryId]
) -> dict[MemoryId, tuple[str, str]]:
    """The redacted texts of the memories about to be shown (`headings` as index lines, `full`
    in full), for those whose texts redaction rewrote. Records nothing (`shown_evaluation`
    records what was finally shown)."""
    position = {memory_id: m for m, memory_id in enumerate(judgement.ids)}
    texts = judgement.texts(
        headings=[position[m] for m in headings], full=[position[m] for m in full]
    )
    ids = judgement.ids
    return {MemoryId(ids[m]): shown for m, shown in texts.items()}


def shown_evaluation(
    judgement: Judgement, headings: Sequence[str], full: Sequence[str]
) -> Evaluation:
    """The evaluation whose redaction covers what was shown: the headings of `headings`, both
    texts of `full`."""
    position = {memory_id: m for m, memory_id in enumerate(judgement.ids)}
    return judgement.evaluation(
        headings=[position[m] for m in headings], full=[position[m] for m in full]
    )


def lint_or_reject(source: str, filename: str) -> LoadedBundle:
    """Load a bundle, or raise 422 listing every lint finding as `file:line:col`."""
    try:
        return load_bundle(source, filename)
    except PolicyLintError as exc:
        raise InvalidRequestError(
            f"{filename} has {len(exc.issues)} lint error(s)",
            tuple(
                FieldError(f"{i.file}:{i.line}:{i.col}", f"{i.code} {i.message}")
                for i in exc.issues
            ),
            code="policy_invalid",
        ) from None
