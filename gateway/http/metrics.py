"""Prometheus metrics (ARCHITECTURE §14): what the gateway does, for an operator to watch.

Three points of observation, all at the edge: the request log's wrapper, which sees every request
(`gateway.http.request_log`), hands each one answered to `Metrics.served` (route template,
method, status, duration); an `after_request` hook (`observe_disclosure`) reads the typed body of
every disclosure (tokens, utilization, exclusions by reason, policy decisions by rule, the
receipt written); an `after_exception` hook counts receipts that failed to write. Values read from the
database at scrape time say how far checkpoints trail the logs and how compilation keeps up
(jobs by status, the oldest open one's wait, stalled jobs, facts written): one value for the
whole fleet, whichever worker or replica is scraped. Labels are bounded: route templates, closed sets
of reasons and effects, and the rule ids of the operator's own policy bundles; never an id, a
tenant or any text.

Beside them, the usual collectors of a Python service: `process_*` (CPU, memory, file
descriptors), `python_info` and `python_gc_*`, and `ctxgw_build_info` (the version serving, as a
label of a constant 1). No `*_created` series: the time a counter was created says nothing an
operator needs, and doubles the series (prometheus-client's `disable_created_metrics`).

Under `ctxgw serve --workers N` each worker writes its values to files under
`PROMETHEUS_MULTIPROC_DIR` (set by the CLI before the workers start) and a scrape of any worker
sums them all (prometheus-client's multiprocess mode); one process keeps them in its registry.
In multiprocess mode `process_*` and `python_gc_*` are left out: they would describe only the
worker that happened to answer the scrape, not the gateway.
Who may scrape is `GATEWAY_METRICS_ALLOW` (networks; default loopback only).
"""

from __future__ import annotations

import collections
import ipaddress
import os
import platform
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from litestar import Request, Response, get
from litestar.types import Scope
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    GC_COLLECTOR,
    PLATFORM_COLLECTOR,
    PROCESS_COLLECTOR,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
    generate_latest,
    multiprocess,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from gateway import __version__
from gateway.domain.errors import ForbiddenError
from gateway.http.auth import RuntimeDep
from gateway.http.openapi import OPERATIONS, text_response
from gateway.responses.disclosures import (
    ContextBundle,
    Excluded,
    FetchedMemories,
    PolicyReport,
    SearchResults,
    Timeline,
)
from gateway.shell.settings import Network
from gateway.usecases.operations.observation import LedgerReadings, observe_ledger, pool_usage
from gateway.usecases.receiptlog.kinds import CONTEXT, FETCH, SEARCH, TIMELINE

__all__ = ["Metrics", "metrics_route", "observe_disclosure"]

MULTIPROCESS_DIR = "PROMETHEUS_MULTIPROC_DIR"
# The disclosures whose receipts and exclusions are counted, labelled by their kind.
_DISCLOSURES: dict[type[Any], str] = {
    k.response: k.name for k in (CONTEXT, SEARCH, TIMELINE, FETCH) if k.response is not None
}
# Context budgets run 1..128000 tokens (ARCHITECTURE §5): roughly doubling buckets over it.
_TOKEN_BUCKETS = (100, 250, 500, 1000, 2000, 4000, 8000, 16000, 32000, 64000, 128000)
_RATIO_BUCKETS = (0.5, 0.7, 0.8, 0.9, 0.95, 0.98, 0.99, 1.0)


# The metrics of the app serving the current request (`Metrics.serving`). Litestar memoizes a
# route handler's `after_request` hook the first time the handler answers, in whichever app that
# was (HTTPRouteHandler.get_response_handler), and the handlers are module-level objects that
# every app shares: a hook bound to one app's `Metrics` would go on feeding that one. The hook is
# therefore one module-level function that finds the right `Metrics` here.
_SERVING: ContextVar[Metrics | None] = ContextVar("ctxgw_serving_metrics", default=None)


async def observe_disclosure(response: Response[Any]) -> Response[Any]:
    """`after_request`: hands a disclosure's typed body to the serving app's metrics."""
    metrics = _SERVING.get()
    if metrics is not None:
        metrics.disclosed(response.content)
    return response


def multiprocess_mode() -> bool:
    return bool(os.environ.get(MULTIPROCESS_DIR))


