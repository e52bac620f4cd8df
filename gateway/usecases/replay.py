"""Replay a receipted bundle (ARCHITECTURE §9).

- `exact`: the recorded request, candidates (their versions loaded by id and checked against the
  recorded sha256), policy snapshot (by digest, with the recorded mode), ranking profile,
  tokenizer and instant → the same pure core → the same bytes, or a precise account of why not.
- `current`: the recorded request against today's memories, under the recorded policy.
- `what_if`: the recorded candidates under a candidate policy (a stored digest or inline YAML).

Each writes its own receipt (kind `replay`, `parent_receipt_id`) with every member a context
receipt has, so a replay can itself be replayed.

A refusal (a request an enforced `require` refused, kind `refusal`) has no bundle to rebuild: its
replay judges the recorded request stage again, in `gateway.usecases.refusal`, which says what
each mode does for it (exact and what_if; current is a 422).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from gateway.core.assembly import ASSEMBLER_VERSION, ASSEMBLER_VERSIONS
from gateway.core.model import Candidate, ContextRequest, MemoryId
from gateway.core.outcome import Assembly
from gateway.core.ranking import RankingProfile
from gateway.errors import FieldError, InvalidRequestError
from gateway.memory import MemoryVersion
from gateway.principal import Principal
from gateway.store import memories as memory_store
from gateway.store import receipts as receipt_store
from gateway.store.database import Connection
from gateway.usecases import context as retrieval
from gateway.usecases.audit import find_visible
from gateway.usecases.disclosure import Discloser, assemble_under, context_view
from gateway.usecases.policy import PolicyInForce, lint_or_reject, request_stage
from gateway.usecases.refusal import REFUSAL_KIND, REFUSAL_REPLAY_KIND, read_refusal, replay_refusal
from policies import Evaluation
from receipts import decode_body

__all__ = ["Problem", "ReplayMode", "Replayed", "Replayer", "diff", "what_if_window"]

ReplayMode = Literal["exact", "current", "what_if"]
REPLAYABLE = ("context", "replay")


@dataclass(frozen=True, slots=True)
class Problem:
    """Why a replay may not reproduce the original: a stable code, the memory if any, detail."""

    code: str
    detail: str
    memory_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"code": self.code, "memory_id": self.memory_id, "detail": self.detail}


@dataclass(frozen=True, slots=True)
class Recorded:
    """A context or replay receipt, decoded into what the core needs."""

    receipt_id: str
    kind: str
    body: dict[str, Any]
    request: ContextRequest
    at: datetime
    subject: Principal

    @property
    def included(self) -> list[str]:
        return [item["memory_id"] for item in self.body["included"]]


@dataclass(frozen=True, slots=True)
class Replayed:
    payload: dict[str, Any]
    receipt_id: str | None


def _parse_time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def read_recorded(row: receipt_store.ReceiptRow) -> Recorded:
    body = decode_body(bytes(row.body))
    if body["kind"] not in REPLAYABLE:
        raise InvalidRequestError(
            f"only context bundles can be replayed; receipt {row.receipt_id} is a {body['kind']}",
            code="replay_unsupported",
        )
    r = body["request"]
    request = ContextRequest(
        task=r["task"],
        namespaces=tuple(r["namespaces"]),
        budget_tokens=r["budget_tokens"],
        top_k=r["top_k"],
        memory_types=tuple(r["memory_types"]) if r["memory_types"] else None,
        purpose=r["purpose"],
        include_index=r["include_index"],
        index_budget_tokens=r["index_budget_tokens"],
        fill=r["fill"],
    )
    # A replay's policy judged the original agent, not the auditor its `subject` names.
    subject = _principal(body, body.get("judged") or body["subject"], request.namespaces)
    return Recorded(row.receipt_id, body["kind"], body, request, _parse_time(body["at"]), subject)


def _principal(
    body: dict[str, Any], subject: dict[str, Any], namespaces: tuple[str, ...]
) -> Principal:
    return Principal(
        tenant_id=body["tenant_id"],
        key_id=subject["key_id"],
        role=subject["role"],
        agent_id=subject["agent_id"],
        namespaces=namespaces,
        purposes=None,
    )


async def with_judged_subject(conn: Connection, recorded: Recorded) -> Recorded:
    """`recorded`, its subject being whom its policy judged. Replay receipts written before they
    recorded `judged` name only the auditor who replayed: the judged agent is then the subject of
    the first receipt up the parent chain that is not such a replay."""
    body = recorded.body
    seen = {recorded.receipt_id}
    while body["kind"] == "replay" and "judged" not in body:
        parent_id = body.get("parent_receipt_id")
        row = None
        if parent_id is not None and parent_id not in seen:
            seen.add(parent_id)
            row = await receipt_store.find_receipt(conn, body["tenant_id"], parent_id)
        if row is None:
            return recorded  # no parent to ask: the receipt's own subject is all there is
        body = decode_body(bytes(row.body))
    if body is recorded.body:
        return recorded
    subject = _principal(body, body.get("judged") or body["subject"], recorded.request.namespaces)
    return dataclasses.replace(recorded, subject=subject)


def assembler_version(recorded: Recorded) -> str:
    """The assembler version that wrote the receipt when this gateway still builds it (so exact
    replay can match), else the current one."""
    version = recorded.body["assembler"]["version"]
    return version if version in ASSEMBLER_VERSIONS else ASSEMBLER_VERSION


def _float(text: str | None) -> float | None:
    return None if text is None else float(text)


def _candidate(version: MemoryVersion, signals: dict[str, Any] | None) -> Candidate:
    signals = signals or {}
    return Candidate(
        memory_id=MemoryId(version.memory_id),
        namespace=version.namespace,
        memory_type=version.memory_type,
        heading=version.heading,
        content=version.content,
        confidence=version.confidence,
        labels=tuple(version.labels),
        source_type=version.source_type,
        source_ref=version.source_ref,
        created_at=version.created_at,
        expires_at=version.expires_at,
        deleted_at=version.deleted_at,
        superseded_by=MemoryId(version.superseded_by) if version.superseded_by else None,
        content_sha256=version.content_sha256,
        tokens=version.tokens,
        heading_tokens=version.heading_tokens,
        vector_rank=signals.get("vector_rank"),
        vector_distance=_float(signals.get("vector_distance")),
        lexical_rank=signals.get("lexical_rank"),
        lexical_score=_float(signals.get("lexical_score")),
    )


async def recorded_inputs(
    conn: Connection, recorded: Recorded
) -> tuple[retrieval.ContextInputs, list[Problem]]:
    """The recorded candidates and index entries, as the versioned store holds them today."""
    body = recorded.body
    signals = {c["memory_id"]: c for c in body["candidates"]}
    expected = {c["memory_id"]: c["content_sha256"] for c in body["candidates"]}
    index_ids: list[str] = body["index_input"]["ids"]
    wanted = sorted(set(signals) | set(index_ids))
    versions = {
        v.memory_id: v for v in await memory_store.fetch_versions(conn, body["tenant_id"], wanted)
    }
    problems: list[Problem] = []
    for memory_id in wanted:
        version = versions.get(memory_id)
        if version is None:
            problems.append(Problem("version_missing", "no such version in the store", memory_id))
        elif version.erased_at is not None:
            problems.append(
                Problem("memory_erased", f"erased at {version.erased_at.isoformat()}", memory_id)
            )
        elif memory_id in expected and version.content_sha256 != expected[memory_id]:
            problems.append(
                Problem("content_mismatch", "stored content differs from the receipt", memory_id)
            )
    candidates = [_candidate(versions[c], signals[c]) for c in sorted(signals) if c in versions]
    index = [_candidate(versions[i], None) for i in index_ids if i in versions]
    return retrieval.ContextInputs(candidates, index, body["index_input"]["total_live"]), problems


def diff(original: Recorded, replayed: Assembly, evaluation: Evaluation) -> dict[str, Any]:
    before = original.included
    after = [item.memory_id for item in replayed.included]
    common = [m for m in before if m in after]
    reordered = common != [m for m in after if m in before]
    old_outcomes = {o["memory_id"]: o["outcome"] for o in original.body["policy"]["outcomes"]}
    new_outcomes = {o.memory_id: o.outcome for o in evaluation.outcomes}
    changes = [
        {"memory_id": m, "before": old_outcomes.get(m), "after": new_outcomes.get(m)}
        for m in sorted(set(old_outcomes) | set(new_outcomes))
        if old_outcomes.get(m) != new_outcomes.get(m)
    ]
    old_reasons = {e["memory_id"]: e["reason"] for e in original.body["excluded"]}
    new_reasons = {e.memory_id: e.reason for e in replayed.excluded}
    return {
        "added": [m for m in after if m not in before],
        "removed": [m for m in before if m not in after],
        "reordered": reordered,
        "decision_changes": changes,
        "exclusion_changes": [
            {"memory_id": m, "before": old_reasons.get(m), "after": new_reasons.get(m)}
            for m in sorted(set(old_reasons) | set(new_reasons))
            if old_reasons.get(m) != new_reasons.get(m)
        ],
        "token_delta": replayed.tokens_used - original.body["budget"]["tokens_used"],
    }


@dataclass(frozen=True, slots=True)
class Replayer:
    discloser: Discloser

    async def candidate_policy(
        self,
        conn: Connection,
        tenant_id: str,
        digest: str | None,
        source: str | None,
    ) -> PolicyInForce:
        registry = self.discloser.policies
        if (digest is None) == (source is None):
            raise InvalidRequestError(
                "what_if needs exactly one of policy_digest and policy_yaml",
                (FieldError("policy_digest", "give this or policy_yaml, not both"),),
            )
        if digest is not None:
            bundle = await registry.bundle(conn, tenant_id, digest)
            return PolicyInForce(digest, bundle.mode, bundle, activated=False)
        assert source is not None
        loaded = lint_or_reject(source, "policy_yaml")
        return PolicyInForce(loaded.digest, loaded.bundle.mode, loaded.bundle, activated=False)

    async def recorded_policy(self, conn: Connection, body: dict[str, Any]) -> PolicyInForce:
        """The policy a receipt records: its bundle by digest, with the recorded mode."""
        record = body["policy"]
        bundle = await self.discloser.policies.bundle(conn, body["tenant_id"], record["digest"])
        mode: Literal["enforce", "log_only"] = (
            "log_only" if record["mode"] == "log_only" else "enforce"
        )
        return PolicyInForce(
            record["digest"], mode, dataclasses.replace(bundle, mode=mode), activated=True
        )

    async def replay(
        self,
        conn: Connection,
        principal: Principal,
        receipt_id: str,
        mode: ReplayMode,
        now: datetime,
        *,
        policy_digest: str | None = None,
        policy_yaml: str | None = None,
    ) -> Replayed:
        principal.require_role("auditor", "admin")
        row = await find_visible(conn, principal, receipt_id)
        if row.kind in (REFUSAL_KIND, REFUSAL_REPLAY_KIND):
            refusal = read_refusal(row, mode)  # 422 for current, and for a refusal's replay
            if mode == "what_if":
                policy = await self.candidate_policy(
                    conn, principal.tenant_id, policy_digest, policy_yaml
                )
            else:
                policy = await self.recorded_policy(conn, refusal.body)
            payload, replay_id = await replay_refusal(
                conn, self.discloser.recorder, principal, refusal, mode, policy, now
            )
            return Replayed(payload, replay_id)
        recorded = await with_judged_subject(conn, read_recorded(row))
        problems: list[Problem] = []
        assembler = recorded.body["assembler"]
        version = assembler_version(recorded)
        if version != assembler["version"]:
            problems.append(
                Problem(
                    "assembler_version",
                    f"recorded {assembler['version']}, which this gateway cannot build; "
                    f"assembled with {version}",
                )
            )
        profile_record = {k: v for k, v in assembler["ranking_profile"].items() if k != "digest"}
        profile = RankingProfile.from_canonical(profile_record)
        if mode == "what_if":
            policy = await self.candidate_policy(
                conn, principal.tenant_id, policy_digest, policy_yaml
            )
        else:
            policy = await self.recorded_policy(conn, recorded.body)
        if mode == "current":
            at = now
            if assembler["embedder"]["model"] != self.discloser.embedder.model:
                problems.append(
                    Problem(
                        "embedder_changed",
                        f"recorded {assembler['embedder']['model']}, now "
                        f"{self.discloser.embedder.model}: today's recall differs",
                    )
                )
            inputs = await retrieval.gather_context(
                conn,
                self.discloser.embedder,
                recorded.subject,
                recorded.request,
                at,
                version=version,
            )
        else:
            at = recorded.at
            inputs, missing = await recorded_inputs(conn, recorded)
            problems.extend(missing)
        original_sha = recorded.body["bundle"]["sha256"]
        disclosed, assembly, evaluation = await self.discloser.assemble_and_record(
            conn,
            principal,
            recorded.request,
            inputs,
            policy,
            at=at,
            issued_at=now,
            kind="replay",
            profile=profile,
            tokenizer_name=assembler["tokenizer"],
            version=version,
            policy_subject=recorded.subject,
            parent_receipt_id=recorded.receipt_id,
            extra={
                "replay": {
                    "mode": mode,
                    "of_kind": recorded.kind,
                    # Whether it matched is derivable from two signed members: this one and
                    # `bundle.sha256`; the receipt does not assert it separately.
                    "original_bundle_sha256": original_sha,
                    "problems": [p.to_json() for p in problems],
                }
            },
        )
        identical = assembly.bundle_sha256 == original_sha
        payload = {
            "mode": mode,
            "identical": identical,
            "replay_of_replay": recorded.kind == "replay",
            "problems": [p.to_json() for p in problems],
            "original": {
                "receipt_id": recorded.receipt_id,
                "bundle_sha256": original_sha,
                "tokens_used": recorded.body["budget"]["tokens_used"],
                "policy_digest": recorded.body["policy"]["digest"],
                "included": recorded.included,
            },
            "replayed": {
                "receipt_id": disclosed.receipt_id,
                "bundle_sha256": assembly.bundle_sha256,
                "tokens_used": assembly.tokens_used,
                "policy_digest": policy.digest,
                "included": [i.memory_id for i in assembly.included],
                "bundle": assembly.bundle,
            },
            "diff": diff(recorded, assembly, evaluation),
            "receipt_id": disclosed.receipt_id,
        }
        return Replayed(payload, disclosed.receipt_id)


async def what_if_window(
    conn: Connection,
    replayer: Replayer,
    principal: Principal,
    rows: Sequence[receipt_store.ReceiptRow],
    policy: PolicyInForce,
) -> dict[str, Any]:
    """A candidate policy against past receipts: for bundles (their recorded candidates), what
    would change, including requests it would refuse; for refusals, which it would let through."""
    principal.require_role("admin", "auditor")
    changed = refused = lifted = refusals = 0
    rule_hits: dict[str, int] = {}
    newly_excluded: dict[str, int] = {}
    newly_admitted: dict[str, int] = {}
    per_receipt: list[dict[str, Any]] = []
    evaluated = 0
    for row in rows:
        if row.kind == REFUSAL_KIND:
            # A refused request, judged again: would the candidate let it through?
            refusal = read_refusal(row, "what_if")
            judged = request_stage(policy, refusal.view, refusal.at)
            refusals += 1
            lifted += judged.refused is None
            _count_hits(judged, rule_hits)
            if len(per_receipt) < 200:
                per_receipt.append(
                    {
                        "receipt_id": refusal.receipt_id,
                        "kind": REFUSAL_KIND,
                        "refused_by": None if judged.refused is None else judged.refused.rule_id,
                    }
                )
            continue
        if row.kind not in REPLAYABLE:
            continue
        recorded = await with_judged_subject(conn, read_recorded(row))
        inputs, problems = await recorded_inputs(conn, recorded)
        profile_record = {
            k: v for k, v in recorded.body["assembler"]["ranking_profile"].items() if k != "digest"
        }
        assembly, evaluation = assemble_under(
            recorded.request,
            inputs,
            policy,
            context_view(recorded.subject, recorded.request),
            at=recorded.at,
            profile=RankingProfile.from_canonical(profile_record),
            tokenizer_name=recorded.body["assembler"]["tokenizer"],
            version=assembler_version(recorded),
        )
        evaluated += 1
        refused += evaluation.refused is not None
        _count_hits(evaluation, rule_hits)
        found = diff(recorded, assembly, evaluation)
        is_changed = assembly.bundle_sha256 != recorded.body["bundle"]["sha256"]
        changed += is_changed
        for memory_id in found["removed"]:
            newly_excluded[memory_id] = newly_excluded.get(memory_id, 0) + 1
        for memory_id in found["added"]:
            newly_admitted[memory_id] = newly_admitted.get(memory_id, 0) + 1
        if len(per_receipt) < 200:
            per_receipt.append(
                {
                    "receipt_id": recorded.receipt_id,
                    "kind": recorded.kind,
                    "refused_by": None
                    if evaluation.refused is None
                    else evaluation.refused.rule_id,
                    "changed": bool(is_changed),
                    "added": found["added"],
                    "removed": found["removed"],
                    "problems": [p.to_json() for p in problems],
                }
            )
    return {
        "policy_digest": policy.digest,
        "receipts_evaluated": evaluated,
        "bundles_changed": changed,
        # Requests the candidate would refuse outright (an enforced `require` not met), and
        # past refusals it would let through.
        "requests_refused": refused,
        "refusals_evaluated": refusals,
        "refusals_lifted": lifted,
        "rule_hits": dict(sorted(rule_hits.items())),
        "newly_excluded": dict(sorted(newly_excluded.items())),
        "newly_admitted": dict(sorted(newly_admitted.items())),
        "receipts": per_receipt,
    }


def _count_hits(evaluation: Evaluation, hits: dict[str, int]) -> None:
    """Count the rules that would change something: any verdict but admit, every redaction and
    every require (met or not, it was judged)."""
    for decision in evaluation.decisions:
        if decision.outcome_if_enforced != "admit" or decision.effect in ("redact", "require"):
            hits[decision.rule_id] = hits.get(decision.rule_id, 0) + 1
