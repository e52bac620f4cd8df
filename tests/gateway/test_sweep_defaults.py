"""`ctxgw sweep` asks at the API's defaults: a request that names the budget and only what its
command line named, so the curve is what an agent that names only a budget gets."""

from __future__ import annotations

import msgspec
import pytest

from gateway.client import calls
from gateway.client.options import ContextOptions
from gateway.requests import ContextIn
from gateway.shell.cli import _parser
from gateway.shell.sweep import sweep_options


def _sent(*argv: str, budget: int = 800) -> ContextIn:
    """The /v1/context request the sweep sends at `budget`, as the API reads it."""
    args = _parser().parse_args(["sweep", "How do I roll back?", *argv])
    options = sweep_options(
        top_k=args.top_k,
        include_index=False if args.no_index else None,
        namespaces=args.namespaces.split(",") if args.namespaces else None,
    )
    at_budget: ContextOptions = {**options, "budget_tokens": budget}  # as `run_sweep` asks
    call = calls.context(args.task, **at_budget)
    assert call.body is not None
    return msgspec.json.decode(call.body, type=ContextIn)


def test_the_sweeps_defaults_are_the_apis() -> None:
    assert _sent() == ContextIn(task="How do I roll back?", budget_tokens=800)


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (("--top-k", "12"), {"top_k": 12}),
        (("--no-index",), {"include_index": False}),
        (("--namespaces", "ops,chat"), {"namespaces": ["ops", "chat"]}),
    ],
)
def test_what_the_command_line_names_is_sent(
    argv: tuple[str, ...], named: dict[str, object]
) -> None:
    expected = ContextIn(task="How do I roll back?", budget_tokens=800, **named)  # type: ignore[arg-type]
    assert _sent(*argv) == expected
