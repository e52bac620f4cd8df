"""The receipt of a session context and the body answered for it (ARCHITECTURE §11)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import msgspec
import rfc8785

from gateway.core.session import Laid, Message
from gateway.domain.principal import Principal
from gateway.responses.disclosures import Excluded
from gateway.responses.receipt_bodies import (
    MemoryPartRecord,
    SessionBudgetRecord,
    SessionContextBody,
    SessionRecord,
    SessionRequestRecord,
    SummaryRecord,
    TurnRecord,
)
from gateway.responses.sessions import (
    ChatMessage,
    Compaction,
    SessionContext,
    TurnSpan,
)
from gateway.store import sessions as store
from gateway.store import summaries as summary_store
from gateway.store import turns as turn_store
from gateway.store.database import Connection
from gateway.usecases.access.need_to_know import Account, account_for
from gateway.usecases.disclosure.pipeline import Admitted, Composed, Discloser
from gateway.usecases.disclosure.records import bundle_members, excluded, memory_part
from gateway.usecases.receiptlog.kinds import SESSION_CONTEXT
from gateway.usecases.receiptlog.recorder import rfc3339
from gateway.usecases.sessions.conversation import Conversation, Pinned
from gateway.usecases.sessions.sessions import summary_ref

__all__ = ["Built", "record_session_context"]


@dataclass(frozen=True, slots=True)
class Built:
    """A session context made, with everything its receipt records."""

    session: store.SessionRow
    request: SessionRequestRecord
    at: datetime
    admitted: Admitted
    pinned: Pinned  # the system prompt and task as shown
    summary: summary_store.SummaryRow | None
    tail: Sequence[turn_store.TurnRow]  # every unsummarized turn judged, shown or not
    conversation: Conversation
    memory: Composed | None
    laid: Laid
    budget: int
    layout: str  # the version of the session layout it was cut by
    compaction: Compaction
    wrote_summary: bool  # this step folded turns into a new summary, which its receipt names


async def record_session_context(
    discloser: Discloser,
    tokenizer_name: str,
    conn: Connection,
    principal: Principal,
    step: Built,
) -> SessionContext:
    """Receipt a session context (kind `session_context`), in the step's transaction when it
    wrote a new summary (both commit or neither), then answer it: the receipt holds what exact
    replay rebuilds from (turn ids and hashes, the summary id, the memory candidates, the
    policy, the versions) and the text's hash."""
    summary, conversation, memory, laid = step.summary, step.conversation, step.memory, step.laid
    policy = step.admitted.policy
    judged = [step.pinned.evaluation] if step.pinned.evaluation is not None else []
    judged += [conversation.evaluation] + ([memory.evaluation] if memory is not None else [])
    record = policy.record(*judged)
    shown = {t.turn_id for t in laid.turns}
    messages = [_chat_message(m) for m in laid.messages]
    disclosed = [t.turn_id for t in laid.turns]
    if summary is not None and conversation.summary is not None:
        disclosed.append(summary.summary_id)
    shown_part = memory.assembly if memory is not None and laid.memory_shown else None
    if shown_part is not None:
        disclosed += [i.memory_id for i in shown_part.included] + list(shown_part.index.entries)
    memory_record = None
    if memory is not None:
        # Its policy decisions are the top-level `policy` member's, beside the turns': one
        # record of every decision the step made, not a second copy of the memories' outcomes.
        members = bundle_members(memory.request, None, memory.found, memory.assembly)
        memory_record = MemoryPartRecord(**msgspec.structs.asdict(members), shown=laid.memory_shown)
    receipt_id = await discloser.recorder.record(
        conn,
        principal,
        kind=SESSION_CONTEXT,
        issued_at=step.at,
        purpose=step.request.purpose,
        delivered=laid.text.encode("utf-8"),
        members=SessionContextBody(
            request=step.request,
            at=rfc3339(step.at),
            session=_session_record(step.session),
            policy=record,
            assembler=discloser.makers.record(session_layout=step.layout),
            summary=None if summary is None else _summary_record(summary, conversation),
            turns=[
                TurnRecord(
                    turn_id=t.turn_id,
                    seq=t.seq,
                    content_sha256=t.content_sha256,
                    shown=t.turn_id in shown,
                )
                for t in step.tail
            ],
            withheld=[*step.pinned.withheld, *conversation.withheld],
            dropped=sorted(t.turn_id for t in laid.dropped),
            memory=memory_record,
            compaction=step.compaction,
            budget=SessionBudgetRecord(budget_tokens=step.budget, tokens_used=laid.tokens),
            messages_sha256=hashlib.sha256(
                rfc8785.dumps(msgspec.to_builtins(messages))
            ).hexdigest(),
        ),
        disclosed_ids=disclosed,
        policy_digest=policy.digest,
        with_writes=step.wrote_summary,
    )
    # Need to know, as for /v1/context: to an agent, no decision about a turn or memory it did
    # not receive, no memory exclusion by the policy. The receipt keeps them all.
    told = account_for(
        principal,
        policy,
        record,
        [] if shown_part is None else [excluded(e) for e in shown_part.excluded],
        Account(disclosed, unseen=frozenset() if memory is None else memory.unseen),
    )
    shown_turns = laid.turns
    return SessionContext(
        messages=messages,
        text=laid.text,
        text_sha256=hashlib.sha256(laid.text.encode("utf-8")).hexdigest(),
        tokens_used=laid.tokens,
        budget_tokens=step.budget,
        tokenizer=tokenizer_name,
        prefix_messages=laid.prefix_messages,
        summary=None if summary is None or conversation.summary is None else summary_ref(summary),
        turns=TurnSpan(
            first_seq=shown_turns[0].seq if shown_turns else None,
            last_seq=shown_turns[-1].seq if shown_turns else None,
        ),
        excluded_turns=[
            Excluded(t.turn_id, "over_budget", "the exact count left no room") for t in laid.dropped
        ],
        memory=None if shown_part is None else memory_part(shown_part, told),
        compaction=step.compaction,
        policy=told.policy,
        receipt_id=receipt_id,
    )


def _chat_message(message: Message) -> ChatMessage:
    return ChatMessage(role=message.role, content=message.content, name=message.name)


def _session_record(session: store.SessionRow) -> SessionRecord:
    def digest(text: str | None) -> str | None:
        return None if text is None else hashlib.sha256(text.encode("utf-8")).hexdigest()

    return SessionRecord(
        session_id=session.session_id,
        namespace=session.namespace,
        labels=sorted(session.labels),
        task_sha256=digest(session.task),
        system_prompt_sha256=digest(session.system_prompt),
    )


def _summary_record(summary: summary_store.SummaryRow, conversation: Conversation) -> SummaryRecord:
    return SummaryRecord(
        summary_id=summary.summary_id,
        to_seq=summary.to_seq,
        covered_sha256=summary.covered_sha256,
        summarizer=f"{summary.summarizer}/{summary.summarizer_version}",
        shown=conversation.summary is not None,
    )
