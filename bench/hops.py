"""How a POST /v1/context travels through the code: cross-module calls and layer reversals.

One request, after warm-up requests, runs in-process from what the handler calls on down (the
use case, the store, the core, the policy engine, the receipt writer); `sys.setprofile` sees
every Python call. A hop is a call from a function of one project module
into a function of another (gateway, policies, receipts); calls within a module, and into the
standard library or dependencies, are not hops. A reversal is a hop from a lower layer into a
higher one, which is what a callback or a sink does (the core calling back into a use case, the
store into the code that called it):

    gateway.http  >  gateway.usecases  >  gateway.core | gateway.store | policies | receipts

The figures count calls, so a loop over candidates that calls into another module counts once
per item: `distinct` counts each (caller module, callee module) pair once, which is the reading
of "how many hands does a request pass through".
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from collections import Counter
from pathlib import Path
from types import FrameType
from typing import Any

from bench.corpus import load_corpus, loaded_database
from bench.harness import embedded_postgres, markdown_table
from gateway.shell.runtime import start_runtime
from gateway.shell.settings import Settings

__all__ = ["main"]

NAMESPACE = "hops"
_LAYERS = (
    ("gateway.http", 3),
    ("gateway.usecases", 2),
    ("gateway.core", 1),
    ("gateway.store", 1),
    ("policies", 1),
    ("receipts", 1),
)


def _layer(module: str) -> int | None:
    for prefix, rank in _LAYERS:
        if module == prefix or module.startswith(prefix + "."):
            return rank
    return None


def _project(module: str) -> bool:
    return module.split(".", maxsplit=1)[0] in ("gateway", "policies", "receipts")


class _Tracer:
    def __init__(self) -> None:
        self.hops: Counter[tuple[str, str]] = Counter()

    def __call__(self, frame: FrameType, event: str, arg: Any) -> None:
        if event != "call" or frame.f_back is None:
            return
        callee = frame.f_globals.get("__name__", "")
        caller = frame.f_back.f_globals.get("__name__", "")
        if callee != caller and _project(callee) and _project(caller):
            self.hops[caller, callee] += 1


async def _trace(url: str, key: str, task: str) -> _Tracer:
    with tempfile.TemporaryDirectory(prefix="ctxgw-bench-hops-") as data_dir:
        settings = Settings(
            database_url=url, data_dir=Path(data_dir), migrate_on_start=False, log_level="WARNING"
        )
        async with start_runtime(settings) as runtime:
            for _ in range(3):
                await _context(runtime, key, task)
            tracer = _Tracer()
            sys.setprofile(tracer)
            try:
                await _context(runtime, key, task)
            finally:
                sys.setprofile(None)
            return tracer


async def _context(runtime: Any, key: str, task: str) -> None:
    """What the /v1/context handler calls once it has parsed the body (the handler itself is one
    more hop, http -> usecases); the gateway before the pipeline change had handlers open the
    transaction and authenticate, which is done here the same way for it."""
    from gateway.core.model import ContextRequest

    if hasattr(runtime, "disclosures"):
        from gateway.usecases.disclosure.requests import ContextAsk

        ask = ContextAsk(task=task, namespaces=(NAMESPACE,), budget_tokens=4000)
        await runtime.disclosures.context(f"Bearer {key}", ask)
        return
    from gateway.store.database import transaction
    from gateway.usecases.access.keys import authenticate

    async with transaction(runtime.pool) as conn:
        principal = await authenticate(conn, f"Bearer {key}")
        request = ContextRequest(task=task, namespaces=(NAMESPACE,), budget_tokens=4000, top_k=6)
        await runtime.discloser.context(conn, principal, request, runtime.clock())


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench hops", description=__doc__)
    parser.add_argument("--memories", type=int, default=300)
    args = parser.parse_args(argv)
    corpus = load_corpus()
    with embedded_postgres() as pg:
        db = loaded_database(pg, "bench_hops", corpus, namespace=NAMESPACE, memories=args.memories)
        tracer = asyncio.run(_trace(db.url, db.key, corpus.queries[0]))
    rows = []
    reversals: Counter[tuple[str, str]] = Counter()
    for (caller, callee), count in sorted(tracer.hops.items()):
        upper, lower = _layer(callee), _layer(caller)
        reversal = upper is not None and lower is not None and upper > lower
        if reversal:
            reversals[caller, callee] = count
        rows.append([caller, callee, count, "reversal" if reversal else ""])
    print(markdown_table(["caller module", "callee module", "calls", ""], rows))
    print(
        f"\ncross-module calls {sum(tracer.hops.values())}, distinct module pairs "
        f"{len(tracer.hops)}, reversals {sum(reversals.values())} over {len(reversals)} pairs"
    )
    return 0
