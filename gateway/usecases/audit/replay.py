"""Replay a receipted bundle (ARCHITECTURE §9).

- `exact`: the recorded request, candidates (their versions loaded by id and checked against the
  recorded sha256), policy snapshot (by digest, with the recorded mode), ranking profile,
  tokenizer and instant → the same pure core → the same bytes, or a precise account of why not.
- `current`: the recorded request against today's memories, under the recorded policy.
- `what_if`: the recorded candidates under a candidate policy (a stored digest or inline YAML).

Each writes its own receipt (kind `replay`, `parent_receipt_id`) with every member a context
receipt has, so a replay can itself be replayed.

A refusal (a request an enforced `require` refused, kind `refusal`) has no bundle to rebuild: its
replay judges the recorded request stage again, in `gateway.usecases.disclosure.refusal`, which says what
each mode does for it (exact and what_if; current is a 422). Reading what a receipt recorded is
`gateway.usecases.audit.recorded`; the what-if window over many receipts is `gateway.usecases.audit.what_if`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from gateway.domain.errors import FieldError, InvalidRequestError
from gateway.domain.principal import Principal
from gateway.responses.disclosures import (
    ContextReplay,
    RefusalReplay,
    ReplayedBundle,
    ReplayProblem,
)
from gateway.responses.receipt_parts import PolicyRecord, ReplayRecord
from gateway.responses.sessions import SessionContextReplay
from gateway.store import policies as policy_store
from gateway.store.database import Connection
from gateway.store.receipts import ReceiptRow
from gateway.usecases.access.policy import (
    PolicyInForce,
    context_view,
    lint_or_reject,
    reads_content,
    request_stage,
)
from gateway.usecases.audit.recorded import (
    diff,
    found_of_record,
    makers_of_record,
    ranking_input_drift,
    read_recorded,
)
from gateway.usecases.audit.verification import find_visible
from gateway.usecases.disclosure import retrieval
from gateway.usecases.disclosure.pipeline import Admitted, Discloser, compose
from gateway.usecases.disclosure.refusal import read_refusal, replay_refusal
from gateway.usecases.receiptlog.kinds import REPLAY, SESSION_CONTEXT, kind_named
from gateway.usecases.receiptlog.reading import read_receipt
from gateway.usecases.sessions.replay import replay_session_context

__all__ = ["ReplayMode", "Replayer"]

ReplayMode = Literal["exact", "current", "what_if"]


@dataclass(frozen=True, slots=True)
class _Asked:
    """One replay as asked: the auditor's transaction and key, the receipt, the mode and, for
    what_if, the candidate policy."""

    conn: Connection
    principal: Principal
    row: ReceiptRow
    mode: ReplayMode
    now: datetime
    policy_digest: str | None
    policy_yaml: str | None


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

    async def recorded_policy(
        self, conn: Connection, tenant_id: str, record: PolicyRecord
    ) -> PolicyInForce:
        """The policy a receipt records: its bundle by digest, with the recorded mode."""
        bundle = await self.discloser.policies.bundle(conn, tenant_id, record.digest)
        mode: Literal["enforce", "log_only"] = (
            "log_only" if record.mode == "log_only" else "enforce"
        )
        return PolicyInForce(
            record.digest, mode, dataclasses.replace(bundle, mode=mode), activated=True
        )

    async def policy_for(self, asked: _Asked, recorded: PolicyRecord) -> PolicyInForce:
        """The policy a replay judges by: the candidate for what_if, else the recorded one. An
        inline candidate is stored (content-addressed, as an upload would be) in the replay's
        transaction: the replay's receipt names its digest, and a replay of that receipt must
        find it."""
        conn, tenant_id = asked.conn, asked.principal.tenant_id
        if asked.mode != "what_if":
            return await self.recorded_policy(conn, asked.row.tenant_id, recorded)
        policy = await self.candidate_policy(
            conn, tenant_id, asked.policy_digest, asked.policy_yaml
        )
        if asked.policy_yaml is not None:
            loaded = lint_or_reject(asked.policy_yaml, "policy_yaml")
            await policy_store.insert_bundle(
                conn,
                tenant_id,
                digest=loaded.digest,
                canonical=loaded.canonical,
                source=loaded.source,
                name=loaded.bundle.name,
                revision=loaded.bundle.revision or None,
                uploaded_by=asked.principal.key_id,
            )
        return policy

    async def _session_replay(self, asked: _Asked) -> SessionContextReplay:
        """A session context rebuilt from its recorded turns, summary and memory candidates:
        exact (the recorded policy) or what_if (a candidate); current has no meaning for a
        history that has moved on (the step would compact differently), so it is a 422."""
        conn, principal, row, mode, now = (
            asked.conn,
            asked.principal,
            asked.row,
            asked.mode,
            asked.now,
        )
        if mode == "current":
            raise InvalidRequestError(
                f"receipt {row.receipt_id} is a session context; replay it with exact or what_if",
                (FieldError("mode", "a session context is replayed with exact or what_if"),),
                code="replay_unsupported",
            )
        recorded = read_receipt(bytes(row.body), SESSION_CONTEXT)
        policy = await self.policy_for(asked, recorded.body.policy)
        return await replay_session_context(
            self.discloser, conn, principal, recorded, policy, mode, now
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
    ) -> ContextReplay | RefusalReplay | SessionContextReplay:
        principal.require_role("auditor", "admin")
        row = await find_visible(conn, principal, receipt_id)
        kind = kind_named(row.kind)
        asked = _Asked(conn, principal, row, mode, now, policy_digest, policy_yaml)
        if kind.replay_as == "session":
            return await self._session_replay(asked)
        if kind.replay_as == "refusal":
            return await self._refusal_replay(asked)
        if kind.replay_as == "bundle":
            return await self._bundle_replay(asked)
        parent = (
            f"; replay receipt {row.parent_receipt_id} instead" if row.parent_receipt_id else ""
        )
        raise InvalidRequestError(
            f"receipt {row.receipt_id} is a {kind.label}, which is not replayed{parent}",
            (FieldError("receipt_id", f"a {kind.label} is not replayed"),),
            code="replay_unsupported",
        )

    async def _refusal_replay(self, asked: _Asked) -> RefusalReplay:
        conn, principal, row, mode, now = (
            asked.conn,
            asked.principal,
            asked.row,
            asked.mode,
            asked.now,
        )
        refusal = read_refusal(row, mode)  # 422 for current
        policy = await self.policy_for(asked, refusal.body.policy)
        return await replay_refusal(
            conn, self.discloser.recorder, principal, refusal, mode, policy, now
        )

    async def _bundle_replay(self, asked: _Asked) -> ContextReplay:
        conn, principal, row, mode, now = (
            asked.conn,
            asked.principal,
            asked.row,
            asked.mode,
            asked.now,
        )
        recorded = read_recorded(row)
        # 422 when its assembler is not built here.
        makers = makers_of_record(recorded.receipt_id, recorded.body.assembler)
        problems: list[ReplayProblem] = []
        policy = await self.policy_for(asked, recorded.body.policy)
        if mode == "current":
            at = now
            embedder = self.discloser.embedder
            if makers.embedder_model != embedder.model:
                problems.append(
                    ReplayProblem(
                        "embedder_changed",
                        None,
                        f"recorded {makers.embedder_model}, now {embedder.model}: "
                        "today's recall differs",
                    )
                )
            makers = dataclasses.replace(
                makers, embedder_model=embedder.model, embedder_dim=embedder.dim
            )
            found = await retrieval.find(
                conn,
                embedder,
                recorded.subject,
                recorded.request,
                at,
                policy=policy.bundle,
            )
        else:
            at = recorded.at
            found, missing = await found_of_record(conn, row.tenant_id, recorded.body)
            problems.extend(missing)
            if not reads_content(policy.bundle):
                found = retrieval.without_index_content(found)  # as gathered at the time
        original_sha = recorded.header.bundle.sha256
        view = context_view(recorded.subject, recorded.request)
        admitted = Admitted(policy, request_stage(policy, view, at))
        composed = compose(recorded.request, found, admitted, makers, at=at)
        if mode != "current":
            drift = ranking_input_drift(recorded, found, makers.assembler, composed.assembly)
            problems.extend(drift)
        disclosed = await self.discloser.record(
            conn,
            principal,
            composed,
            issued_at=now,
            kind=REPLAY,
            judged=recorded.subject,
            parent_receipt_id=recorded.receipt_id,
            # Whether it matched is derivable from two signed members: this one's original
            # hash and `bundle.sha256`; the receipt does not assert it separately.
            replay=ReplayRecord(
                mode=mode,
                of_kind=recorded.kind,
                original_bundle_sha256=original_sha,
                problems=problems,
            ),
        )
        assembly = composed.assembly
        return ContextReplay(
            mode=mode,
            identical=assembly.bundle_sha256 == original_sha,
            replay_of_replay=recorded.kind == REPLAY.name,
            problems=problems,
            original=ReplayedBundle(
                receipt_id=recorded.receipt_id,
                bundle_sha256=original_sha,
                tokens_used=recorded.body.budget.tokens_used,
                policy_digest=recorded.body.policy.digest,
                included=recorded.included,
            ),
            replayed=ReplayedBundle(
                receipt_id=disclosed.receipt_id,
                bundle_sha256=assembly.bundle_sha256,
                tokens_used=assembly.tokens_used,
                policy_digest=policy.digest,
                included=[i.memory_id for i in assembly.included],
                bundle=assembly.bundle,
            ),
            diff=diff(recorded, assembly, composed.evaluation),
            receipt_id=disclosed.receipt_id,
        )
