"""A session's budget (ARCHITECTURE §11): what its fixed prefix (system prompt and task) costs,
the memory bundle's share, and the smallest budget a step can be built in."""

from __future__ import annotations

from gateway.core.render import SEPARATOR
from gateway.core.session import MIN_TURN_ROOM, fixed_messages, render_text
from gateway.core.tokens import Tokenizer
from gateway.domain.errors import FieldError, InvalidRequestError

__all__ = ["check_budget", "fixed_tokens", "memory_share"]


def memory_share(memory_budget_tokens: int | None, budget: int) -> int:
    """The memory bundle's share of `budget`: the session's, or a quarter of the budget."""
    return budget // 4 if memory_budget_tokens is None else memory_budget_tokens


def fixed_tokens(tokenizer: Tokenizer, system_prompt: str | None, task: str | None) -> int:
    """What the system prompt and the task cost as rendered, their separator included."""
    return tokenizer.count(render_text(fixed_messages(system_prompt, task))) + tokenizer.count(
        SEPARATOR
    )


def check_budget(
    tokenizer: Tokenizer, system_prompt: str | None, task: str | None, budget: int
) -> None:
    """422 unless `budget` holds the system prompt, the task and one short turn."""
    minimum = fixed_tokens(tokenizer, system_prompt, task) + MIN_TURN_ROOM
    if budget < minimum:
        message = (
            f"{budget} tokens cannot hold the system prompt, the task and one turn; "
            f"the minimum for this session is {minimum}"
        )
        raise InvalidRequestError(
            f"budget_tokens: {message}",
            (FieldError("budget_tokens", message),),
            code="budget_too_small",
        )
