"""A session context, laid out (ARCHITECTURE §11): what the model sees this step.

    system prompt · pinned task · summary so far   (the stable prefix: prompt caches keep it)
    memory bundle · the last turns verbatim        (the varying tail)

Everything is counted as rendered: `text` is the messages as one string, and its exact token
count is what the budget bounds (`tokens_used`). The budget is cut into shares once per step
(`shares`, by the rules of a versioned `SessionLayout`, :mod:`gateway.core.versions`): the fixed
prefix first, then the memory share, and what remains split between the summary and the
verbatim turns. Compaction (`plan_fold`) decides how many of the oldest unsummarized turns to
fold so that the verbatim tail fits its share. Laying the parts out (`lay_out_session`) reads no
value of the layout: replay lays out a receipt of any listed layout from what it recorded.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gateway.core.tokens import Tokenizer
from gateway.core.versions import LAYOUT, SessionLayout

__all__ = [
    "MIN_TURN_ROOM",
    "Laid",
    "Message",
    "Shares",
    "ShownTurn",
    "fixed_messages",
    "lay_out_session",
    "memory_message",
    "message_cost",
    "plan_fold",
    "render_text",
    "shares",
    "summary_message",
    "turn_message",
]

SEPARATOR = "\n\n"
# The least room a budget must leave after the system prompt and the task: one short turn.
MIN_TURN_ROOM = 64


@dataclass(frozen=True, slots=True)
class Message:
    """One OpenAI chat message."""

    role: str  # system | user | assistant
    content: str
    name: str | None = None


@dataclass(frozen=True, slots=True)
class ShownTurn:
    """A turn as the policy lets it show: its text possibly redacted."""

    seq: int
    turn_id: str
    role: str
    name: str | None
    text: str


def _block(message: Message) -> str:
    who = message.role if message.name is None else f"{message.role} ({message.name})"
    return f"{who}: {message.content}"


def render_text(messages: Sequence[Message]) -> str:
    """The messages as one string: each as `role: content`, blank-line separated."""
    return SEPARATOR.join(map(_block, messages))


def message_cost(message: Message, tokenizer: Tokenizer) -> int:
    """What a message adds to `text`, its separator included (an upper bound in practice; the
    layout checks the exact count of the whole anyway)."""
    return tokenizer.count(_block(message)) + tokenizer.count(SEPARATOR)


def fixed_messages(system_prompt: str | None, task: str | None) -> list[Message]:
    """The messages every context of a session opens with: its system prompt and its task, each
    left out when absent (a session always has a task; the policy may withhold it)."""
    messages = [Message("system", system_prompt)] if system_prompt else []
    return messages if task is None else [*messages, Message("system", f"Task: {task}")]


def summary_message(text: str, to_seq: int) -> Message:
    return Message("system", f"Summary of the conversation so far (turns 1-{to_seq}):\n{text}")


def memory_message(bundle: str) -> Message:
    return Message("system", bundle)


def turn_message(turn: ShownTurn) -> Message:
    # A `tool` turn is a transcript entry with no tool call to answer: chat APIs accept a tool
    # message only after the assistant's call, so it is shown as the assistant's observation.
    if turn.role == "tool":
        label = f"[tool {turn.name}]" if turn.name else "[tool]"
        return Message("assistant", f"{label} {turn.text}")
    return Message(turn.role, turn.text, turn.name)


@dataclass(frozen=True, slots=True)
class Shares:
    fixed: int  # the system prompt and the task, as rendered
    memory: int
    summary: int
    turns: int


def shares(
    budget: int, fixed: int, memory_wanted: int, layout: SessionLayout = LAYOUT
) -> Shares | None:
    """The budget cut into shares; None when it leaves less than `MIN_TURN_ROOM` after the
    fixed prefix (the caller says the minimum: `fixed + MIN_TURN_ROOM`)."""
    left = budget - fixed
    if left < MIN_TURN_ROOM:
        return None
    memory = max(0, min(memory_wanted, left - MIN_TURN_ROOM))
    rest = left - memory
    summary = layout.summary_share(rest, recalling=memory > 0)
    return Shares(fixed, memory, summary, rest - summary)


def plan_fold(costs: Sequence[int], share: int, keep_last: int) -> int:
    """How many of the oldest unsummarized turns to fold (0: the tail fits its share).

    Once the tail outgrows its share it is folded down to half of it (a low watermark), so that
    the summary, and with it the cached prefix, changes every few steps rather than every step;
    the last `keep_last` turns stay verbatim unless they alone overflow the share."""
    total = sum(costs)
    if total <= share:
        return 0
    folded = 0
    movable = max(0, len(costs) - keep_last)
    while folded < movable and total > share // 2:
        total -= costs[folded]
        folded += 1
    while folded < len(costs) and total > share:
        total -= costs[folded]
        folded += 1
    return folded


@dataclass(frozen=True, slots=True)
class Laid:
    messages: tuple[Message, ...]
    text: str
    tokens: int
    prefix_messages: int  # how many leading messages are the stable prefix
    turns: tuple[ShownTurn, ...]  # the verbatim turns shown
    dropped: tuple[ShownTurn, ...]  # verbatim turns the exact count left no room for
    memory_shown: bool


def lay_out_session(
    fixed: Sequence[Message],
    summary: Message | None,
    memory: Message | None,
    turns: Sequence[ShownTurn],
    budget: int,
    tokenizer: Tokenizer,
) -> Laid:
    """The messages in order and their text; the oldest verbatim turns are dropped while the
    exact count exceeds the budget (the shares make that rare), then the memory bundle."""
    prefix = [*fixed, *([summary] if summary is not None else [])]
    shown = list(turns)
    dropped: list[ShownTurn] = []
    while True:
        middle = [memory] if memory is not None else []
        messages = [*prefix, *middle, *map(turn_message, shown)]
        text = render_text(messages)
        tokens = tokenizer.count(text)
        if tokens <= budget:
            return Laid(
                tuple(messages),
                text,
                tokens,
                len(prefix),
                tuple(shown),
                tuple(dropped),
                memory_shown=memory is not None,
            )
        if shown:
            dropped.append(shown.pop(0))
        elif memory is not None:
            memory = None
        else:  # the prefix alone: the caller checked the minimum, so this is a broken share
            raise ValueError(f"the fixed prefix and summary need {tokens} > {budget} tokens")
