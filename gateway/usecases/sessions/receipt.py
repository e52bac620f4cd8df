"""The receipt of a session context and the body answered for it (ARCHITECTURE §11)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import msgspec
import rfc8785

from gateway.core.outcome import Assembly
from gateway.core.session import Laid, Message
from gateway.domain.principal import Principal
from gateway.responses.sessions import SessionContext
from gateway.store import sessions as store
from gateway.store import summaries as summary_store
from gateway.store import turns as turn_store
from gateway.store.database import Connection
from gateway.usecases.access.need_to_know import Account, account_for
from gateway.usecases.access.policy import PolicyInForce
from gateway.usecases.disclosure.pipeline import Admitted, Composed, Discloser
from gateway.usecases.disclosure.records import (
    assembly_members,
    candidate_record,
    conflicts_member,
    context_payload,
    context_request,
)
from gateway.usecases.receiptlog.recorder import rfc3339
from gateway.usecases.sessions.conversation import Conversation
from gateway.usecases.sessions.replay import SESSION_CONTEXT_KIND
from gateway.usecases.sessions.sessions import summary_ref

__all__ = ["Built", "record_session_context"]


@dataclass(frozen=True, slots=True)
class Built:
    """A session context made, with everything its receipt records."""

    session: store.SessionRow
    request: dict[str, Any]
    at: datetime
    admitted: Admitted
    summary: summary_store.SummaryRow | None
    tail: Sequence[turn_store.TurnRow]  # every unsummarized turn judged, shown or not
    conversation: Conversation
    memory: Composed | None
    laid: Laid
    budget: int
    layout: str  # the version of the session layout it was cut by
    compaction: dict[str, Any]
    wrote_summary: bool  # this step folded turns into a new summary, which its receipt names


async def record_session_context(
    discloser: Discloser,
    tokenizer_name: str,
    conn: Connection,
    principal: Principal,
    step: Built,
) -> SessionContext:
    """Receipt a session context (kind `session_context`), in the step's transaction when it
    wrote a new summary (both commit or neither), then
    answer it: the receipt holds what exact replay rebuilds from (turn ids and hashes, the
    summary id, the memory candidates, the policy, the versions) and the text's hash."""
    session, request, at, admitted = step.session, step.request, step.at, step.admitted
    summary, tail, conversation, memory = step.summary, step.tail, step.conversation, step.memory
    laid, budget, compaction = step.laid, step.budget, step.compaction
    policy = admitted.policy
    judged = [conversation.evaluation] + ([memory.evaluation] if memory is not None else [])
    policy_record = policy.record(*judged)
    dropped = {t.turn_id for t in laid.dropped}
    shown = {t.turn_id for t in laid.turns}
    excluded_turns = [
        {
            "memory_id": t.turn_id,
            "reason": "over_budget",
            "detail": "the exact count left no room",
        }
        for t in laid.dropped
    ]
    messages = [_message_json(m) for m in laid.messages]
    memory_member = None
    disclosed = [t.turn_id for t in laid.turns]
    if summary is not None and conversation.summary is not None:
        disclosed.append(summary.summary_id)
    if memory is not None and laid.memory_shown:
        assembly = memory.assembly
        disclosed += [i.memory_id for i in assembly.included] + list(assembly.index.entries)
    if memory is not None:
        # Its policy decisions are the top-level `policy` member's, beside the turns': one
        # record of every decision the step made, not a second copy of the memories' outcomes.
        memory_member = {
            "request": context_request(memory.request, None),
            "candidates": sorted(
                (candidate_record(c) for c in memory.found.candidates),
                key=lambda r: r["memory_id"],
            ),
            "index_input": {
                "ids": [c.memory_id for c in memory.found.index_entries],
                "total_live": memory.found.total_live,
            },
            "shown": laid.memory_shown,
            **assembly_members(memory.assembly),
            **conflicts_member(memory.found.conflicts),
        }
    receipt_id = await discloser.recorder.record(
        conn,
        principal,
        kind=SESSION_CONTEXT_KIND,
        issued_at=at,
        purpose=request["purpose"],
        delivered=laid.text.encode("utf-8"),
        members={
            "request": request,
            "at": rfc3339(at),
            "session": _session_record(session),
            "policy": policy_record,
            "assembler": {**discloser.makers.record(), "session_layout": step.layout},
            "summary": None if summary is None else _summary_record(summary, conversation),
            "turns": [
                {
                    "turn_id": t.turn_id,
                    "seq": t.seq,
                    "content_sha256": t.content_sha256,
                    "shown": t.turn_id in shown,
                }
                for t in tail
            ],
            "withheld": list(conversation.withheld),
            "dropped": sorted(dropped),
            "memory": memory_member,
            "compaction": compaction,
            "budget": {"budget_tokens": budget, "tokens_used": laid.tokens},
            "messages_sha256": hashlib.sha256(rfc8785.dumps(messages)).hexdigest(),
        },
        disclosed_ids=disclosed,
        policy_digest=policy.digest,
        with_writes=step.wrote_summary,
    )
    memory_part = None
    if memory is not None and laid.memory_shown:
        memory_part = _memory_payload(memory.assembly)
    told = _as_told(principal, policy, policy_record, memory_part, disclosed)
    shown_turns = laid.turns
    return msgspec.convert(
        {
            "messages": messages,
            "text": laid.text,
            "text_sha256": hashlib.sha256(laid.text.encode("utf-8")).hexdigest(),
            "tokens_used": laid.tokens,
            "budget_tokens": budget,
            "tokenizer": tokenizer_name,
            "prefix_messages": laid.prefix_messages,
            "summary": None
            if summary is None or conversation.summary is None
            else msgspec.structs.asdict(summary_ref(summary)),
            "turns": {
                "first_seq": shown_turns[0].seq if shown_turns else None,
                "last_seq": shown_turns[-1].seq if shown_turns else None,
            },
            "excluded_turns": excluded_turns,
            "memory": told.get("memory"),
            "compaction": compaction,
            "policy": told["policy"],
            "receipt_id": receipt_id,
        },
        SessionContext,
    )


