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

from gateway.core.model import Candidate, ContextRequest
from gateway.core.preparation import Found
from gateway.core.session import (
    SEPARATOR,
    Shares,
    ShownTurn,
    message_cost,
    plan_fold,
    shares,
    summary_message,
    turn_message,
)
from gateway.core.summary import Folded, summarize
from gateway.core.tokens import Tokenizer
from gateway.core.versions import LAYOUT, SessionLayout
from gateway.domain.clock import Clock, IdFactory
from gateway.domain.principal import Principal
from gateway.requests import SessionContextIn
from gateway.responses.receipt_bodies import SessionRequestRecord
from gateway.responses.sessions import Compaction, SessionContext
from gateway.store import sessions as store
from gateway.store import summaries as summary_store
from gateway.store import turns as turn_store
from gateway.store.database import Connection
from gateway.store.pool import Pool
from gateway.usecases.access.policy import (
    request_view,
)
from gateway.usecases.access.work import unit_of_work
from gateway.usecases.disclosure import retrieval
from gateway.usecases.disclosure.pipeline import Admitted, Composed, Discloser, compose
from gateway.usecases.receiptlog.kinds import SESSION_CONTEXT
from gateway.usecases.sessions.budget import check_budget, fixed_tokens, memory_share
from gateway.usecases.sessions.conversation import (
    Conversation,
    Pinned,
    judge_conversation,
    lay_out_conversation,
    session_scope,
    shown_pinned,
)
from gateway.usecases.sessions.receipt import Built, record_session_context
from gateway.usecases.sessions.seeing import seen_session
from gateway.usecases.sessions.summarizers import Summarizer

__all__ = [
    "SessionContexts",
]

# Counted apart, messages may tokenize a little differently than joined: a margin so that the
# memory part taking the conversation's slack never pushes the exact count over the budget.
SLACK_MARGIN = 8


@dataclass(frozen=True, slots=True)
class Judged:
    """The unsummarized turns (and the summary) as the policy judged them before a fold, and
    the tokens they came to."""

    conversation: Conversation
    tokens: int


def _covered_sha256(hashes: Sequence[str]) -> str:
    """sha256 over the covered turns' content hashes, in order (hex, one per line)."""
    return hashlib.sha256("".join(f"{h}\n" for h in hashes).encode("ascii")).hexdigest()


def without_verbatim(found: Found, shown: set[str]) -> Found:
    """`found` without the remembered copies of turns the context shows verbatim: the same
    words twice would spend the budget twice. The receipt's candidates are what is left, so a
    replay composes from exactly these. The open conflicts stay: their sides are facts, never
    turns."""

    def kept(c: Candidate) -> bool:
        return not (c.source_type == "turn" and c.source_ref in shown)

    return Found(
        tuple(filter(kept, found.candidates)),
        tuple(filter(kept, found.index_entries)),
        found.total_live,
        found.conflicts,
    )


def _memory_request(
    session: store.SessionRow,
    pinned: Pinned,
    step: SessionContextIn,
    share: int,
    turns: Sequence[ShownTurn],
    layout: SessionLayout,
) -> ContextRequest | None:
    """The memory bundle's request: the step's query, by default the pinned task and the last
    user turn (both as shown: what the policy withholds steers no recall); with its index as
    the layout says. None when there is nothing to ask with."""
    query = step.query
    if query is None:
        last_user = next((t.text for t in reversed(turns) if t.role == "user"), None)
        query = "\n".join(text for text in (pinned.task, last_user) if text is not None)
        if not query:
            return None
    return ContextRequest(
        task=query,
        namespaces=(session.namespace,),
        budget_tokens=share,
        top_k=layout.memory_top_k,
        purpose=step.purpose,
        include_index=layout.memory_index,
    )


