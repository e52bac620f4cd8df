"""Refusals: the receipt a request leaves when policy refuses it, and the replay of that receipt.

An enforced `require` rule that is not met refuses the whole request (403 `policy_refused`)
before anything is read. A refusal is a policy decision, so it leaves the same evidence as a
disclosure: a receipt of kind `refusal`, written by the same `Recorder` (same log, seq/prev
chain, signatures, Merkle leaf) inside the request's transaction, which `gateway.usecases.access.work.unit_of_work` commits
although the request fails. Besides the header every receipt has (schema, receipt_id, kind,
tenant_id, log, issued_at, subject from the API key, parent_receipt_id), its body holds::

    disclosure  the endpoint that was refused: context | search | timeline | fetch
    request     the complete request, recorded as that endpoint's own receipts record it
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
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, NoReturn

from gateway.domain.errors import FieldError, InvalidRequestError, PolicyRefusedError
from gateway.domain.principal import Principal
from gateway.store import receipts as receipt_store
from gateway.store.database import Connection
from gateway.usecases.access.policy import PolicyInForce, request_stage, request_view
from gateway.usecases.receiptlog.recorder import Recorder, rfc3339
from policies import RequestJudgement
from receipts import REFUSAL_KIND, decode_body

__all__ = [
    "REFUSAL_KIND",
    "REFUSAL_REPLAY_KIND",
    "Disclosure",
    "RecordedRefusal",
    "read_refusal",
    "receipt_refusal",
    "replay_refusal",
]

_log = logging.getLogger(__name__)

REFUSAL_REPLAY_KIND = "refusal_replay"
Disclosure = Literal["context", "search", "timeline", "fetch", "session_context", "history"]


async def receipt_refusal(
    conn: Connection,
    recorder: Recorder,
    principal: Principal,
    policy: PolicyInForce,
    judging: RequestJudgement,
    *,
    disclosure: Disclosure,
    request: Mapping[str, Any],
    at: datetime,
    issued_at: datetime,
) -> NoReturn:
    """Receipt the refusal `judging` decided, then raise `PolicyRefusedError` naming the
    receipt."""
    refusal = judging.refused
    assert refusal is not None, "only a refused request is receipted as a refusal"
    receipt_id: str | None
    try:
        receipt_id = await recorder.record(
            conn,
            principal,
            kind=REFUSAL_KIND,
            issued_at=issued_at,
            purpose=request["purpose"],
            delivered=None,
            members={
                "disclosure": disclosure,
                "request": dict(request),
                "at": rfc3339(at),
                "policy": policy.record(judging.evaluation()),
                "refused": refusal.to_json(),
            },
            disclosed_ids=[],
            policy_digest=policy.digest,
        )
    except Exception:  # noqa: BLE001  a refusal stands whatever failed; logged in full below
        # Whatever failed while writing the evidence, the decision stands: still a refusal.
        _log.exception(
            "the refusal of a %s request by rule %s could not be receipted",
            disclosure,
            refusal.rule_id,
        )
        receipt_id = None
    raise PolicyRefusedError(refusal.rule_id, refusal.reason, receipt_id=receipt_id)


@dataclass(frozen=True, slots=True)
class RecordedRefusal:
    """A refusal receipt, decoded into what the request stage needs to judge it again."""

    receipt_id: str
    body: dict[str, Any]
    subject: Principal
    at: datetime

    @property
    def view(self) -> dict[str, object]:
        """The policy's view of the request, built as the refused endpoint built it (search
        and context carry namespaces, context a budget; timeline and fetch neither)."""
        request = self.body["request"]
        return request_view(
            self.subject,
            purpose=request["purpose"],
            namespaces=request.get("namespaces") or (),
            budget_tokens=request.get("budget_tokens"),
        )


def read_refusal(row: receipt_store.ReceiptRow, mode: str) -> RecordedRefusal:
    """A refusal to replay in `mode`, or a 422 saying why it cannot be."""
    body = decode_body(bytes(row.body))
    if body["kind"] == REFUSAL_REPLAY_KIND:
        raise InvalidRequestError(
            f"receipt {row.receipt_id} is a replay of refusal {row.parent_receipt_id}; "
            "replay that refusal instead",
            code="replay_unsupported",
        )
    if mode == "current":
        raise InvalidRequestError(
            f"receipt {row.receipt_id} is a refusal: mode current re-runs retrieval against "
            "today's memories, but a refusal was decided before any memory was read and "
            "recorded none; replay it with exact (the recorded policy) or what_if (a candidate)",
            (FieldError("mode", "a refusal is replayed with exact or what_if"),),
            code="replay_unsupported",
        )
    subject = body["subject"]
    principal = Principal(
        tenant_id=body["tenant_id"],
        key_id=subject["key_id"],
        role=subject["role"],
        agent_id=subject["agent_id"],
        namespaces=tuple(body["request"].get("namespaces") or ()),
        purposes=None,
    )
    return RecordedRefusal(row.receipt_id, body, principal, datetime.fromisoformat(body["at"]))


def _problem(code: str, detail: str) -> dict[str, Any]:
    return {"code": code, "memory_id": None, "detail": detail}


async def replay_refusal(
    conn: Connection,
    recorder: Recorder,
    principal: Principal,
    recorded: RecordedRefusal,
    mode: str,
    policy: PolicyInForce,
    now: datetime,
) -> dict[str, Any]:
    """Judge the recorded request under `policy` at the recorded instant; the payload, which
    names the `refusal_replay` receipt written for it."""
    body = recorded.body
    evaluation = request_stage(policy, recorded.view, recorded.at).evaluation()
    original = body["refused"]
    refused = None if evaluation.refused is None else evaluation.refused.to_json()
    outcome = "proceed" if refused is None else "refuse"
    problems: list[dict[str, Any]] = []
    if refused is None:
        problems.append(
            _problem(
                "no_candidates_recorded",
                "the request would proceed under this policy, but a refusal records no "
                "candidates: the bundle it would get cannot be reproduced; ask again",
            )
        )
        bundle_detail = problems[0]["detail"]
    else:
        bundle_detail = (
            "the request is refused before retrieval: no bundle was delivered, so there is "
            "none to reproduce"
        )
    before = {d["rule_id"]: d["outcome"] for d in body["policy"]["decisions"]}
    after = {d.rule_id: d.outcome for d in evaluation.decisions}
    changes = [
        {"rule_id": rule, "before": before.get(rule), "after": after.get(rule)}
        for rule in sorted(set(before) | set(after))
        if before.get(rule) != after.get(rule)
    ]
    policy_record = policy.record(evaluation)
    receipt_id = await recorder.record(
        conn,
        principal,
        kind=REFUSAL_REPLAY_KIND,
        issued_at=now,
        purpose=body["request"]["purpose"],
        delivered=None,
        members={
            "disclosure": body["disclosure"],
            "request": body["request"],
            "at": body["at"],
            "policy": policy_record,
            "replay": {
                "mode": mode,
                "of_kind": REFUSAL_KIND,
                "original_refused": original,
                "outcome": outcome,
                "refused": refused,
                "problems": problems,
            },
        },
        disclosed_ids=[],
        policy_digest=policy.digest,
        parent_receipt_id=recorded.receipt_id,
    )
    payload = {
        "mode": mode,
        "identical": refused is not None and refused["rule_id"] == original["rule_id"],
        "replay_of_replay": False,
        "problems": problems,
        "original": {
            "receipt_id": recorded.receipt_id,
            "kind": REFUSAL_KIND,
            "disclosure": body["disclosure"],
            "policy_digest": body["policy"]["digest"],
            "outcome": "refuse",
            "refused": original,
        },
        "replayed": {
            "receipt_id": receipt_id,
            "policy_digest": policy.digest,
            "outcome": outcome,
            "refused": refused,
            "policy": policy_record,
        },
        "bundle": {"delivered": False, "reproducible": False, "detail": bundle_detail},
        "diff": {"outcome": {"before": "refuse", "after": outcome}, "decision_changes": changes},
        "receipt_id": receipt_id,
    }
    return payload
