"""OpenTelemetry traces (the `otel` extra): a span for each request and, inside it, one for each
stage the use cases name (`gateway.usecases.tracing`): the policy's request stage
(`ctxgw.policy.request`) and memory stage (`ctxgw.policy.memories`), recall (`ctxgw.recall`),
assembly (`ctxgw.assembly`) and the receipt write (`ctxgw.receipt.write`).

Attributes are ids, the tenant, the disclosure's kind and counts (`ctxgw.receipt_id`,
`ctxgw.tenant`, `ctxgw.kind`, also copied onto the request's span so that a trace is found by
receipt), with the HTTP semantic conventions on the request's span; never memory text, a task,
a query or a key. An incoming `traceparent` (W3C Trace Context) makes the request's span a child
of the caller's; propagators are the SDK's (`OTEL_PROPAGATORS`, tracecontext and baggage unless
set).

Nothing is traced unless asked for, by the standard variables of the OpenTelemetry SDK:
`OTEL_TRACES_EXPORTER` (`otlp`, `console`, several comma-separated, or `none`) or an OTLP endpoint
(`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`); the exporters read their
own variables (endpoint, headers, timeout), the provider its sampler (`OTEL_TRACES_SAMPLER`) and
resource (`OTEL_SERVICE_NAME`, default `ctxgw`; `OTEL_RESOURCE_ATTRIBUTES`), and
`OTEL_SDK_DISABLED=true` turns it all off. Tests and embedders pass a `TracerProvider` instead.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from importlib.metadata import entry_points

from litestar.enums import ScopeType
from litestar.types import ASGIApp, Message, Receive, Scope, Send
from opentelemetry import propagate
from opentelemetry.sdk.resources import SERVICE_NAME, SERVICE_VERSION, Resource
from opentelemetry.sdk.trace import TracerProvider as SdkTracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter
from opentelemetry.trace import Span as OtelSpan
from opentelemetry.trace import SpanKind, Status, StatusCode, Tracer, TracerProvider

from gateway import __version__
from gateway.http.request_log import route_template
from gateway.usecases import tracing
from gateway.usecases.tracing import KIND, RECEIPT_ID, TENANT, Span, Value

__all__ = [
    "TracingConfigError",
    "exporters_from_environment",
    "provider_from_environment",
    "with_tracing",
]

_log = logging.getLogger(__name__)
_EXPORTERS = "opentelemetry_traces_exporter"  # the SDK's entry-point group for span exporters
# `otlp` is OTLP over HTTP with protobuf here: the exporter the extra installs (and the
# protocol the specification makes the default).
_ALIASES = {"otlp": "otlp_proto_http"}
_LIFTED = frozenset({RECEIPT_ID, TENANT, KIND})


class TracingConfigError(ValueError):
    """An `OTEL_*` variable names an exporter that is not installed."""


def provider_from_environment(environ: Mapping[str, str]) -> SdkTracerProvider | None:
    """The provider the standard `OTEL_*` variables ask for, or None when they ask for none."""
    exporters = exporters_from_environment(environ)
    if not exporters:
        return None
    provider = SdkTracerProvider(resource=_resource())
    for exporter in exporters:
        provider.add_span_processor(BatchSpanProcessor(exporter))
    _log.info("tracing: spans exported by %s", ", ".join(type(e).__name__ for e in exporters))
    return provider


def exporters_from_environment(environ: Mapping[str, str]) -> list[SpanExporter]:
    """The span exporters the `OTEL_*` variables name (none: nothing is traced)."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return []
    said = environ.get("OTEL_TRACES_EXPORTER")
    endpoint = any(
        environ.get(name)
        for name in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    )
    if said is None and not endpoint:
        return []
    names = [n.strip() for n in (said or "otlp").split(",")]
    return [_exporter(name) for name in names if name and name != "none"]


def _exporter(name: str) -> SpanExporter:
    wanted = _ALIASES.get(name, name)
    found = [e for e in entry_points(group=_EXPORTERS) if e.name == wanted]
    if not found:
        installed = sorted(e.name for e in entry_points(group=_EXPORTERS))
        raise TracingConfigError(
            f"OTEL_TRACES_EXPORTER: no span exporter {name!r} is installed (have: {installed})"
        )
    exporter: SpanExporter = found[0].load()()
    return exporter


def _resource() -> Resource:
    # Resource.create reads OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME itself.
    resource = Resource.create({SERVICE_VERSION: __version__})
    if str(resource.attributes.get(SERVICE_NAME, "")).startswith("unknown_service"):
        resource = resource.merge(Resource({SERVICE_NAME: "ctxgw"}))
    return resource


class _Stage:
    """A stage's span; the labels that find a trace by receipt go onto the request's too."""

    def __init__(self, span: OtelSpan, request: OtelSpan) -> None:
        self._span = span
        self._request = request

    def label(self, name: str, value: Value) -> None:
        self._span.set_attribute(name, value)
        if name in _LIFTED:
            self._request.set_attribute(name, value)


class _Stages:
    """The use cases' `Tracer` for one request: stages become children of the current span."""

    def __init__(self, tracer: Tracer, request: OtelSpan) -> None:
        self._tracer = tracer
        self._request = request

    def stage(self, name: str) -> AbstractContextManager[Span]:
        return self._spanning(name)

    @contextmanager
    def _spanning(self, name: str) -> Iterator[Span]:
        with self._tracer.start_as_current_span(name) as span:
            yield _Stage(span, self._request)


def with_tracing(app: ASGIApp, provider: TracerProvider) -> ASGIApp:
    """Around the whole app: one server span per HTTP request, the parent of its stages."""
    tracer = provider.get_tracer("ctxgw", __version__)

    async def traced(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != ScopeType.HTTP:
            await app(scope, receive, send)
            return
        carrier = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        method = scope["method"]
        with tracer.start_as_current_span(
            method,
            context=propagate.extract(carrier),
            kind=SpanKind.SERVER,
            attributes={"http.request.method": method, "url.path": scope["path"]},
        ) as span:

            async def sending(message: Message) -> None:
                if message["type"] == "http.response.start":
                    status = int(message["status"])
                    span.set_attribute("http.response.status_code", status)
                    if status >= 500:
                        span.set_status(Status(StatusCode.ERROR))
                await send(message)

            serving = tracing.TRACER.set(_Stages(tracer, span))
            try:
                await app(scope, receive, sending)
            finally:
                tracing.TRACER.reset(serving)
                route = route_template(scope)
                span.set_attribute("http.route", route)
                span.update_name(f"{method} {route}")

    return traced
