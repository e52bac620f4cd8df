"""Replay of a session context (ARCHITECTURE §11): its text rebuilt from what its receipt
recorded — the turn ids (checked against their hashes), the summary id (loaded, never
recomputed), the memory candidates, the instant, the assembler and layout versions — under the
recorded policy (`exact`) or a candidate (`what_if`). Later appends and compactions change
nothing: the recorded turns and summary are immutable rows.
"""

from __future__ import annotations

import hashlib
from datetime import datetime

from gateway.core.tokens import load_tokenizer
from gateway.core.versions import SESSION_LAYOUTS, UnknownVersionError
from gateway.domain.errors import InvalidRequestError, NotFoundError
from gateway.domain.principal import Principal
from gateway.responses.disclosures import ReplayProblem
from gateway.responses.receipt_bodies import SessionContextBody, SessionReplayBody
from gateway.responses.receipt_parts import ReplayRecord
from gateway.responses.sessions import SessionContextReplay
from gateway.store import sessions as store
from gateway.store import summaries as summary_store
from gateway.store import turns as turn_store
from gateway.store.database import Connection
from gateway.usecases.access.policy import PolicyInForce, reads_content, request_stage, request_view
from gateway.usecases.audit.recorded import found_of_record, makers_of_record
from gateway.usecases.disclosure import retrieval
from gateway.usecases.disclosure.pipeline import Admitted, Discloser, compose
from gateway.usecases.disclosure.records import request_of
from gateway.usecases.receiptlog.kinds import SESSION_CONTEXT, SESSION_REPLAY
from gateway.usecases.receiptlog.reading import Receipt, judged_principal
from gateway.usecases.sessions.conversation import (
    judge_conversation,
    lay_out_conversation,
    session_scope,
    shown_pinned,
)

__all__ = ["replay_session_context"]


async def replay_session_context(
    discloser: Discloser,
    conn: Connection,
    principal: Principal,
    recorded: Receipt[SessionContextBody],
    policy: PolicyInForce,
    mode: str,
    now: datetime,
) -> SessionContextReplay:
    """Rebuild a session_context receipt's text from what it recorded, under `policy` (the
    recorded one for `exact`, a candidate for `what_if`); writes a `session_replay`
    receipt naming it as parent."""
    header, body = recorded.header, recorded.body
    receipt_id, tenant_id, request = header.receipt_id, header.tenant_id, body.request
    # Replay reads nothing of a layout but its name: every layout this gateway knows lays out
    # by the same rules from what its receipt recorded (the layouts differ in the shares,
    # recorded as the memory request, the stored summary and the turns; gateway.core.versions).
    try:
        laid_out = SESSION_LAYOUTS.resolve(str(body.assembler.session_layout))
    except UnknownVersionError as exc:
        raise InvalidRequestError(
            f"receipt {receipt_id} was laid out by {exc.kind} {exc.version}, which this gateway "
            "does not build: its context cannot be laid out again",
            code="assembler_unknown",
        ) from None
    session = await store.find_session(conn, tenant_id, request.session_id)
    if session is None:  # pragma: no cover - sessions are never deleted
        raise NotFoundError(f"session {request.session_id} not found")
    problems: list[ReplayProblem] = []
    summary = None
    if body.summary is not None:
        summary = await summary_store.find_summary(
            conn, tenant_id, session.session_id, body.summary.summary_id
        )
        if summary is None:
            problems.append(ReplayProblem("version_missing", None, "the summary is not stored"))
    rows = {
        r.turn_id: r
        for r in await turn_store.turns_by_id(
            conn, tenant_id, session.session_id, [t.turn_id for t in body.turns]
        )
    }
    tail = []
    for t in body.turns:
        row = rows.get(t.turn_id)
        if row is None:
            problems.append(ReplayProblem("version_missing", t.turn_id, "no such turn"))
        elif row.content_sha256 != t.content_sha256:
            problems.append(ReplayProblem("content_mismatch", t.turn_id, "the turn differs"))
        else:
            tail.append(row)
    at = datetime.fromisoformat(body.at.replace("Z", "+00:00"))
    subject = judged_principal(header, header.subject, request.namespaces)
    view = request_view(
        subject,
        purpose=request.purpose,
        namespaces=tuple(request.namespaces),
        budget_tokens=request.budget_tokens,
    )
    admitted = Admitted(policy, request_stage(policy, view, at), session_scope(session))
    conversation = judge_conversation(admitted, session, summary, tail)
    memory = None
    if body.memory is not None:
        makers = makers_of_record(receipt_id, body.assembler)
        found, missing = await found_of_record(conn, tenant_id, body.memory)
        problems.extend(missing)
        if not reads_content(policy.bundle):
            found = retrieval.without_index_content(found)
        memory = compose(request_of(body.memory.request), found, admitted, makers, at=at)
    pinned = shown_pinned(admitted, session, laid_out, load_tokenizer(body.assembler.tokenizer))
    laid = lay_out_conversation(
        pinned.messages,
        conversation,
        memory,
        request.budget_tokens,
        load_tokenizer(body.assembler.tokenizer),
    )
    original = header.bundle.sha256
    replayed = hashlib.sha256(laid.text.encode("utf-8")).hexdigest()
    replay_id = await discloser.recorder.record(
        conn,
        principal,
        kind=SESSION_REPLAY,
        issued_at=now,
        purpose=request.purpose,
        delivered=laid.text.encode("utf-8"),
        members=SessionReplayBody(
            request=request,
            at=body.at,
            policy=policy.record(
                *([pinned.evaluation] if pinned.evaluation is not None else []),
                conversation.evaluation,
                *([memory.evaluation] if memory is not None else []),
            ),
            replay=ReplayRecord(
                mode=mode,
                of_kind=SESSION_CONTEXT.name,
                original_bundle_sha256=original,
                problems=problems,
            ),
        ),
        disclosed_ids=[t.turn_id for t in laid.turns],
        policy_digest=policy.digest,
        parent_receipt_id=receipt_id,
    )
    return SessionContextReplay(
        mode=mode,
        identical=replayed == original,
        original_sha256=original,
        replayed_sha256=replayed,
        problems=problems,
        text=laid.text,
        receipt_id=replay_id,
    )
