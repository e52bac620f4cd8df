"""The two-agent demo: a planner deprecates a module, and the coder, asking for context before
acting, is handed the current plan only; the deprecated one is accounted for as superseded."""

from __future__ import annotations

import asyncio

from gateway.responses.disclosures import ContextBundle
from gateway.shell.demo import coder_context, seed_demo
from gateway.shell.runtime import start_runtime
from gateway.shell.settings import Settings


def test_the_coder_never_sees_the_deprecated_plan_as_current(settings: Settings) -> None:
    async def run() -> tuple[ContextBundle, ContextBundle]:
        async with start_runtime(settings) as runtime:
            keys = await seed_demo(runtime)
            first = await coder_context(runtime, keys)
            again = await seed_demo(runtime)  # a second `make demo` writes nothing new
            assert again == keys
            return first, await coder_context(runtime, keys)

    first, second = asyncio.run(run())
    for bundle in (first, second):
        assert "Atlas ledger API" in bundle.bundle
        assert "Build the new invoice exports on the legacy invoice module" not in bundle.bundle
        [superseded] = [e for e in bundle.excluded if e.reason == "superseded"]
        assert "(decision " in superseded.detail
    assert first.bundle == second.bundle
