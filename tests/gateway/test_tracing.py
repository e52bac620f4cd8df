"""OpenTelemetry traces (gateway.http.tracing), read back with the SDK's in-memory exporter:
one span per request, a child of the caller's `traceparent`, with the policy stages, recall,
assembly and the receipt write inside it, labelled by receipt id, tenant and kind, and no
memory text anywhere; the exporters chosen by the standard OTEL_* variables."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any, ClassVar

import pytest
from litestar.testing import TestClient
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from gateway.http.app import create_app
from gateway.http.tracing import (
    TracingConfigError,
    exporters_from_environment,
    provider_from_environment,
)
from gateway.shell.settings import Settings
from tests.conftest import Key

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_ID = "00f067aa0ba902b7"
SECRET = "the vault combination is 7-3-9-SECRETWORD"  # noqa: S105  a test memory
TASK = "open the vault TASKWORD"
STAGES = [
    "ctxgw.policy.request",
    "ctxgw.recall",
    "ctxgw.policy.memories",
    "ctxgw.assembly",
    "ctxgw.receipt.write",
]


@pytest.fixture
def exported() -> InMemorySpanExporter:
    return InMemorySpanExporter()


@pytest.fixture
def traced(settings: Settings, exported: InMemorySpanExporter) -> Iterator[TestClient[Any]]:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exported))
    with TestClient(app=create_app(settings, tracer_provider=provider)) as client:
        yield client
    provider.shutdown()


def _by_name(spans: tuple[ReadableSpan, ...]) -> dict[str, ReadableSpan]:
    return {span.name: span for span in spans}


def test_a_context_request_is_traced_through_its_stages(
    traced: TestClient[Any], exported: InMemorySpanExporter, agent: Key
) -> None:
    memory = {"namespace": "ops", "heading": "Vault", "content": SECRET}
    assert traced.post("/v1/memories", json=memory, headers=agent.headers).status_code == 201
    exported.clear()
    headers = {**agent.headers, "traceparent": f"00-{TRACE_ID}-{PARENT_ID}-01"}
    answered = traced.post("/v1/context", json={"task": TASK}, headers=headers)
    assert answered.status_code == 200 and SECRET in answered.json()["bundle"]
    receipt_id = answered.json()["receipt_id"]

    spans = exported.get_finished_spans()
    named = _by_name(spans)
    request = named["POST /v1/context"]
    # The caller's trace goes on: same trace id, the caller's span as parent.
    assert f"{request.context.trace_id:032x}" == TRACE_ID
    assert request.parent is not None and f"{request.parent.span_id:016x}" == PARENT_ID
    assert request.kind == SpanKind.SERVER
    assert request.attributes is not None
    assert request.attributes["http.route"] == "/v1/context"
    assert request.attributes["http.response.status_code"] == 200
    assert request.attributes["ctxgw.receipt_id"] == receipt_id
    assert request.attributes["ctxgw.tenant"] == agent.tenant_id
    assert request.attributes["ctxgw.kind"] == "context"
    # Every stage, in order, a child of the request's span (the memory stage within assembly).
    started = sorted((s for s in spans if s.name in STAGES), key=lambda s: s.start_time or 0)
    assert [s.name for s in started] == [
        "ctxgw.policy.request",
        "ctxgw.recall",
        "ctxgw.assembly",
        "ctxgw.policy.memories",
        "ctxgw.receipt.write",
    ]
    for stage in started:
        assert stage.context.trace_id == request.context.trace_id
        expected = "ctxgw.assembly" if stage.name == "ctxgw.policy.memories" else request.name
        assert stage.parent is not None
        assert stage.parent.span_id == named[expected].context.span_id, stage.name
    write = named["ctxgw.receipt.write"].attributes
    assert write is not None
    assert write["ctxgw.receipt_id"] == receipt_id and write["ctxgw.kind"] == "context"
    assert write["ctxgw.tenant"] == agent.tenant_id
    recall = named["ctxgw.recall"].attributes
    assert recall is not None and recall["ctxgw.candidates"] == 1
    # No memory text, no task, no key: in no name and no attribute of any span.
    said = " ".join(
        [s.name for s in spans] + [str(v) for s in spans for v in (s.attributes or {}).values()]
    )
    for private in ("SECRETWORD", "TASKWORD", agent.key):
        assert private not in said


def test_each_disclosure_names_its_kind_and_a_refusal_too(
    traced: TestClient[Any], exported: InMemorySpanExporter, agent: Key
) -> None:
    assert traced.post("/v1/search", json={"query": "vault"}, headers=agent.headers).is_success
    named = _by_name(exported.get_finished_spans())
    assert named["ctxgw.receipt.write"].attributes == {
        "ctxgw.receipt_id": named["POST /v1/search"].attributes["ctxgw.receipt_id"],  # type: ignore[index]
        "ctxgw.tenant": agent.tenant_id,
        "ctxgw.kind": "search",
    }
    exported.clear()
    # No key: the request's span, answered 401, and no stage ran.
    assert traced.post("/v1/context", json={"task": "x"}).status_code == 401
    [span] = exported.get_finished_spans()
    assert span.name == "POST /v1/context"
    assert span.attributes is not None and span.attributes["http.response.status_code"] == 401
    exported.clear()
    assert traced.get("/no/such/route").status_code == 404
    assert [s.name for s in exported.get_finished_spans()] == ["GET unmatched"]


def test_without_a_provider_nothing_is_traced(
    settings: Settings, agent: Key, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)
    with TestClient(app=create_app(settings)) as client:
        answered = client.post("/v1/context", json={"task": TASK}, headers=agent.headers)
    assert answered.status_code == 200


def test_exporters_are_chosen_by_the_standard_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    def chosen(**environ: str) -> list[type[Any]]:
        return [type(e) for e in exporters_from_environment(environ)]

    assert chosen() == []  # nothing asked for: no traces
    assert chosen(OTEL_TRACES_EXPORTER="none") == []
    assert chosen(OTEL_SDK_DISABLED="true", OTEL_TRACES_EXPORTER="console") == []
    assert chosen(OTEL_TRACES_EXPORTER="console") == [ConsoleSpanExporter]
    assert chosen(OTEL_TRACES_EXPORTER="otlp,console") == [OTLPSpanExporter, ConsoleSpanExporter]
    assert chosen(OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:9") == [OTLPSpanExporter]
    assert chosen(OTEL_EXPORTER_OTLP_TRACES_ENDPOINT="http://127.0.0.1:9") == [OTLPSpanExporter]
    with pytest.raises(TracingConfigError, match="zipkin"):
        exporters_from_environment({"OTEL_TRACES_EXPORTER": "zipkin"})
    assert provider_from_environment({}) is None

    monkeypatch.delenv("OTEL_SERVICE_NAME", raising=False)
    monkeypatch.delenv("OTEL_RESOURCE_ATTRIBUTES", raising=False)
    provider = provider_from_environment({"OTEL_TRACES_EXPORTER": "console"})
    assert provider is not None
    assert provider.resource.attributes["service.name"] == "ctxgw"
    provider.shutdown()
    monkeypatch.setenv("OTEL_SERVICE_NAME", "gateway-eu")
    provider = provider_from_environment({"OTEL_TRACES_EXPORTER": "console"})
    assert provider is not None
    assert provider.resource.attributes["service.name"] == "gateway-eu"
    provider.shutdown()


class _Collector(BaseHTTPRequestHandler):
    """An OTLP/HTTP receiver: keeps the span names of every export posted to /v1/traces."""

    names: ClassVar[list[str]] = []

    def do_POST(self) -> None:
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceRequest,
        )

        body = self.rfile.read(int(self.headers["Content-Length"]))
        exported = ExportTraceServiceRequest.FromString(body)
        assert self.path == "/v1/traces"
        self.names.extend(
            span.name
            for resource in exported.resource_spans
            for scope in resource.scope_spans
            for span in scope.spans
        )
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


def test_the_app_exports_over_otlp_where_the_variables_say(
    settings: Settings, agent: Key, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only OTEL_EXPORTER_OTLP_ENDPOINT set: the app makes its own provider, exports OTLP over
    HTTP there, and flushes what is left when it stops."""
    collector = HTTPServer(("127.0.0.1", 0), _Collector)
    thread = threading.Thread(target=collector.serve_forever, daemon=True)
    thread.start()
    try:
        monkeypatch.delenv("OTEL_TRACES_EXPORTER", raising=False)
        monkeypatch.setenv(
            "OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{collector.server_port}"
        )
        with TestClient(app=create_app(settings)) as client:
            answered = client.post("/v1/search", json={"query": "x"}, headers=agent.headers)
            assert answered.is_success
    finally:
        collector.shutdown()
        collector.server_close()
        thread.join(timeout=10)
    assert "POST /v1/search" in _Collector.names and "ctxgw.receipt.write" in _Collector.names
