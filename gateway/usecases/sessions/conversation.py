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
    fixed_messages,
    lay_out_session,
    memory_message,
    summary_message,
)
from gateway.core.tokens import Tokenizer
from gateway.core.versions import LaidOut
from gateway.responses.receipt_bodies import WithheldRecord
from gateway.store import sessions as store
from gateway.store import summaries as summary_store
from gateway.store import turns as turn_store
from gateway.usecases.access.policy import shown_evaluation, verdict_of
from gateway.usecases.disclosure.pipeline import Admitted, Composed
from policies import Evaluation, Judgement

__all__ = [
    "Conversation",
    "Pinned",
    "as_stored",
    "judge_conversation",
    "lay_out_conversation",
    "pinned_as_judged",
    "pinned_views",
    "session_scope",
    "shown_pinned",
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


def pinned_views(session: store.SessionRow, tokenizer: Tokenizer) -> list[dict[str, object]]:
    """The texts every context of the session pins, its system prompt (when it has one) then
    its task, each judged as a turn is: a system turn before the first (`turn.role` system,
    `turn.seq` 0), with `session.*`, by the ids `<session_id>/system_prompt` and
    `<session_id>/task`. Judged apart, so that a redaction maps back to the text it is in."""
    texts = (("system_prompt", session.system_prompt), ("task", session.task))
    return [
        {
            "memory_id": f"{session.session_id}/{field}",
            "namespace": session.namespace,
            "memory_type": "episodic",
            "heading": "",
            "content": text,
            "confidence": 1.0,
            "labels": list(session.labels),
            "source_type": "session",
            "source_ref": session.session_id,
            "created_at": session.created_at,
            "expires_at": None,
            "tokens": tokenizer.count(text),
            "turn_role": "system",
            "turn_name": None,
            "turn_seq": 0,
            "turn_content": text,
            "turn_occurred_at": session.created_at,
            **session_scope(session),
        }
        for field, text in texts
        if text is not None
    ]


@dataclass(frozen=True, slots=True)
class Pinned:
    """A session's system prompt and task as the policy shows them to one caller: redacted, or
    None where it withholds them (denied or capped, and then `withheld` says so)."""

    system_prompt: str | None
    task: str | None
    withheld: tuple[WithheldRecord, ...] = ()
    evaluation: Evaluation | None = None  # None: nothing was judged

    @property
    def denied(self) -> bool:
        return any(w.reason == "policy_denied" for w in self.withheld)

    @property
    def messages(self) -> list[Message]:
        return fixed_messages(self.system_prompt, self.task)


def as_stored(session: store.SessionRow) -> Pinned:
    """The pinned texts unjudged: for a caller the policy judges nothing for, and for the
    layouts made before they were judged (which replay lays out as they were)."""
    return Pinned(session.system_prompt, session.task)


def pinned_as_judged(
    judgement: Judgement | None, session: store.SessionRow, *, caps_withhold: bool = True
) -> Pinned:
    """The pinned texts as `judgement` of their `pinned_views` (by a disclosure's admission,
    or by a caller's sight outside one; None: nothing judged) shows them. A cap withholds what
    it caps from a disclosure, as it does a turn; outside one (`caps_withhold` false: reading
    the session) a cap bounds nothing and only a denial withholds."""
    if judgement is None:
        return as_stored(session)
    verdict = verdict_of(judgement)
    blocked = verdict.denied.keys() | (verdict.capped.keys() if caps_withhold else set())
    shown = [m for m, i in enumerate(judgement.ids) if MemoryId(i) not in blocked]
    texts = judgement.texts(full=shown)
    stored = {"system_prompt": session.system_prompt, "task": session.task}
    by_field: dict[str, str | None] = {}
    for m in shown:
        field = judgement.ids[m].rpartition("/")[2]
        by_field[field] = texts[m][1] if m in texts else stored[field]
    withheld = tuple(
        WithheldRecord(id=e.memory_id, reason=e.reason, detail=e.detail)
        for e in sorted(
            (
                e
                for e in (*verdict.denied.values(), *verdict.capped.values())
                if e.memory_id in blocked
            ),
            key=lambda e: e.memory_id,
        )
    )
    evaluation = shown_evaluation(judgement, (), [judgement.ids[m] for m in shown])
    return Pinned(by_field.get("system_prompt"), by_field.get("task"), withheld, evaluation)


def shown_pinned(
    admitted: Admitted, session: store.SessionRow, laid_out: LaidOut, tokenizer: Tokenizer
) -> Pinned:
    """The pinned texts a context laid out by `laid_out` shows: as the disclosure's admission
    judges them, or as stored by the layouts made before they were judged."""
    if not laid_out.judges_pinned:
        return as_stored(session)
    return pinned_as_judged(admitted.judging.judge(pinned_views(session, tokenizer)), session)


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
