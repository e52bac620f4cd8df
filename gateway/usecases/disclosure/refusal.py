"""Refusals: the receipt a request leaves when policy refuses it, and the replay of that receipt.

An enforced `require` rule that is not met refuses the whole request (403 `policy_refused`)
before anything is read. A refusal is a policy decision, so it leaves the same evidence as a
disclosure: a receipt of kind `refusal`, written by the same `Recorder` (same log, seq/prev
chain, signatures, Merkle leaf). The log's group commit appends it on its own connection and
answers once it is durable, so it stands although the request's own transaction rolls back.
Besides the header every receipt has (schema, receipt_id, kind, tenant_id, log, issued_at,
subject from the API key, parent_receipt_id), its body (`RefusalBody`) holds::

    disclosure  the kind of disclosure refused (a kind the request stage judges: context,
                search, timeline, fetch, session_context, history)
    request     the complete request, recorded as that kind's own receipts record it
    at          the instant the policy judged (an auditor's `as_of` for a historical context)
    policy      {digest, mode, decisions, outcomes: [], refused}: the request-stage decisions,
                each with its evidence
    refused     {rule_id, reason}
    bundle      the empty delivery {sha256 of "", bytes: 0}; no candidates, included or index

`receipts.body` checks the last two, so an offline verifier rejects a refusal that claims to
have delivered bytes. If the receipt cannot be written (or does not commit) the request is
refused all the same: 403 with `receipt_id` null and the failure logged. The decision does not
depend on its evidence, and nothing is disclosed either way.

Replay of a refusal judges the recorded request stage again (the recorded subject, request and
instant; no memories are read):

- `exact`: under the recorded policy (digest and recorded mode). `identical` when the same rule
  refuses. The original delivered nothing, so there is no bundle to reproduce (`bundle`).
- `what_if`: under a candidate policy (digest or inline YAML). `replayed.outcome` says whether
  the request would now proceed; if it would, its bundle cannot be reproduced, because a
  refusal records no candidates (problem `no_candidates_recorded`).
- `current`: 422 `replay_unsupported`. It re-runs retrieval against today's memories under the
  original policy; a refusal was decided before retrieval and recorded nothing to retrieve for,
  so exact and what_if say all a replay can.

Each replay writes its own receipt of kind `refusal_replay` (`parent_receipt_id` the refusal),
which delivers nothing either. A `refusal_replay` is not replayed again (422: replay its parent);
it names the auditor as subject, not the refused agent the policy judged.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NoReturn

import msgspec

from gateway.domain.errors import FieldError, InvalidRequestError, PolicyRefusedError
from gateway.domain.principal import Principal
from gateway.responses.disclosures import (
    DiffChange,
    PolicyReport,
    RefusalBundle,
    RefusalDiff,
    RefusalOutcome,
    RefusalRecord,
    RefusalReplay,
    ReplayedRefusal,
    ReplayProblem,
)
from gateway.responses.receipt_bodies import RefusalBody, RefusalReplayBody, RefusalReplayRecord
from gateway.store import receipts as receipt_store
from gateway.store.database import Connection
from gateway.usecases.access.policy import PolicyInForce, request_stage, request_view
from gateway.usecases.receiptlog.kinds import REFUSAL, REFUSAL_REPLAY, Kind
from gateway.usecases.receiptlog.reading import judged_principal, read_receipt
from gateway.usecases.receiptlog.recorder import Recorder, rfc3339
from policies import RequestJudgement

__all__ = [
    "RecordedRefusal",
    "read_refusal",
    "receipt_refusal",
    "replay_refusal",
]

_log = logging.getLogger(__name__)


async def receipt_refusal(
    conn: Connection,
    recorder: Recorder,
    principal: Principal,
    policy: PolicyInForce,
    judging: RequestJudgement,
    *,
    disclosure: Kind[Any],
    request: msgspec.Struct,
    purpose: str | None,
    at: datetime,
    issued_at: datetime,
) -> NoReturn:
    """Receipt the refusal `judging` decided, then raise `PolicyRefusedError` naming the
    receipt. `request` is recorded as the refused disclosure's own receipts record it."""
    refusal = judging.refused
    assert refusal is not None, "only a refused request is receipted as a refusal"
    receipt_id: str | None
    try:
        receipt_id = await recorder.record(
            conn,
            principal,
            kind=REFUSAL,
            issued_at=issued_at,
            purpose=purpose,
            delivered=None,
            members=RefusalBody(
                disclosure=disclosure.name,
                request=msgspec.to_builtins(request),
                at=rfc3339(at),
                policy=policy.record(judging.evaluation()),
                refused=RefusalRecord(refusal.reason, refusal.rule_id),
            ),
            disclosed_ids=[],
            policy_digest=policy.digest,
        )
    except Exception:  # noqa: BLE001  a refusal stands whatever failed; logged in full below
        # Whatever failed while writing the evidence, the decision stands: still a refusal.
        _log.exception(
            "the refusal of a %s request by rule %s could not be receipted",
            disclosure.name,
            refusal.rule_id,
        )
        receipt_id = None
    raise PolicyRefusedError(refusal.rule_id, refusal.reason, receipt_id=receipt_id)


