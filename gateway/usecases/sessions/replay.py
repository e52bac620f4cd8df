"""Replay of a session context (ARCHITECTURE §11): its text rebuilt from what its receipt
recorded — the turn ids (checked against their hashes), the summary id (loaded, never
recomputed), the memory candidates, the instant, the assembler and layout versions — under the
recorded policy (`exact`) or a candidate (`what_if`). Later appends and compactions change
nothing: the recorded turns and summary are immutable rows.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Any

from gateway.core.session import LAYOUTS, fixed_messages
from gateway.core.tokens import load_tokenizer
from gateway.domain.errors import InvalidRequestError, NotFoundError
from gateway.domain.principal import Principal
from gateway.responses.sessions import SessionContextReplay
from gateway.store import sessions as store
from gateway.store import summaries as summary_store
from gateway.store import turns as turn_store
from gateway.store.database import Connection
from gateway.usecases.access.policy import PolicyInForce, reads_content, request_stage, request_view
from gateway.usecases.audit.recorded import (
    Problem,
    found_of_record,
    makers_of_record,
    request_of_record,
)
from gateway.usecases.disclosure import retrieval
from gateway.usecases.disclosure.pipeline import Admitted, Discloser, compose
from gateway.usecases.sessions.conversation import (
    judge_conversation,
    lay_out_conversation,
    session_scope,
)

__all__ = ["SESSION_CONTEXT_KIND", "SESSION_REPLAY_KIND", "replay_session_context"]

SESSION_CONTEXT_KIND = "session_context"
SESSION_REPLAY_KIND = "session_replay"


async def replay_session_context(
    discloser: Discloser,
    conn: Connection,
    principal: Principal,
    receipt_id: str,
    body: dict[str, Any],
    policy: PolicyInForce,
    mode: str,
    now: datetime,
) -> SessionContextReplay:
    """Rebuild a session_context receipt's text from what it recorded, under `policy` (the
    recorded one for `exact`, a candidate for `what_if`); writes a `session_replay`
    receipt naming it as parent."""
    tenant_id = body["tenant_id"]
    request = body["request"]
    layout = body["assembler"].get("session_layout")
    # Every layout version lays out by the same rules from what its receipt recorded (the
    # versions differ in the shares, recorded as the memory request and the stored summary).
    if layout not in LAYOUTS:
        raise InvalidRequestError(
            f"receipt {receipt_id} was laid out by {layout}, which this gateway does not build",
            code="assembler_unknown",
        )
    session = await store.find_session(conn, tenant_id, request["session_id"])
    if session is None:  # pragma: no cover - sessions are never deleted
        raise NotFoundError(f"session {request['session_id']} not found")
    problems: list[Problem] = []
    summary = None
    if body["summary"] is not None:
        summary = await summary_store.find_summary(
            conn, tenant_id, session.session_id, body["summary"]["summary_id"]
        )
        if summary is None:
            problems.append(Problem("version_missing", "the summary is not stored"))
    recorded_turns = body["turns"]
    rows = {
        r.turn_id: r
        for r in await turn_store.turns_by_id(
            conn, tenant_id, session.session_id, [t["turn_id"] for t in recorded_turns]
        )
    }
    tail = []
    for t in recorded_turns:
        row = rows.get(t["turn_id"])
        if row is None:
            problems.append(Problem("version_missing", "no such turn", t["turn_id"]))
        elif row.content_sha256 != t["content_sha256"]:
            problems.append(Problem("content_mismatch", "the turn differs", t["turn_id"]))
        else:
            tail.append(row)
    at = datetime.fromisoformat(body["at"].replace("Z", "+00:00"))
    subject = Principal(
        tenant_id=tenant_id,
        key_id=body["subject"]["key_id"],
        role=body["subject"]["role"],
        agent_id=body["subject"]["agent_id"],
        namespaces=tuple(request["namespaces"]),
        purposes=None,
    )
    view = request_view(
        subject,
        purpose=request["purpose"],
        namespaces=tuple(request["namespaces"]),
        budget_tokens=request["budget_tokens"],
    )
    admitted = Admitted(policy, request_stage(policy, view, at), session_scope(session))
    conversation = judge_conversation(admitted, session, summary, tail)
    memory = None
    if body["memory"] is not None:
        record = body["memory"]
        makers = makers_of_record(receipt_id, body["assembler"])
        found, missing = await found_of_record(conn, tenant_id, record)
        problems.extend(missing)
        if not reads_content(policy.bundle):
            found = retrieval.without_index_content(found)
        memory = compose(request_of_record(record["request"]), found, admitted, makers, at=at)
    fixed = fixed_messages(session.system_prompt, session.task)
    laid = lay_out_conversation(
        fixed,
        conversation,
        memory,
        request["budget_tokens"],
        load_tokenizer(body["assembler"]["tokenizer"]),
    )
    original = body["bundle"]["sha256"]
    replayed = hashlib.sha256(laid.text.encode("utf-8")).hexdigest()
    problem_records = [p.to_json() for p in problems]
    replay_id = await discloser.recorder.record(
        conn,
        principal,
        kind=SESSION_REPLAY_KIND,
        issued_at=now,
        purpose=request["purpose"],
        delivered=laid.text.encode("utf-8"),
        members={
            "request": request,
            "at": body["at"],
            "policy": policy.record(
                conversation.evaluation, *([memory.evaluation] if memory is not None else [])
            ),
            "replay": {
                "mode": mode,
                "of_kind": SESSION_CONTEXT_KIND,
                "original_bundle_sha256": original,
                "problems": problem_records,
            },
        },
        disclosed_ids=[t.turn_id for t in laid.turns],
        policy_digest=policy.digest,
        parent_receipt_id=receipt_id,
    )
    return SessionContextReplay(
        mode=mode,
        identical=replayed == original,
        original_sha256=original,
        replayed_sha256=replayed,
        problems=problem_records,
        text=laid.text,
        receipt_id=replay_id,
    )