class Metrics:
    """The metric objects of one app. In multiprocess mode they register nowhere (the values
    live in files, collected at scrape); otherwise in this app's own registry, so that several
    apps in one process (tests) never share or clash."""

    def __init__(self) -> None:
        # A process-wide switch of prometheus-client, read when values are collected.
        disable_created_metrics()  # type: ignore[no-untyped-call]
        self.registry = CollectorRegistry()
        target = None if multiprocess_mode() else self.registry
        self.requests = Counter(
            "ctxgw_http_requests_total",
            "HTTP requests by route template, method and status",
            ["route", "method", "status"],
            registry=target,
        )
        self.latency = Histogram(
            "ctxgw_http_request_duration_seconds",
            "Time from request to the end of the response, by route template and method",
            ["route", "method"],
            registry=target,
        )
        self.tokens = Histogram(
            "ctxgw_context_tokens",
            "Tokens of each context bundle delivered (tokens_used)",
            buckets=_TOKEN_BUCKETS,
            registry=target,
        )
        self.utilization = Histogram(
            "ctxgw_context_utilization_ratio",
            "Share of the budget each context bundle used",
            buckets=_RATIO_BUCKETS,
            registry=target,
        )
        self.exclusions = Counter(
            "ctxgw_exclusions_total",
            "Candidates left out of a disclosure's response, by disclosure and reason",
            ["disclosure", "reason"],
            registry=target,
        )
        self.decisions = Counter(
            "ctxgw_policy_decisions_total",
            "Policy rules that fired, by rule id, effect and outcome",
            ["rule", "effect", "outcome"],
            registry=target,
        )
        self.receipts_written = Counter(
            "ctxgw_receipts_written_total",
            "Receipts written for disclosures answered, by disclosure",
            ["disclosure"],
            registry=target,
        )
        self.receipts_failed = Counter(
            "ctxgw_receipts_failed_total",
            "Disclosures refused because their receipt could not be written (fail closed)",
            registry=target,
        )
        self.pool_in_use = Gauge(
            "ctxgw_pool_connections_in_use",
            "Database connections lent out, summed over live workers",
            multiprocess_mode="livesum",
            registry=target,
        )
        self.pool_waiting = Gauge(
            "ctxgw_pool_requests_waiting",
            "Requests waiting for a database connection, summed over live workers",
            multiprocess_mode="livesum",
            registry=target,
        )
        # A tenant's log is its serial section: held seconds over receipts sealed is the time
        # each receipt keeps the others of its tenant waiting (`python -m bench log`).
        self.log_held = Counter(
            "ctxgw_receipt_log_held_seconds_total",
            "Time receipt writers held tenants' logs locked, by the database's clock",
            registry=target,
        )
        self.log_sealed = Counter(
            "ctxgw_receipts_sealed_total",
            "Receipts placed in a tenant's log by the receipt writers",
            registry=target,
        )
        self._log_seen = (0.0, 0)  # this process's writer's totals at the last request

    @contextmanager
    def serving(self) -> Iterator[None]:
        """Around one request of this app: the disclosure hook (`observe_disclosure`) feeds
        these metrics."""
        serving = _SERVING.set(self)
        try:
            yield
        finally:
            _SERVING.reset(serving)

    def served(self, scope: Scope, route: str, status: int, seconds: float) -> None:
        """A request answered, routed or not (`route` then `unmatched`): its count and latency,
        and the pool and the receipt writer as they stand after it."""
        method = str(scope.get("method", ""))
        self.requests.labels(route, method, str(status)).inc()
        self.latency.labels(route, method).observe(seconds)
        app = scope.get("app")
        runtime = getattr(app.state, "runtime", None) if app is not None else None
        if runtime is not None:
            usage = pool_usage(runtime.pool)
            self.pool_in_use.set(usage.in_use)
            self.pool_waiting.set(usage.waiting)
            log = runtime.discloser.recorder.log
            self._follow_log(log.held_seconds, log.sealed)

    def _follow_log(self, held_seconds: float, sealed: int) -> None:
        """Add what this process's receipt writer did since the last request."""
        seen_held, seen_sealed = self._log_seen
        if held_seconds > seen_held:
            self.log_held.inc(held_seconds - seen_held)
        if sealed > seen_sealed:
            self.log_sealed.inc(sealed - seen_sealed)
        self._log_seen = (held_seconds, sealed)

    def disclosed(self, body: object) -> None:
        """What a disclosure's typed body says it delivered (any other body: nothing)."""
        if not isinstance(body, ContextBundle | SearchResults | Timeline | FetchedMemories):
            return
        disclosure = _DISCLOSURES[type(body)]
        self.receipts_written.labels(disclosure).inc()
        if isinstance(body, ContextBundle):
            self.tokens.observe(body.tokens_used)
            self.utilization.observe(body.utilization)
        left_out: Sequence[Excluded] = (
            body.withheld if isinstance(body, FetchedMemories) else body.excluded
        )
        # Counted first, one increment per label set: a bundle leaves out dozens of candidates
        # for a handful of reasons, and each `labels()` lookup costs more than the counting.
        for reason, count in collections.Counter(e.reason for e in left_out).items():
            self.exclusions.labels(disclosure, reason).inc(count)
        self._judged(body.policy)

    def _judged(self, policy: PolicyReport) -> None:
        fired = collections.Counter((d.rule_id, d.effect, d.outcome) for d in policy.decisions)
        for (rule_id, effect, outcome), count in fired.items():
            self.decisions.labels(rule_id, effect, outcome).inc(count)

    async def failed(self, exc: Exception, scope: Scope) -> None:
        """`after_exception`: a disclosure whose receipt could not be written."""
        if getattr(exc, "code", None) == "receipt_unavailable":
            self.receipts_failed.inc()

    def exposition(self, readings: LedgerReadings) -> bytes:
        scraped = CollectorRegistry()
        if multiprocess_mode():
            multiprocess.MultiProcessCollector(scraped)  # type: ignore[no-untyped-call]
            values = generate_latest(scraped)
        else:
            values = generate_latest(self.registry)
        read_now = CollectorRegistry()
        read_now.register(_Ledger(readings))
        read_now.register(_Build())
        # The library's own collectors, which read this process when collected; they live in its
        # default registry, which is not served, and are lent to this scrape's.
        for collector in (PLATFORM_COLLECTOR, *_PER_PROCESS_COLLECTORS[multiprocess_mode()]):
            read_now.register(collector)
        return values + generate_latest(read_now)


