"""A session context, laid out (ARCHITECTURE §11): what the model sees this step.

    system prompt · pinned task · summary so far   (the stable prefix: prompt caches keep it)
    memory bundle · the last turns verbatim        (the varying tail)

Everything is counted as rendered: `text` is the messages as one string, and its exact token
count is what the budget bounds (`tokens_used`). The budget is cut into shares once per step
(`shares`, by the rules of a `SessionLayout`): the fixed prefix first, then the memory share, and
what remains split between the summary and the verbatim turns. Compaction (`plan_fold`) decides
how many of the oldest unsummarized turns to fold so that the verbatim tail fits its share.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from gateway.core.tokens import Tokenizer

__all__ = [
    "FIRST_LAYOUT",
    "LAYOUT",
    "LAYOUTS",
    "MIN_TURN_ROOM",
    "WHOLE_TURNS",
    "Laid",
    "Message",
    "SessionLayout",
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


def fixed_messages(system_prompt: str | None, task: str) -> list[Message]:
    messages = [Message("system", system_prompt)] if system_prompt else []
    return [*messages, Message("system", f"Task: {task}")]


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
class SessionLayout:
    """The rules a session context is cut by, named in its receipt (`version`), as ASSEMBLER
    names the bundle's: a change to the bytes a session context is made of is a new version.
    Replay rebuilds from what the receipt recorded (the summary by id, the memory request with
    its room), so every version listed in `LAYOUTS` replays to its bytes."""

    version: str
    # The summary's share of what the fixed prefix and the memory share leave: a third when
    # the summary is the only way back to the older turns; `recalling_summary_divisor` when the
    # step also recalls memories, which bring remembered turns back whole, by relevance.
    summary_divisor: int
    recalling_summary_divisor: int
    # Whether the memory bundle lists its index (its first tier, §6). In a session the summary
    # is that tier for the conversation; index lines of its remembered turns (all of one
    # confidence, so the oldest first) would repeat what the summary covers, and cost the
    # memory part room its whole memories need.
    memory_index: bool
    # How many memories the memory part may show in full (the bundle's top_k), and how many
    # each retriever returns for it (a bundle's is four times its top_k, at least 40).
    memory_top_k: int
    recall_depth: int

    def summary_share(self, rest: int, recalling: bool) -> int:
        return rest // (self.recalling_summary_divisor if recalling else self.summary_divisor)


# The first layout: a third to the summary, the memory bundle with its index.
FIRST_LAYOUT = SessionLayout(
    "session/2026-12-01.1",
    summary_divisor=3,
    recalling_summary_divisor=3,
    memory_index=True,
    memory_top_k=6,
    recall_depth=40,
)
# A step that recalls gives the summary a sixth and the memory bundle no index: the room goes
# to whole remembered turns (tuned on the 58 LongMemEval_S dev questions, bench/RESULTS.md).
WHOLE_TURNS = SessionLayout(
    "session/2026-12-02.1",
    summary_divisor=3,
    recalling_summary_divisor=6,
    memory_index=False,
    memory_top_k=6,
    recall_depth=40,
)
# And the room the index would have had goes to more of them: up to 16 in full where a bundle
# shows 6, the lower ranked filling what the better ones leave. Six left a seventh of a 2,000
# budget unused on average and fell one evidence turn short of memory-only recall on those
# questions; 10 and 16 both passed it, 16 with room to spare. The retrievers keep the depth of
# a six-memory bundle: the 64 of a 16-memory one cost a third more per step at turn 500 for
# one evidence turn there and none on held-out LoCoMo (bench/RESULTS.md, Sessions).
SIXTEEN_MEMORIES = SessionLayout(
    "session/2026-12-02.2",
    summary_divisor=3,
    recalling_summary_divisor=6,
    memory_index=False,
    memory_top_k=16,
    recall_depth=40,
)
# Each retriever returns 32: chosen on the tuning questions, where 32 kept 0.83 of the evidence
# turns at 2,000 against 0.80 with 40 and 0.81 with 24, and held-out LoCoMo kept 0.63 with each.
# The depth does not move the step's latency: the recall statement scores every match whatever
# it returns (bench/RESULTS.md, Sessions, seventh session).
LAYOUT = replace(SIXTEEN_MEMORIES, version="session/2026-12-03.1", recall_depth=32)
LAYOUTS = {
    layout.version: layout for layout in (FIRST_LAYOUT, WHOLE_TURNS, SIXTEEN_MEMORIES, LAYOUT)
}


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
