"""`ctxgw serve`: the HTTP gateway in one process or several, and with `--demo` the demo
tenant, seeded and then shown through the Python client as an agent and an auditor see it."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from typing import Any

from gateway.shell.settings import Settings

__all__ = ["DEMO_TASK", "serve", "serve_workers"]


DEMO_TASK = "How do I roll back an Atlas deploy?"


def serve_workers(settings: Settings, host: str, port: int, demo: bool, workers: int) -> int:
    """N worker processes, each with its own runtime (`gateway.http.asgi`). The embedded server,
    when used, is held open here so that it outlives any one worker."""
    from gateway.http.workers import run_workers
    from gateway.store.database import EmbeddedPostgres

    if demo:
        asyncio.run(_seed_only(settings))
    with contextlib.ExitStack() as stack:
        if settings.embedded:
            stack.enter_context(EmbeddedPostgres(settings.data_dir))
        run_workers(
            host=host,
            port=port,
            workers=workers,
            log_level=settings.log_level.lower(),
            header_timeout=settings.header_timeout_seconds,
        )
    return 0


async def _seed_only(settings: Settings) -> None:
    from gateway.shell.demo import seed_demo
    from gateway.shell.runtime import start_runtime

    async with start_runtime(settings) as runtime:
        keys = await seed_demo(runtime)
    print(
        f"demo tenant ready; keys in {settings.data_dir / 'demo-keys.json'}\n"
        f"  agent key: {keys.agent}\n  admin key: {keys.admin}",
        flush=True,
    )


def _server_class() -> type[Any]:
    import uvicorn

    class Server(uvicorn.Server):
        """uvicorn, once shut down by SIGTERM or SIGINT, raises the signal again with its default
        action, which ends the process before the runtime's own shutdown (the pool, the embedded
        PostgreSQL) has run: here the signal ends serving, and the process exits normally after
        the runtime has closed. (`_captured_signals` is uvicorn's own list, pinned by
        tests/gateway/test_cli.py: a SIGTERM leaves no PostgreSQL running.)"""

        @contextlib.contextmanager
        def capture_signals(self) -> Any:
            with super().capture_signals():
                try:
                    yield
                finally:
                    self._captured_signals.clear()

    return Server


async def serve(settings: Settings, host: str, port: int, demo: bool) -> None:
    import uvicorn

    from gateway.http.app import create_app
    from gateway.http.slow_clients import http_protocol
    from gateway.shell.collector import settle_collector
    from gateway.shell.runtime import start_runtime

    _Server = _server_class()  # noqa: N806  a class, made where uvicorn is imported
    async with start_runtime(settings) as runtime:
        keys = None
        if demo:
            from gateway.shell.demo import seed_demo

            keys = await seed_demo(runtime)
        settle_collector()  # what is loaded lives as long as the process (gateway.shell.collector)
        config = uvicorn.Config(
            create_app(settings, runtime=runtime),
            host=host,
            port=port,
            log_level=settings.log_level.lower(),
            http=http_protocol(settings.header_timeout_seconds),
            log_config=None,  # configure_logging did it, in GATEWAY_LOG_FORMAT
            access_log=False,  # the request log (gateway.http.request_log) is the access log
            lifespan="on",
        )
        server = _Server(config)
        serving = asyncio.create_task(server.serve())
        if keys is not None:
            # uvicorn.Server sets a flag, not an event, once it listens: poll it.
            while not server.started and not serving.done():  # noqa: ASYNC110
                await asyncio.sleep(0.05)
            if server.started:
                await _show_demo(f"http://{host}:{port}", keys.agent, keys.admin, settings)
                await _show_plans(f"http://{host}:{port}", keys.coder)
        await serving


async def _show_demo(base: str, agent_key: str, admin_key: str, settings: Settings) -> None:
    """Ask the running gateway for a bundle, as an agent would (through the Python client), have
    an auditor verify its receipt, and show what came back."""
    from gateway.client import AsyncClient, ClientError

    try:
        async with AsyncClient(agent_key, base) as agent, AsyncClient(admin_key, base) as auditor:
            bundle = await agent.context(DEMO_TASK, budget_tokens=600)
            verification = await auditor.verify_receipt(bundle.receipt_id)
    except ClientError as exc:
        print(f"the demo request failed: {exc}", file=sys.stderr, flush=True)
        return
    request = {"task": DEMO_TASK, "budget_tokens": 600}
    rule = "─" * 72
    checks = ", ".join(c.name for c in verification.checks)
    print(
        f"\nctxgw is serving the demo tenant on {base} (keys in "
        f"{settings.data_dir / 'demo-keys.json'})\n  agent key: {agent_key}\n"
        f"  admin key: {admin_key}\n\nctxgw.context({DEMO_TASK!r}, budget_tokens=600)\n{rule}\n"
        f"{bundle.bundle}\n{rule}\n"
        f"tokens {bundle.tokens_used}/{bundle.budget_tokens}, {len(bundle.included)} memories in "
        f"full, {len(bundle.excluded)} accounted for as excluded, policy "
        f"{bundle.policy.digest[:19]}…, receipt {bundle.receipt_id} "
        f"({'valid' if verification.valid else 'INVALID'}: {checks})\n\nTry it yourself:\n"
        f"  from gateway.client import Client\n"
        f"  with Client({agent_key!r}, {base!r}) as ctxgw:\n"
        f"      print(ctxgw.context({DEMO_TASK!r}, budget_tokens=600).bundle)\n"
        f"or over HTTP:\n"
        f"  curl -s {base}/v1/context -H 'Authorization: Bearer {agent_key}' "
        f"-H 'content-type: application/json' -d '{json.dumps(request)}'\n"
        f"  curl -s {base}/v1/receipts/{bundle.receipt_id}/verify "
        f"-H 'Authorization: Bearer {admin_key}'\n  OpenAPI: {base}/schema\n",
        flush=True,
    )


async def _show_plans(base: str, coder_key: str) -> None:
    """The two-agent demo: the planner deprecated a module (its newer plan, same claim key,
    superseded the older one); the coder asks before acting and is handed only the current plan."""
    from gateway.client import AsyncClient, ClientError
    from gateway.shell.demo import CODER_TASK, PLANS_NAMESPACE

    try:
        async with AsyncClient(coder_key, base) as coder:
            bundle = await coder.context(
                CODER_TASK, namespaces=[PLANS_NAMESPACE], budget_tokens=600
            )
    except ClientError as exc:
        print(f"the planner/coder demo failed: {exc}", file=sys.stderr, flush=True)
        return
    superseded = [e for e in bundle.excluded if e.reason == "superseded"]
    print(
        f"The coder asks before acting: {CODER_TASK!r}\n{bundle.bundle}\n"
        f"(the planner's deprecated plan: {len(superseded)} superseded, left out: "
        f"{'; '.join(e.detail for e in superseded)})\n",
        flush=True,
    )