def _as_told(
    principal: Principal,
    policy: PolicyInForce,
    policy_record: dict[str, Any],
    memory_part: dict[str, Any] | None,
    received: list[str],
) -> dict[str, Any]:
    """The response's `policy` and `memory` as `principal` may read them (need to know, as for
    /v1/context): to an agent, no decision about a turn or memory it did not receive, no
    memory exclusion by the policy. The receipt keeps them all."""
    payload: dict[str, Any] = {"excluded": memory_part["excluded"] if memory_part else []}
    if memory_part is not None:
        payload["index"] = memory_part["index"]
    told = account_for(principal, policy, policy_record, payload, Account("excluded", received))
    memory = None
    if memory_part is not None:
        memory = {**memory_part, "excluded": told["excluded"], "index": told["index"]}
    return {"policy": told["policy"], "memory": memory}


def _message_json(message: Message) -> dict[str, Any]:
    out: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.name is not None:
        out["name"] = message.name
    return out


def _session_record(session: store.SessionRow) -> dict[str, Any]:
    def digest(text: str | None) -> str | None:
        return None if text is None else hashlib.sha256(text.encode("utf-8")).hexdigest()

    return {
        "session_id": session.session_id,
        "namespace": session.namespace,
        "labels": sorted(session.labels),
        "task_sha256": digest(session.task),
        "system_prompt_sha256": digest(session.system_prompt),
    }


def _summary_record(
    summary: summary_store.SummaryRow, conversation: Conversation
) -> dict[str, Any]:
    return {
        "summary_id": summary.summary_id,
        "to_seq": summary.to_seq,
        "covered_sha256": summary.covered_sha256,
        "summarizer": f"{summary.summarizer}/{summary.summarizer_version}",
        "shown": conversation.summary is not None,
    }


def _memory_payload(assembly: Assembly) -> dict[str, Any]:
    payload = context_payload(assembly)
    return {
        "included": payload["included"],
        "excluded": payload["excluded"],
        "index": payload["index"],
        "tokens": assembly.tokens_used,
    }
