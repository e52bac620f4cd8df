"""The cyclic garbage collector's settings for a serving process, applied once it has loaded
what it keeps (`ctxgw serve`, each `--workers` process, the benchmark server).

- Freeze: everything loaded at start (modules, runtime, compiled policies) lives as long as the
  process. Out of the collector's sight, full passes stop rescanning it; they were the slowest
  requests' tail (policy evaluate p99 13.5 → 3.8 ms, bench/RESULTS.md).
- A larger young-generation threshold (CPython's 700 container allocations between young
  collections → 10,000): one request allocates thousands of containers (rows, decision records,
  receipt members) that are garbage when it ends, and a young collection every 700 traverses
  them while they are still alive. CPython 3.13 raised its own default to 2,000 for this reason.
  A young collection then finds at most ~10,000 objects, a few MB.
"""

from __future__ import annotations

import gc
from typing import Final

__all__ = ["YOUNG_THRESHOLD", "settle_collector"]

YOUNG_THRESHOLD: Final = 10_000


def settle_collector() -> None:
    """Freeze what is loaded and raise the young-generation threshold (the module docstring
    says why); the older generations keep their thresholds."""
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, old)
