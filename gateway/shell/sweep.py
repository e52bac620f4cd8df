"""`ctxgw sweep`: one task at several budgets — the diminishing-returns curve of a context bundle.

Per budget: memories admitted in full, tokens used, utilization, and the marginal tokens each
added memory cost over the previous budget. Printed as a table and drawn as an SVG chart.

Each request names the budget and only what the command line named besides: every other option
takes the API's default (POST /v1/context), so the curve is the one an agent that names only a
budget gets.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from gateway.client import Client
from gateway.client.options import ContextOptions
from gateway.responses.disclosures import ContextBundle

__all__ = ["SweepRow", "render_svg", "render_table", "run_sweep", "sweep_options", "sweep_rows"]


@dataclass(frozen=True, slots=True)
class SweepRow:
    budget: int
    admitted: int
    tokens_used: int
    utilization: float
    marginal_tokens_per_memory: float | None  # None when no memory was added at this step
    receipt_id: str


def sweep_options(
    *, top_k: int | None, include_index: bool | None, namespaces: Sequence[str] | None
) -> ContextOptions:
    """The request's options: those named (not None), and no other, so that the API's
    defaults hold for the rest."""
    options: ContextOptions = {}
    if top_k is not None:
        options["top_k"] = top_k
    if include_index is not None:
        options["include_index"] = include_index
    if namespaces:
        options["namespaces"] = namespaces
    return options


def sweep_rows(responses: Sequence[tuple[int, ContextBundle]]) -> list[SweepRow]:
    """Rows from (budget, /v1/context response) pairs, in budget order."""
    rows: list[SweepRow] = []
    previous: tuple[int, int] | None = None
    for budget, body in sorted(responses, key=lambda pair: pair[0]):
        admitted = len(body.included)
        used = body.tokens_used
        marginal = None
        if previous is not None and admitted > previous[0]:
            marginal = (used - previous[1]) / (admitted - previous[0])
        rows.append(SweepRow(budget, admitted, used, used / budget, marginal, body.receipt_id))
        previous = (admitted, used)
    return rows


def run_sweep(
    ctxgw: Client, task: str, budgets: Sequence[int], options: ContextOptions
) -> list[SweepRow]:
    responses = []
    for budget in budgets:
        at_budget: ContextOptions = {**options, "budget_tokens": budget}
        responses.append((budget, ctxgw.context(task, **at_budget)))
    return sweep_rows(responses)


def render_table(rows: Sequence[SweepRow]) -> str:
    lines = [
        "| budget | memories | tokens used | utilization | marginal tokens/memory |",
        "|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        marginal = (
            "–" if r.marginal_tokens_per_memory is None else f"{r.marginal_tokens_per_memory:.0f}"
        )
        lines.append(
            f"| {r.budget} | {r.admitted} | {r.tokens_used} | {r.utilization:.1%} | {marginal} |"
        )
    return "\n".join(lines)


def render_svg(rows: Sequence[SweepRow], title: str) -> str:
    """Memories admitted against budget: a small self-contained SVG (no plotting dependency)."""
    width, height, pad = 640, 360, 56
    max_budget = max((r.budget for r in rows), default=1)
    max_admitted = max((r.admitted for r in rows), default=1) or 1

    def x(budget: int) -> float:
        return pad + (width - 2 * pad) * budget / max_budget

    def y(admitted: int) -> float:
        return height - pad - (height - 2 * pad) * admitted / max_admitted

    points = " ".join(f"{x(r.budget):.1f},{y(r.admitted):.1f}" for r in rows)
    marks = "".join(
        f'<circle cx="{x(r.budget):.1f}" cy="{y(r.admitted):.1f}" r="3"/>'
        f'<text x="{x(r.budget):.1f}" y="{height - pad + 16}" text-anchor="middle">{r.budget}</text>'
        f'<text x="{x(r.budget) + 6:.1f}" y="{y(r.admitted) - 6:.1f}">{r.admitted}</text>'
        for r in rows
    )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'font-family="sans-serif" font-size="11">'
        f'<rect width="100%" height="100%" fill="white"/>'
        f'<text x="{pad}" y="24" font-size="14">{escape(title)}</text>'
        f'<line x1="{pad}" y1="{height - pad}" x2="{width - pad}" y2="{height - pad}" stroke="black"/>'
        f'<line x1="{pad}" y1="{pad}" x2="{pad}" y2="{height - pad}" stroke="black"/>'
        f'<text x="{width / 2}" y="{height - 12}" text-anchor="middle">budget (tokens)</text>'
        f'<text x="14" y="{height / 2}" transform="rotate(-90 14 {height / 2})" '
        f'text-anchor="middle">memories admitted in full</text>'
        f'<polyline points="{points}" fill="none" stroke="#1f6feb" stroke-width="2"/>'
        f'<g fill="#1f6feb">{marks}</g></svg>\n'
    )
