"""The conversation part of a session context, as the policy shows it: the summary and the
turns judged in one judgement (fields `memory.*` of the episode each is, `turn.*` on turns,
`session.*` on everything), redacted before anything is counted, and laid out with the memory
bundle (`gateway.core.session`). Shared by building a context and replaying one, so that a
replay judges and lays out exactly as the original did.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gateway.core.model import MemoryId
from gateway.core.session import (
    Laid,
    Message,
    ShownTurn,
    lay_out_session,
    memory_message,
    summary_message,
)
from gateway.core.tokens import Tokenizer
from gateway.responses.receipt_bodies import WithheldRecord
from gateway.store import sessions as store
from gateway.store import summaries as summary_store
from gateway.store import turns as turn_store
from gateway.usecases.access.policy import shown_evaluation, verdict_of
from gateway.usecases.disclosure.pipeline import Admitted, Composed
from policies import Evaluation

__all__ = [
    "Conversation",
    "judge_conversation",
    "lay_out_conversation",
    "session_scope",
    "session_view",
    "summary_view",
    "turn_view",
]


def session_scope(session: store.SessionRow) -> dict[str, object]:
    """The `session.*` fields every item a session discloses is judged with."""
    return {
        "session_session_id": session.session_id,
        "session_namespace": session.namespace,
        "session_labels": list(session.labels),
    }


def session_view(session: store.SessionRow, tokenizer: Tokenizer) -> dict[str, object]:
    """The session itself as the policy judges it: the texts every context of it pins (its
    system prompt and task, system messages), judged as a turn is, as the system turn before
    the first (`turn.role` system, `turn.seq` 0), with `session.*`. Whom the policy denies
    it, its every field is denied."""
    content = "\n".join(text for text in (session.system_prompt, session.task) if text)
    return {
        "memory_id": session.session_id,
        "namespace": session.namespace,
        "memory_type": "episodic",
        "heading": "",
        "content": content,
        "confidence": 1.0,
        "labels": list(session.labels),
        "source_type": "session",
        "source_ref": session.session_id,
        "created_at": session.created_at,
        "expires_at": None,
        "tokens": tokenizer.count(content),
        "turn_role": "system",
        "turn_name": None,
        "turn_seq": 0,
        "turn_content": content,
        "turn_occurred_at": session.created_at,
        **session_scope(session),
    }


def turn_view(turn: turn_store.TurnRow, session: store.SessionRow) -> dict[str, object]:
    """A turn as the policy judges it: the memory fields of the episode it is (so a rule on
    `memory.namespace` or `memory.labels` holds for turns too), `turn.*` and `session.*`."""
    return {
        "memory_id": turn.turn_id,
        "namespace": session.namespace,
        "memory_type": "episodic",
        "heading": "",
        "content": turn.content,
        "confidence": 1.0,
        "labels": list(session.labels),
        "source_type": "turn",
        "source_ref": turn.turn_id,
        "created_at": turn.occurred_at,
        "expires_at": None,
        "tokens": turn.tokens,
        "turn_role": turn.role,
        "turn_name": turn.name,
        "turn_seq": turn.seq,
        "turn_content": turn.content,
        "turn_occurred_at": turn.occurred_at,
        **session_scope(session),
    }


@dataclass(frozen=True, slots=True)
class Conversation:
    """The summary and verbatim turns as the policy shows them, and its evaluation."""

    summary: Message | None
    turns: tuple[ShownTurn, ...]
    withheld: tuple[WithheldRecord, ...]  # denied or capped turns / summary, for the receipt
    evaluation: Evaluation


def judge_conversation(
    admitted: Admitted,
    session: store.SessionRow,
    summary: summary_store.SummaryRow | None,
    turns: Sequence[turn_store.TurnRow],
) -> Conversation:
    """One judgement over the summary and the turns (in that order), their texts redacted."""
    views = [summary_view(summary, session)] if summary is not None else []
    views += [turn_view(t, session) for t in turns]
    judgement = admitted.judging.judge(views)
    verdict = verdict_of(judgement)
    blocked = verdict.denied.keys() | verdict.capped.keys()
    shown = [m for m, i in enumerate(judgement.ids) if MemoryId(i) not in blocked]
    texts = judgement.texts(full=shown)
    withheld = tuple(
        WithheldRecord(id=e.memory_id, reason=e.reason, detail=e.detail)
        for e in sorted(
            (*verdict.denied.values(), *verdict.capped.values()), key=lambda e: e.memory_id
        )
    )
    offset = 1 if summary is not None else 0
    summary_message_ = None
    if summary is not None and 0 in shown:
        text = texts.get(0, ("", summary.text))[1]
        summary_message_ = summary_message(text, summary.to_seq)
    shown_turns = tuple(
        ShownTurn(t.seq, t.turn_id, t.role, t.name, texts.get(m, ("", t.content))[1])
        for m, t in ((m, turns[m - offset]) for m in shown if m >= offset)
    )
    evaluation = shown_evaluation(judgement, (), [judgement.ids[m] for m in shown])
    return Conversation(summary_message_, shown_turns, withheld, evaluation)


def summary_view(summary: summary_store.SummaryRow, session: store.SessionRow) -> dict[str, object]:
    return {
        "memory_id": summary.summary_id,
        "namespace": session.namespace,
        "memory_type": "episodic",
        "heading": "",
        "content": summary.text,
        "confidence": 1.0,
        "labels": list(session.labels),
        "source_type": "summary",
        "source_ref": summary.summary_id,
        "created_at": summary.created_at,
        "expires_at": None,
        "tokens": summary.tokens,
        **session_scope(session),
    }


def lay_out_conversation(
    fixed: Sequence[Message],
    conversation: Conversation,
    memory: Composed | None,
    budget: int,
    tokenizer: Tokenizer,
) -> Laid:
    bundle = memory.assembly.bundle if memory is not None else ""
    return lay_out_session(
        fixed,
        conversation.summary,
        memory_message(bundle) if bundle else None,
        conversation.turns,
        budget,
        tokenizer,
    )