@dataclass(frozen=True, slots=True)
class RecordedRefusal:
    """A refusal receipt, decoded into what the request stage needs to judge it again."""

    receipt_id: str
    body: RefusalBody
    subject: Principal
    at: datetime

    @property
    def view(self) -> dict[str, object]:
        """The policy's view of the request, built as the refused endpoint built it (search
        and context carry namespaces, context a budget; timeline and fetch neither)."""
        request = self.body.request
        return request_view(
            self.subject,
            purpose=request["purpose"],
            namespaces=request.get("namespaces") or (),
            budget_tokens=request.get("budget_tokens"),
        )


def read_refusal(row: receipt_store.ReceiptRow, mode: str) -> RecordedRefusal:
    """A refusal to replay in `mode`, or a 422 saying why it cannot be."""
    if mode == "current":
        raise InvalidRequestError(
            f"receipt {row.receipt_id} is a refusal: mode current re-runs retrieval against "
            "today's memories, but a refusal was decided before any memory was read and "
            "recorded none; replay it with exact (the recorded policy) or what_if (a candidate)",
            (FieldError("mode", "a refusal is replayed with exact or what_if"),),
            code="replay_unsupported",
        )
    read = read_receipt(bytes(row.body), REFUSAL)
    body = read.body
    namespaces = body.request.get("namespaces") or ()
    principal = judged_principal(read.header, read.header.subject, namespaces)
    return RecordedRefusal(row.receipt_id, body, principal, datetime.fromisoformat(body.at))


async def replay_refusal(
    conn: Connection,
    recorder: Recorder,
    principal: Principal,
    recorded: RecordedRefusal,
    mode: str,
    policy: PolicyInForce,
    now: datetime,
) -> RefusalReplay:
    """Judge the recorded request under `policy` at the recorded instant; the answer names the
    `refusal_replay` receipt written for it."""
    body = recorded.body
    evaluation = request_stage(policy, recorded.view, recorded.at).evaluation()
    original = body.refused
    refused = (
        None
        if evaluation.refused is None
        else RefusalRecord(evaluation.refused.reason, evaluation.refused.rule_id)
    )
    outcome = "proceed" if refused is None else "refuse"
    problems: list[ReplayProblem] = []
    if refused is None:
        bundle_detail = (
            "the request would proceed under this policy, but a refusal records no "
            "candidates: the bundle it would get cannot be reproduced; ask again"
        )
        problems.append(ReplayProblem("no_candidates_recorded", None, bundle_detail))
    else:
        bundle_detail = (
            "the request is refused before retrieval: no bundle was delivered, so there is "
            "none to reproduce"
        )
    before = {d.rule_id: d.outcome for d in body.policy.decisions}
    after = {d.rule_id: d.outcome for d in evaluation.decisions}
    changes = [
        DiffChange(rule_id=rule, before=before.get(rule), after=after.get(rule))
        for rule in sorted(set(before) | set(after))
        if before.get(rule) != after.get(rule)
    ]
    policy_record = policy.record(evaluation)
    receipt_id = await recorder.record(
        conn,
        principal,
        kind=REFUSAL_REPLAY,
        issued_at=now,
        purpose=body.request["purpose"],
        delivered=None,
        members=RefusalReplayBody(
            disclosure=body.disclosure,
            request=body.request,
            at=body.at,
            policy=policy_record,
            replay=RefusalReplayRecord(
                mode=mode,
                of_kind=REFUSAL.name,
                original_refused=original,
                outcome=outcome,
                refused=refused,
                problems=problems,
            ),
        ),
        disclosed_ids=[],
        policy_digest=policy.digest,
        parent_receipt_id=recorded.receipt_id,
    )
    return RefusalReplay(
        mode=mode,
        identical=refused is not None and refused.rule_id == original.rule_id,
        replay_of_replay=False,
        problems=problems,
        original=ReplayedRefusal(
            receipt_id=recorded.receipt_id,
            kind=REFUSAL.name,
            disclosure=body.disclosure,
            policy_digest=body.policy.digest,
            outcome="refuse",
            refused=original,
        ),
        replayed=ReplayedRefusal(
            receipt_id=receipt_id,
            policy_digest=policy.digest,
            outcome=outcome,
            refused=refused,
            policy=PolicyReport(**msgspec.structs.asdict(policy_record)),
        ),
        bundle=RefusalBundle(delivered=False, reproducible=False, detail=bundle_detail),
        diff=RefusalDiff(
            outcome=RefusalOutcome(before="refuse", after=outcome), decision_changes=changes
        ),
        receipt_id=receipt_id,
    )
