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
from typing import Any, Literal

import msgspec

from gateway.core.model import Candidate, Exclusion, MemoryId
from gateway.core.verdict import Verdict
from gateway.domain.errors import (
    FieldError,
    InvalidRequestError,
    NotFoundError,
    PayloadTooLargeError,
    PolicyRefusedError,
)
from gateway.domain.memory import MemoryVersion
from gateway.domain.principal import Principal
from gateway.responses.policies import Activated, ActivePolicy, PolicyUploaded, StoredPolicy
from gateway.store import policies as policy_store
from gateway.store.database import Connection, Pool
from gateway.usecases.access.work import unit_of_work
from gateway.usecases.receiptlog.recorder import rfc3339
from policies import (
    Bundle,
    Evaluation,
    Judgement,
    LoadedBundle,
    PolicyLintError,
    RequestJudgement,
    default_bundle,
    judge_request,
    load_bundle,
    load_canonical,
)

__all__ = [
    "DEFAULT_UPLOADER",
    "PolicyInForce",
    "PolicyRegistry",
    "activate_bundle",
    "active_bundle",
    "describe_bundle",
    "lint_or_reject",
    "may_deny",
    "memory_view",
    "reads_content",
    "refuse_unless_required_met",
    "request_stage",
    "request_view",
    "shown_evaluation",
    "shown_texts",
    "upload_bundle",
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

    def record(self, *evaluations: Evaluation) -> dict[str, Any]:
        """The `policy` member of responses and receipt bodies (JSON-safe, no floats): every
        decision of every evaluation one disclosure made, in order (a session context judges
        its turns and summary, then its memories, and records both)."""
        refused = next((e.refused for e in evaluations if e.refused is not None), None)
        return {
            "digest": self.digest,
            "mode": self.mode,
            "decisions": [d.to_json() for e in evaluations for d in e.decisions],
            "outcomes": [o.to_json() for e in evaluations for o in e.outcomes],
            "refused": refused.to_json() if refused else None,
        }


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


# A policy is configuration, not data: a generous bound that still keeps lint time small.
MAX_POLICY_BYTES = 256 * 1024


async def upload_bundle(
    pool: Pool, authorization: str | None, source: bytes, filename: str
) -> PolicyUploaded:
    """Lint and store a bundle, content-addressed; the same meaning uploaded twice is one row."""
    async with unit_of_work(pool, authorization) as (conn, principal):
        principal.require_role("admin")
        if len(source) > MAX_POLICY_BYTES:
            raise PayloadTooLargeError(
                f"a policy bundle may be at most {MAX_POLICY_BYTES} bytes; "
                f"this one is {len(source)}"
            )
        try:
            text = source.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidRequestError(
                f"the bundle is not UTF-8: {exc}", code="policy_invalid"
            ) from None
        loaded = lint_or_reject(text, filename)
        created = await policy_store.insert_bundle(
            conn,
            principal.tenant_id,
            digest=loaded.digest,
            canonical=loaded.canonical,
            source=loaded.source,
            name=loaded.bundle.name,
            revision=loaded.bundle.revision or None,
            uploaded_by=principal.key_id,
        )
    return PolicyUploaded(loaded.digest, [str(w) for w in loaded.warnings], created)


async def activate_bundle(
    pool: Pool,
    registry: PolicyRegistry,
    authorization: str | None,
    digest: str,
    mode: Mode,
    at: datetime,
) -> Activated:
    async with unit_of_work(pool, authorization) as (conn, principal):
        principal.require_role("admin")
        await registry.bundle(conn, principal.tenant_id, digest)  # 404 unless the tenant's
        if digest == registry.shipped.digest:
            await registry.store_default(conn, principal.tenant_id)
        await policy_store.insert_activation(
            conn, principal.tenant_id, digest, mode, principal.key_id, at
        )
    return Activated(digest=digest, mode=mode, activated_at=rfc3339(at))


async def describe_bundle(
    pool: Pool, registry: PolicyRegistry, authorization: str | None, digest: str
) -> StoredPolicy:
    """A bundle the tenant stored (the shipped default counts once it served the tenant)."""
    async with unit_of_work(pool, authorization) as (conn, principal):
        principal.require_role("admin", "auditor")
        return await _stored(conn, principal, registry, digest)


async def active_bundle(
    pool: Pool, registry: PolicyRegistry, authorization: str | None, at: datetime
) -> ActivePolicy:
    """The bundle in force for the tenant at `at`, with its mode."""
    async with unit_of_work(pool, authorization) as (conn, principal):
        principal.require_role("admin", "auditor")
        in_force = await registry.in_force(conn, principal.tenant_id, at)
        stored = await _stored(conn, principal, registry, in_force.digest)
    return ActivePolicy(
        **msgspec.structs.asdict(stored), mode=in_force.mode, activated=in_force.activated
    )


async def _stored(
    conn: Connection, principal: Principal, registry: PolicyRegistry, digest: str
) -> StoredPolicy:
    if digest == registry.shipped.digest:
        await registry.store_default(conn, principal.tenant_id)
    row = await policy_store.find_bundle(conn, principal.tenant_id, digest)
    if row is None:
        raise NotFoundError(f"policy bundle {digest} not found", code="policy_not_found")
    return StoredPolicy(
        digest=row.digest,
        name=row.name,
        revision=row.revision,
        source=row.source,
        uploaded_at=rfc3339(row.uploaded_at),
        uploaded_by=row.uploaded_by,
    )
