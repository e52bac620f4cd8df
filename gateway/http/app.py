"""The application factory: routes, problem mapping, lifespan-owned runtime, OpenAPI at /schema."""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from types import ModuleType
from typing import TYPE_CHECKING, Any

from litestar import Litestar, Request, get
from litestar.datastructures import State
from litestar.di import Provide
from litestar.logging.config import LoggingConfig

from gateway import __version__
from gateway.domain.errors import FieldError, InvalidRequestError, UnauthenticatedError
from gateway.http.api_docs import SwaggerPage, swagger_asset
from gateway.http.auth import RuntimeDep
from gateway.http.compiling import ROUTES as COMPILE_ROUTES
from gateway.http.console import CONSOLE
from gateway.http.context import ROUTES as CONTEXT_ROUTES
from gateway.http.memories import ROUTES as MEMORY_ROUTES
from gateway.http.metrics import Metrics, metrics_route, multiprocess_mode, observe_disclosure
from gateway.http.openapi import (
    OPERATIONS,
    PROBLEM_SCHEMA,
    TAGS,
    DocumentConfig,
    components,
    documented,
)
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

if TYPE_CHECKING:  # the `otel` extra
    from opentelemetry.trace import TracerProvider

__all__ = ["create_app"]

_log = logging.getLogger(__name__)
KEYED_PREFIX = "/v1/"


@get(
    "/healthz",
    summary="The process is up",
    operation_class=documented(keyed=False),
    responses=PROBLEM_SCHEMA,
    operation_id="getHealth",
    tags=[OPERATIONS],
)
async def healthz() -> Health:
    return Health(status="ok", version=__version__)


@get(
    "/readyz",
    summary="The database answers",
    operation_class=documented(keyed=False, also=(503,)),
    operation_id="getReadiness",
    tags=[OPERATIONS],
)
async def readyz(runtime: RuntimeDep) -> Readiness:
    return await readiness(runtime.pool)


async def _refuse_ambiguous_requests(request: Request[Any, Any, Any]) -> None:
    """Before any route runs. Two `Authorization` headers: which one counts would depend on who
    reads the request (a proxy, the gateway), so neither does (401). None on a `/v1` route, all of
    which take a key (`security` in the document): 401 before the body is read, so that a caller
    without a key learns nothing of what the route would accept. A NUL in a path parameter: no
    identifier contains one, and PostgreSQL cannot even compare text holding one."""
    said = request.headers.getall("authorization", [])
    # Repeated fields may arrive combined with commas (RFC 9110 §5.3); no key holds a comma.
    if len(said) > 1 or any("," in value for value in said):
        raise UnauthenticatedError(
            "send exactly one Authorization header", code="ambiguous_credentials"
        )
    if not said and request.scope["path"].startswith(KEYED_PREFIX):
        # The code and words of the key's own check (gateway.usecases.access.keys).
        raise UnauthenticatedError(
            "missing Authorization: Bearer <key>", code="missing_credentials"
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


def _tracing_support() -> ModuleType | None:
    """`gateway.http.tracing` when the `otel` extra is installed; without it, no traces."""
    try:
        from gateway.http import tracing
    except ModuleNotFoundError as exc:
        if not (exc.name or "").startswith("opentelemetry"):
            raise
        if any(name.startswith("OTEL_") for name in os.environ):
            _log.warning("OTEL_* variables are set but the otel extra is not installed: no traces")
        return None
    return tracing


def create_app(
    settings: Settings,
    *,
    runtime: Runtime | None = None,
    tracer_provider: TracerProvider | None = None,
) -> Litestar:
    """Build the app. With `runtime` given (tests, benchmarks) the caller owns its lifetime; with
    `tracer_provider` given, the caller owns that too, else the `OTEL_*` variables may ask for
    one (`gateway.http.tracing`), which the app then shuts down (its spans flushed) with itself."""

    metrics = Metrics()
    mcp = _mcp_support()
    tracing = _tracing_support() if tracer_provider is None else None
    owned = tracing.provider_from_environment(os.environ) if tracing is not None else None

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
                if owned is not None:
                    stack.callback(owned.shutdown)
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
            swagger_asset,
            *([mcp.mcp_route] if mcp is not None else []),
        ],
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
        openapi_config=DocumentConfig(
            title="ctxgw",
            version=__version__,
            path="/schema",
            components=components(),
            tags=TAGS,
            render_plugins=[SwaggerPage()],
        ),
    )
    # Around Litestar's own handler (routing and its exception handling inside), so that every
    # request is logged, counted and carries X-Request-ID, those no route matched included; a
    # late body fails inside, where the handler reads it, and is answered as a problem (408).
    handler = with_request_log(
        with_body_deadline(app.asgi_handler, settings.body_timeout_seconds), metrics
    )
    traced_by = tracer_provider or owned
    if traced_by is not None:
        # Outermost: the request's span covers all of it, and is the parent of its stages.
        from gateway.http.tracing import with_tracing

        handler = with_tracing(handler, traced_by)
    app.asgi_handler = handler
    return app