@dataclass(frozen=True, slots=True)
class SessionContexts:
    pool: Pool
    discloser: Discloser
    summarizer: Summarizer
    tokenizer: Tokenizer
    clock: Clock
    new_id: IdFactory
    layout: SessionLayout = LAYOUT  # the rules new contexts are cut by (replay reads its own)

    async def context(
        self, authorization: str | None, session_id: str, step: SessionContextIn
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
        step: SessionContextIn,
        now: datetime,
    ) -> SessionContext:
        principal.require_role("agent", "admin")
        # Locked: a compaction of this session and appends to it wait for this step's commit.
        seen = await seen_session(
            conn,
            principal,
            session_id,
            policies=self.discloser.policies,
            tokenizer=self.tokenizer,
            at=now,
            purpose=step.purpose,
            lock=True,
        )
        session = seen.row
        budget = step.budget_tokens or session.budget_tokens
        check_budget(self.tokenizer, session.system_prompt, session.task, budget)
        request = SessionRequestRecord(
            session_id=session.session_id,
            namespaces=[session.namespace],
            budget_tokens=budget,
            query=step.query,
            purpose=step.purpose,
        )
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
            disclosure=SESSION_CONTEXT,
            request=request,
            purpose=step.purpose,
            at=now,
            issued_at=now,
        )
        admitted = Admitted(admitted.policy, admitted.judging, session_scope(session))
        pinned = shown_pinned(admitted, session, self.layout.laid_out, self.tokenizer)
        # Redaction may lengthen a text: the budget must hold the texts as shown.
        check_budget(self.tokenizer, pinned.system_prompt, pinned.task, budget)
        cut = shares(
            budget,
            fixed_tokens(self.tokenizer, pinned.system_prompt, pinned.task),
            memory_share(session.memory_budget_tokens, budget),
            self.layout,
        )
        assert cut is not None  # check_budget guarantees the room
        tenant_id = principal.tenant_id
        previous = await summary_store.latest_summary(conn, tenant_id, session_id)
        after = 0 if previous is None else previous.to_seq
        pending = await turn_store.turns_after(conn, tenant_id, session_id, after)

        summary, folded, before = await self._compact(
            conn, principal, session, admitted, previous, pending, cut, now
        )
        covered = 0 if summary is None else summary.to_seq
        tail = [t for t in pending if t.seq > covered]
        # Judged once: the judgement of the unsummarized turns stands when the summary did not
        # change (nothing folded), since the same texts are shown.
        unchanged = summary is previous
        conversation = (
            before.conversation
            if unchanged
            else judge_conversation(admitted, session, summary, tail)
        )
        memory = await self._memory(
            conn, principal, session, pinned, step, admitted, cut, conversation, now
        )
        laid = lay_out_conversation(pinned.messages, conversation, memory, budget, self.tokenizer)
        compaction = Compaction(
            folded=folded,
            tokens_before=before.tokens,
            tokens_after=sum(
                message_cost(turn_message(t), self.tokenizer) for t in conversation.turns
            )
            + (summary.tokens if summary is not None else 0),
        )
        built = Built(
            session=session,
            request=request,
            at=now,
            admitted=admitted,
            pinned=pinned,
            summary=summary,
            tail=tail,
            conversation=conversation,
            memory=memory,
            laid=laid,
            budget=budget,
            layout=self.layout.version,
            compaction=compaction,
            wrote_summary=not unchanged,
        )
        return await record_session_context(
            self.discloser, self.tokenizer.name, conn, principal, built
        )

    async def _compact(
        self,
        conn: Connection,
        principal: Principal,
        session: store.SessionRow,
        admitted: Admitted,
        previous: summary_store.SummaryRow | None,
        pending: Sequence[turn_store.TurnRow],
        cut: Shares,
        now: datetime,
    ) -> tuple[summary_store.SummaryRow | None, list[int] | None, Judged]:
        """The summary this step shows, folding the oldest unsummarized turns (as the policy
        shows them) when the verbatim tail outgrows its share; what was folded; and the
        conversation as judged before the fold, with its tokens."""
        before = judge_conversation(admitted, session, previous, pending)
        costs = [message_cost(turn_message(t), self.tokenizer) for t in before.turns]
        tokens_before = sum(costs) + (previous.tokens if previous is not None else 0)
        fold = plan_fold(costs, cut.turns, session.keep_last)
        share = self._summary_share(cut.summary)
        summary, folded = previous, None
        if fold:
            to_seq = before.turns[fold - 1].seq
            folding = [Folded(t.seq, t.role, t.text) for t in before.turns[:fold]]
            summary = await self._fold(
                conn, principal, session, previous, folding, to_seq, share, now
            )
            folded = [1 if previous is None else previous.to_seq + 1, to_seq]
        elif previous is not None and previous.tokens > share:
            # A smaller budget than the summary was made for: a summary of the summary.
            summary = await self._fold(
                conn, principal, session, previous, [], previous.to_seq, share, now
            )
        return summary, folded, Judged(before, tokens_before)

    async def _memory(
        self,
        conn: Connection,
        principal: Principal,
        session: store.SessionRow,
        pinned: Pinned,
        step: SessionContextIn,
        admitted: Admitted,
        cut: Shares,
        conversation: Conversation,
        now: datetime,
    ) -> Composed | None:
        """The memory bundle for the step's query, through `compose`: its share, plus what the
        summary and the verbatim turns leave of theirs (they are folded down below their share,
        and whole turns rarely fill it exactly). A session without memory share gets none."""
        if cut.memory == 0:
            return None
        conversation_tokens = sum(
            message_cost(turn_message(t), self.tokenizer) for t in conversation.turns
        )
        if conversation.summary is not None:
            conversation_tokens += message_cost(conversation.summary, self.tokenizer)
        left = cut.summary + cut.turns - conversation_tokens
        room = cut.memory + max(0, left) - self._message_overhead() - SLACK_MARGIN
        request = _memory_request(session, pinned, step, room, conversation.turns, self.layout)
        if request is None or request.budget_tokens < 1:
            return None
        found = await retrieval.find(
            conn,
            self.discloser.embedder,
            principal,
            request,
            now,
            policy=admitted.policy.bundle,
            depth=self.layout.recall_depth,
        )
        shown = {t.turn_id for t in conversation.turns}
        return compose(
            request, without_verbatim(found, shown), admitted, self.discloser.makers, at=now
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
        previous: summary_store.SummaryRow | None,
        turns: Sequence[Folded],
        to_seq: int,
        share: int,
        now: datetime,
    ) -> summary_store.SummaryRow:
        """A new summary covering [1, to_seq], stored in the step's transaction."""
        text = await self.summarizer.fold(None if previous is None else previous.text, turns, share)
        if self.tokenizer.count(text) > share:
            # A model may overshoot: keep its best whole sentences that fit, never a cut one.
            text = summarize(None, [Folded(to_seq, "summary", text)], share, self.tokenizer)
        hashes = await turn_store.content_hashes(
            conn, principal.tenant_id, session.session_id, to_seq
        )
        row = summary_store.SummaryRow(
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
        await summary_store.insert_summary(conn, principal.tenant_id, session.session_id, row)
        return row
