"""A session context (ARCHITECTURE §11): a disclosure like any other, through the one pipeline.

    admit (the request stage, once) -> the unsummarized turns judged -> compaction (fold the
    oldest into a new summary, same transaction) -> the summary and the verbatim tail judged and
    redacted -> the memory bundle (`compose`, within its share, judged by the same request
    judgement) -> lay out (exact count within the budget) -> one receipt (`session_context`)

Folding reads the turns as the policy shows them (denied turns are left out, redactions kept),
so no byte a policy withholds reaches a summary. A summary is stored and never recomputed: exact
replay (`replay`) loads the recorded summary and turns by id, judges them again under the
recorded policy, rebuilds the memory part from the recorded candidates, and compares the hash.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

import msgspec
import rfc8785

from gateway.clock import Clock, IdFactory
from gateway.core.model import ContextRequest
from gateway.core.outcome import Assembly
from gateway.core.session import (
    SEPARATOR,
    Laid,
    Message,
    ShownTurn,
    fixed_messages,
    message_cost,
    plan_fold,
    shares,
    summary_message,
    turn_message,
)
from gateway.core.summary import EXTRACTIVE, Folded, summarize
from gateway.core.tokens import Tokenizer
from gateway.principal import Principal
from gateway.responses.sessions import SessionContext
from gateway.store import sessions as store
from gateway.store.database import Connection, Pool
from gateway.usecases import context as retrieval
from gateway.usecases.conversation import (
    LAYOUT,
    Conversation,
    judge_conversation,
    lay_out_conversation,
    session_scope,
)
from gateway.usecases.disclosure import Admitted, Composed, Discloser, compose
from gateway.usecases.policy import (
    reads_content,
    request_view,
)
from gateway.usecases.receipting import rfc3339
from gateway.usecases.records import (
    assembly_members,
    candidate_record,
    context_payload,
    context_request,
)
from gateway.usecases.session_replay import SESSION_CONTEXT_KIND
from gateway.usecases.sessions import (
    check_budget,
    fixed_tokens,
    memory_share,
    open_session,
    summary_ref,
)
from gateway.usecases.work import unit_of_work

__all__ = [
    "ContextStep",
    "ExtractiveSummarizer",
    "SessionContexts",
    "Summarizer",
]

MEMORY_TOP_K = 6


class Summarizer(Protocol):
    """Folds turns into a summary within `share` tokens (ARCHITECTURE §11)."""

    @property
    def name(self) -> str: ...

    @property
    def version(self) -> str: ...

    async def fold(self, previous: str | None, turns: Sequence[Folded], share: int) -> str: ...


@dataclass(frozen=True, slots=True)
class ExtractiveSummarizer:
    """The default: `gateway.core.summary`, deterministic and model-free."""

    tokenizer: Tokenizer
    name: str = EXTRACTIVE[0]
    version: str = EXTRACTIVE[1]

    async def fold(self, previous: str | None, turns: Sequence[Folded], share: int) -> str:
        return summarize(previous, turns, share, self.tokenizer)


@dataclass(frozen=True, slots=True)
class ContextStep:
    """POST /v1/sessions/{id}/context as validated."""

    budget_tokens: int | None = None
    query: str | None = None
    purpose: str | None = None


def _covered_sha256(hashes: Sequence[str]) -> str:
    """sha256 over the covered turns' content hashes, in order (hex, one per line)."""
    return hashlib.sha256("".join(f"{h}\n" for h in hashes).encode("ascii")).hexdigest()


def _memory_request(
    session: store.SessionRow, step: ContextStep, share: int, turns: Sequence[ShownTurn]
) -> ContextRequest:
    """The memory bundle's request: the step's query, by default the pinned task and the last
    user turn (as shown)."""
    query = step.query
    if query is None:
        last_user = next((t.text for t in reversed(turns) if t.role == "user"), None)
        query = session.task if last_user is None else f"{session.task}\n{last_user}"
    return ContextRequest(
        task=query,
        namespaces=(session.namespace,),
        budget_tokens=share,
        top_k=MEMORY_TOP_K,
        purpose=step.purpose,
    )


