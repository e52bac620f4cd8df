"""What the session endpoints answer (ARCHITECTURE §11): a session, an append, a page of its
history (receipted) and a session context (receipted)."""

from __future__ import annotations

import msgspec

from gateway.responses.disclosures import (
    Excluded,
    IncludedMemory,
    IndexReport,
    PolicyReport,
    ReplayProblem,
)
from gateway.responses.timestamps import Timestamp

__all__ = [
    "Appended",
    "ChatMessage",
    "Compaction",
    "HistoryPage",
    "HistoryTurn",
    "MemoryPart",
    "SessionContext",
    "SessionContextReplay",
    "SessionInfo",
    "SummaryRef",
    "TurnSpan",
]


class SummaryRef(msgspec.Struct, frozen=True):
    """A summary: the history prefix it covers (`covers` = [1, to_seq]), its size and maker."""

    summary_id: str
    covers: list[int]
    tokens: int
    summarizer: str


class SessionInfo(msgspec.Struct, frozen=True):
    """A session's settings, its history's length and its latest state."""

    session_id: str
    namespace: str
    task: str
    system_prompt: str | None
    budget_tokens: int
    keep_last: int
    memory_budget_tokens: int
    remember_turns: bool
    labels: list[str]
    created_at: Timestamp
    turn_count: int
    latest_summary: SummaryRef | None
    # On create: False when an idempotent retry returned the earlier session; None on reads.
    created: bool | None = None


class Appended(msgspec.Struct, frozen=True):
    """The seqs and ids the appended turns were given (gapless, in the order sent)."""

    first_seq: int
    last_seq: int
    turn_ids: list[str]
    created: bool  # False when an idempotent retry returned the earlier append
    memory_ids: list[str]  # the episodic memories written for them (remember_turns)


class HistoryTurn(msgspec.Struct, frozen=True):
    seq: int
    turn_id: str
    role: str
    name: str | None
    content: str
    content_sha256: str
    tokens: int
    occurred_at: Timestamp


class HistoryPage(msgspec.Struct, frozen=True):
    """GET /v1/sessions/{id}/turns: turns after `after` as the policy shows them; `next_after`
    continues the paging (None at the end)."""

    turns: list[HistoryTurn]
    excluded: list[Excluded]
    next_after: int | None
    policy: PolicyReport
    receipt_id: str


class ChatMessage(msgspec.Struct, frozen=True, omit_defaults=True):
    """An OpenAI chat message."""

    role: str
    content: str
    name: str | None = None


class TurnSpan(msgspec.Struct, frozen=True):
    first_seq: int | None
    last_seq: int | None


class MemoryPart(msgspec.Struct, frozen=True):
    """The memory bundle within its share: what it included, left out and listed."""

    included: list[IncludedMemory]
    excluded: list[Excluded]
    index: IndexReport
    tokens: int


class Compaction(msgspec.Struct, frozen=True):
    """What this step folded into a new summary (`folded` = [from, to] seqs, None: nothing),
    and the tokens of the summary and unsummarized turns before and after."""

    folded: list[int] | None
    tokens_before: int
    tokens_after: int


class SessionContext(msgspec.Struct, frozen=True):
    """POST /v1/sessions/{id}/context: what the model sees this step."""

    messages: list[ChatMessage]
    text: str
    text_sha256: str
    tokens_used: int
    budget_tokens: int
    tokenizer: str
    prefix_messages: int  # the leading messages that form the stable prefix
    summary: SummaryRef | None
    turns: TurnSpan
    excluded_turns: list[Excluded]
    memory: MemoryPart | None
    compaction: Compaction
    policy: PolicyReport
    receipt_id: str


class SessionContextReplay(msgspec.Struct, frozen=True):
    """Exact replay of a session_context receipt: the text rebuilt from what it recorded."""

    mode: str
    identical: bool
    original_sha256: str
    replayed_sha256: str
    problems: list[ReplayProblem]
    text: str
    receipt_id: str
