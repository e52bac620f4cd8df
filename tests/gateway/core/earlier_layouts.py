"""The session layouts before the current one, with the values gateways of those versions cut
their contexts by. The gateway keeps only what replaying a receipt reads of them, their names
and whether they judge the pinned texts (`gateway.core.versions.SESSION_LAYOUTS`); tests build
receipts of each with these values, then replay them on the gateway that no longer has them."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from gateway.core.versions import LAYOUT, SessionLayout

__all__ = [
    "EARLIER_LAYOUTS",
    "FIRST_LAYOUT",
    "LAYOUTS",
    "SIXTEEN_MEMORIES",
    "THIRTY_TWO_DEEP",
    "WHOLE_TURNS",
]

# The first layout: a third to the summary, the memory bundle with its index.
FIRST_LAYOUT = SessionLayout(
    "session/2026-12-01.1",
    summary_divisor=3,
    recalling_summary_divisor=3,
    memory_index=True,
    memory_top_k=6,
    recall_depth=40,
    judges_pinned=False,
)
# A step that recalls gives the summary a sixth and the memory bundle no index.
WHOLE_TURNS = SessionLayout(
    "session/2026-12-02.1",
    summary_divisor=3,
    recalling_summary_divisor=6,
    memory_index=False,
    memory_top_k=6,
    recall_depth=40,
    judges_pinned=False,
)
# And up to 16 memories in full where a bundle shows 6, from retrievers 40 deep.
SIXTEEN_MEMORIES = SessionLayout(
    "session/2026-12-02.2",
    summary_divisor=3,
    recalling_summary_divisor=6,
    memory_index=False,
    memory_top_k=16,
    recall_depth=40,
    judges_pinned=False,
)
# And retrievers 32 deep: the system prompt and task still shown as stored.
THIRTY_TWO_DEEP = SessionLayout(
    "session/2026-12-03.1",
    summary_divisor=3,
    recalling_summary_divisor=6,
    memory_index=False,
    memory_top_k=16,
    recall_depth=32,
    judges_pinned=False,
)
EARLIER_LAYOUTS: tuple[SessionLayout, ...] = (
    FIRST_LAYOUT,
    WHOLE_TURNS,
    SIXTEEN_MEMORIES,
    THIRTY_TWO_DEEP,
)
# Every layout a receipt can name, with its values, oldest first.
LAYOUTS: Mapping[str, SessionLayout] = MappingProxyType(
    {layout.version: layout for layout in (*EARLIER_LAYOUTS, LAYOUT)}
)