@dataclass(frozen=True, slots=True)
class SessionContexts:
    pool: Pool
    discloser: Discloser
    summarizer: Summarizer
    tokenizer: Tokenizer
    clock: Clock
    new_id: IdFactory

    async def context(
        self, authorization: str | None, session_id: str, step: ContextStep
    ) -> SessionContext:
        """POST /v1/sessions/{id}/context in its own unit of work: the summary it folds and
        its receipt commit together, before the context is answered."""
        now = self.clock()
        async with unit_of_work(self.pool, authorization) as (conn, principal):
            return await self.build(conn, principal, session_id, step, now)

    async def build(
        self,
        conn: Connection,
        principal: Principal,
        session_id: str,
        step: ContextStep,
        now: datetime,
    ) -> SessionContext:
        principal.require_role("agent", "admin")
        # Locked: a compaction of this session and appends to it wait for this step's commit.
        session = await open_session(conn, principal, session_id, lock=True)
        budget = step.budget_tokens or session.budget_tokens
        check_budget(self.tokenizer, session, budget)
        fixed = fixed_messages(session.system_prompt, session.task)
        cut = shares(
            budget,
            fixed_tokens(self.tokenizer, session.system_prompt, session.task),
            memory_share(session, budget),
        )
        assert cut is not None  # check_budget guarantees the room
        request = {
            "session_id": session.session_id,
            "namespaces": [session.namespace],
            "budget_tokens": budget,
            "query": step.query,
            "purpose": step.purpose,
        }
        view = request_view(
            principal,
            purpose=step.purpose,
            namespaces=(session.namespace,),
            budget_tokens=budget,
        )
        admitted = await self.discloser.admit(
            conn,
            principal,
            view,
            disclosure="session_context",
            request=request,
            at=now,
            issued_at=now,
        )
        admitted = Admitted(admitted.policy, admitted.judging, session_scope(session))
        tenant_id = principal.tenant_id
        previous = await store.latest_summary(conn, tenant_id, session_id)
        after = 0 if previous is None else previous.to_seq
        pending = await store.turns_after(conn, tenant_id, session_id, after)

        # Compaction: the unsummarized turns as the policy shows them, folded oldest first.
        before = judge_conversation(admitted, session, previous, pending)
        costs = [message_cost(turn_message(t), self.tokenizer) for t in before.turns]
        tokens_before = sum(costs) + (previous.tokens if previous is not None else 0)
        fold = plan_fold(costs, cut.turns, session.keep_last)
        summary_share = self._summary_share(cut.summary)
        summary, folded = previous, None
        if fold:
            to_seq = before.turns[fold - 1].seq
            folding = [Folded(t.seq, t.role, t.text) for t in before.turns[:fold]]
            summary = await self._fold(
                conn, principal, session, previous, folding, to_seq, summary_share, now
            )
            folded = [after + 1, to_seq]
        elif previous is not None and previous.tokens > summary_share:
            # A smaller budget than the summary was made for: a summary of the summary.
            summary = await self._fold(
                conn, principal, session, previous, [], previous.to_seq, summary_share, now
            )
        covered = 0 if summary is None else summary.to_seq
        tail = [t for t in pending if t.seq > covered]
        conversation = judge_conversation(admitted, session, summary, tail)

        memory: Composed | None = None
        if cut.memory > 0:
            memory_request = _memory_request(
                session, step, cut.memory - self._message_overhead(), conversation.turns
            )
            if memory_request.budget_tokens >= 1:
                found = await retrieval.find(
                    conn,
                    self.discloser.embedder,
                    principal,
                    memory_request,
                    now,
                    index_content=reads_content(admitted.policy.bundle),
                )
                memory = compose(memory_request, found, admitted, self.discloser.makers, at=now)
        laid = lay_out_conversation(fixed, conversation, memory, budget, self.tokenizer)
        tokens_after = sum(
            message_cost(turn_message(t), self.tokenizer) for t in conversation.turns
        ) + (summary.tokens if summary is not None else 0)
        compaction = {
            "folded": folded,
            "tokens_before": tokens_before,
            "tokens_after": tokens_after,
        }
        return await self._record(
            conn,
            principal,
            session=session,
            request=request,
            at=now,
            admitted=admitted,
            summary=summary,
            tail=tail,
            conversation=conversation,
            memory=memory,
            laid=laid,
            budget=budget,
            compaction=compaction,
        )

    def _message_overhead(self) -> int:
        """What wrapping a text as a system message adds: its role label and separator."""
        return self.tokenizer.count("system: ") + self.tokenizer.count(SEPARATOR)

    def _summary_share(self, share: int) -> int:
        header = summary_message("", 10**9).content
        return max(0, share - self.tokenizer.count(header) - self._message_overhead())

    async def _fold(
        self,
        conn: Connection,
        principal: Principal,
        session: store.SessionRow,
        previous: store.SummaryRow | None,
        turns: Sequence[Folded],
        to_seq: int,
        share: int,
        now: datetime,
    ) -> store.SummaryRow:
        """A new summary covering [1, to_seq], stored in the step's transaction."""
        text = await self.summarizer.fold(None if previous is None else previous.text, turns, share)
        if self.tokenizer.count(text) > share:
            # A model may overshoot: keep its best whole sentences that fit, never a cut one.
            text = summarize(None, [Folded(to_seq, "summary", text)], share, self.tokenizer)
        hashes = await store.content_hashes(conn, principal.tenant_id, session.session_id, to_seq)
        row = store.SummaryRow(
            summary_id=self.new_id(now),
            to_seq=to_seq,
            covered_sha256=_covered_sha256(hashes),
            text=text,
            tokens=self.tokenizer.count(text),
            summarizer=self.summarizer.name,
            summarizer_version=self.summarizer.version,
            previous_summary_id=None if previous is None else previous.summary_id,
            created_at=now,
        )
        await store.insert_summary(conn, principal.tenant_id, session.session_id, row)
        return row

    async def _record(
        self,
        conn: Connection,
        principal: Principal,
        *,
        session: store.SessionRow,
        request: dict[str, Any],
        at: datetime,
        admitted: Admitted,
        summary: store.SummaryRow | None,
        tail: Sequence[store.TurnRow],
        conversation: Conversation,
        memory: Composed | None,
        laid: Laid,
        budget: int,
        compaction: dict[str, Any],
    ) -> SessionContext:
        policy = admitted.policy
        policy_record = policy.record(conversation.evaluation)
        dropped = {t.turn_id for t in laid.dropped}
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
                "policy": policy.record(memory.evaluation),
                "shown": laid.memory_shown,
                **assembly_members(memory.assembly),
            }
        receipt_id = await self.discloser.recorder.record(
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
                "assembler": {**self.discloser.makers.record(), "session_layout": LAYOUT},
                "summary": None if summary is None else _summary_record(summary, conversation),
                "turns": [
                    {
                        "turn_id": t.turn_id,
                        "seq": t.seq,
                        "content_sha256": t.content_sha256,
                        "shown": t.turn_id in {s.turn_id for s in laid.turns},
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
        )
        memory_part = None
        if memory is not None and laid.memory_shown:
            memory_part = _memory_payload(memory.assembly)
        shown_turns = laid.turns
        return msgspec.convert(
            {
                "messages": messages,
                "text": laid.text,
                "text_sha256": hashlib.sha256(laid.text.encode("utf-8")).hexdigest(),
                "tokens_used": laid.tokens,
                "budget_tokens": budget,
                "tokenizer": self.tokenizer.name,
                "prefix_messages": laid.prefix_messages,
                "summary": None
                if summary is None or conversation.summary is None
                else msgspec.structs.asdict(summary_ref(summary)),
                "turns": {
                    "first_seq": shown_turns[0].seq if shown_turns else None,
                    "last_seq": shown_turns[-1].seq if shown_turns else None,
                },
                "excluded_turns": excluded_turns,
                "memory": memory_part,
                "compaction": compaction,
                "policy": policy_record,
                "receipt_id": receipt_id,
            },
            SessionContext,
        )


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


def _summary_record(summary: store.SummaryRow, conversation: Conversation) -> dict[str, Any]:
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