_PER_PROCESS_COLLECTORS: dict[bool, tuple[Collector, ...]] = {
    False: (PROCESS_COLLECTOR, GC_COLLECTOR),
    True: (),  # one worker's process is not the gateway's
}


class _Build(Collector):
    """`ctxgw_build_info`: which gateway and Python serve, as labels of a constant 1."""

    def collect(self) -> Iterator[Metric]:
        info = GaugeMetricFamily(
            "ctxgw_build_info",
            "The gateway serving: its version and the Python running it",
            labels=["version", "python_version", "python_implementation"],
        )
        info.add_metric(
            [__version__, platform.python_version(), platform.python_implementation()], 1
        )
        yield info


class _Ledger(Collector):
    """The values read from the database at this scrape (`observe_ledger`)."""

    def __init__(self, readings: LedgerReadings) -> None:
        self._readings = readings

    def collect(self) -> Iterator[Metric]:
        read = self._readings
        yield GaugeMetricFamily(
            "ctxgw_checkpoint_lag_receipts",
            "Receipts not yet in a signed checkpoint, over all tenants",
            value=read.checkpoint_lag_receipts,
        )
        yield GaugeMetricFamily(
            "ctxgw_checkpoint_lag_seconds",
            "Age of the oldest receipt not yet in a signed checkpoint",
            value=read.checkpoint_lag_seconds,
        )
        jobs = GaugeMetricFamily(
            "ctxgw_compile_jobs", "Compile jobs of all tenants by status", labels=["status"]
        )
        for status, count in read.compile.by_status.items():
            jobs.add_metric([status], count)
        yield jobs
        yield GaugeMetricFamily(
            "ctxgw_compile_oldest_open_seconds",
            "How long the oldest pending or running compile job has been waiting",
            value=read.compile.oldest_open_seconds,
        )
        yield GaugeMetricFamily(
            "ctxgw_compile_stalled_jobs",
            "Running compile jobs whose heartbeat stopped (a worker will reclaim them)",
            value=read.compile.stalled,
        )
        written = CounterMetricFamily(
            "ctxgw_compile_facts",
            "Facts compile jobs wrote, and what became of older ones, by outcome",
            labels=["outcome"],
        )
        for outcome, count in read.compile.written.items():
            written.add_metric([outcome], count)
        yield written


def _allowed(client: str | None, networks: Sequence[Network]) -> bool:
    try:
        address = ipaddress.ip_address(client or "")
    except ValueError:
        return False  # not an IP at all (a test transport, a Unix socket): not known to be near
    return any(address in network for network in networks)


@get(
    "/metrics",
    summary="Prometheus metrics (from the networks in GATEWAY_METRICS_ALLOW)",
    media_type=CONTENT_TYPE_LATEST,
    operation_class=text_response(
        "text/plain", "the Prometheus text exposition format", keyed=False, also=(403, 503)
    ),
    operation_id="getMetrics",
    tags=[OPERATIONS],
)
async def metrics_route(request: Request[Any, Any, Any], runtime: RuntimeDep) -> Response[bytes]:
    client = request.client.host if request.client else None
    if not _allowed(client, runtime.settings.metrics_allow):
        raise ForbiddenError("metrics are served to the networks in GATEWAY_METRICS_ALLOW only")
    metrics: Metrics = request.app.state.metrics
    readings = await observe_ledger(
        runtime.pool, runtime.clock(), runtime.settings.compile_reclaim_seconds
    )
    body = metrics.exposition(readings)
    return Response(body, media_type=CONTENT_TYPE_LATEST)
