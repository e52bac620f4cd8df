"""The application factory: routes, problem mapping, lifespan-owned runtime, OpenAPI at /schema."""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from types import ModuleType
from typing import Any

from litestar import Litestar, Request, get
from litestar.datastructures import State
from litestar.di import Provide
from litestar.logging.config import LoggingConfig
from litestar.openapi import OpenAPIConfig

from gateway import __version__
from gateway.domain.errors import FieldError, InvalidRequestError, UnauthenticatedError
from gateway.http.auth import RuntimeDep
from gateway.http.compiling import ROUTES as COMPILE_ROUTES
from gateway.http.console import CONSOLE
from gateway.http.context import ROUTES as CONTEXT_ROUTES
from gateway.http.memories import ROUTES as MEMORY_ROUTES
from gateway.http.metrics import Metrics, metrics_route, multiprocess_mode, observe_disclosure
from gateway.http.openapi import DOCUMENTED, problem_components
from gateway.http.policies import ROUTES as POLICY_ROUTES
from gateway.http.problems import EXCEPTION_HANDLERS
from gateway.http.receipts import ROUTES as RECEIPT_ROUTES
from gateway.http.request_log import with_request_log
from gateway.http.sessions import ROUTES as SESSION_ROUTES
from gateway.http.slow_clients import with_body_deadline
from gateway.responses.health import Health, Readiness
from gateway.shell.runtime import Runtime, start_runtime
from gateway.shell.settings import Settings
from gateway.usecases.operations.readiness import readiness

__all__ = ["create_app"]

_log = logging.getLogger(__name__)


@get("/healthz", summary="The process is up", operation_class=DOCUMENTED)
async def healthz() -> Health:
    return Health(status="ok", version=__version__)


@get("/readyz", summary="The database answers", operation_class=DOCUMENTED)
async def readyz(runtime: RuntimeDep) -> Readiness:
    return await readiness(runtime.pool)


async def _refuse_ambiguous_requests(request: Request[Any, Any, Any]) -> None:
    """Before any route runs. Two `Authorization` headers: which one counts would depend on who
    reads the request (a proxy, the gateway), so neither does (401). A NUL in a path parameter: no
    identifier contains one, and PostgreSQL cannot even compare text holding one."""
    said = request.headers.getall("authorization", [])
    # Repeated fields may arrive combined with commas (RFC 9110 §5.3); no key holds a comma.
    if len(said) > 1 or any("," in value for value in said):
        raise UnauthenticatedError(
            "send exactly one Authorization header", code="ambiguous_credentials"
        )
    bad = [name for name, value in request.path_params.items() if "\x00" in str(value)]
    if bad:
        raise InvalidRequestError(
            f"path parameter {bad[0]}: may not contain the NUL character",
            tuple(FieldError(name, "may not contain the NUL character (%00)") for name in bad),
            code="bad_path",
        )


def _runtime(state: State) -> Runtime:
    runtime: Runtime = state.runtime
    return runtime


def _mcp_support() -> ModuleType | None:
    """`gateway.http.mcp` when the `mcp` extra is installed: without it there is no `/mcp`."""
    try:
        from gateway.http import mcp
    except ModuleNotFoundError as exc:
        if exc.name != "mcp" and not (exc.name or "").startswith("mcp."):
            raise
        _log.info("the mcp extra is not installed: no /mcp")
        return None
    return mcp


def create_app(settings: Settings, *, runtime: Runtime | None = None) -> Litestar:
    """Build the app. With `runtime` given (tests, benchmarks) the caller owns its lifetime."""

    metrics = Metrics()
    mcp = _mcp_support()

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        app.state.metrics = metrics
        try:
            async with AsyncExitStack() as stack:
                if runtime is not None:
                    app.state.runtime = runtime
                else:
                    app.state.runtime = await stack.enter_async_context(start_runtime(settings))
                if mcp is not None:
                    app.state.mcp = mcp.McpEndpoint(app)
                    await stack.enter_async_context(app.state.mcp.running())
                yield
        finally:
            if multiprocess_mode():
                # A worker's gauges leave the sums with it (prometheus-client multiprocess).
                from prometheus_client import multiprocess

                multiprocess.mark_process_dead(os.getpid())  # type: ignore[no-untyped-call]

    app = Litestar(
        route_handlers=[
            healthz,
            readyz,
            *MEMORY_ROUTES,
            *CONTEXT_ROUTES,
            *RECEIPT_ROUTES,
            *POLICY_ROUTES,
            *SESSION_ROUTES,
            CONSOLE,
            *COMPILE_ROUTES,
            metrics_route,
            *([mcp.mcp_route] if mcp is not None else []),
        ],
        middleware=[metrics.middleware],
        before_send=[metrics.unmatched],
        after_request=observe_disclosure,
        after_exception=[metrics.failed],
        dependencies={"runtime": Provide(_runtime, sync_to_thread=False)},
        before_request=_refuse_ambiguous_requests,
        exception_handlers=EXCEPTION_HANDLERS,
        lifespan=[lifespan],
        # The process configures logging (`ctxgw serve`: `configure_logging`), not the app:
        # Litestar's default would hand the root logger an INFO handler of its own.
        logging_config=LoggingConfig(configure_root_logger=False),
        request_max_body_size=settings.max_body_bytes,
        openapi_config=OpenAPIConfig(
            title="ctxgw", version=__version__, path="/schema", components=problem_components()
        ),
    )
    # Around Litestar's own handler (routing and its exception handling inside), so that every
    # request is logged and carries X-Request-ID, those no route matched included; a late body
    # fails inside, where the handler reads it, and is answered as a problem (408).
    app.asgi_handler = with_request_log(
        with_body_deadline(app.asgi_handler, settings.body_timeout_seconds)
    )
    return app
