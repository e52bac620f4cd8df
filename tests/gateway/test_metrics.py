"""/metrics: scraped over real HTTP after real requests, every figure checked against the
responses that produced it; loopback only by default."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from litestar.testing import TestClient
from prometheus_client.parser import text_string_to_metric_families

from gateway.client import Client, InvalidRequestError, NewMemory, NewTurn
from gateway.http.app import create_app
from gateway.shell.settings import Settings
from gateway.store.pool import open_pool
from gateway.usecases.operations.observation import CompileJobs, LedgerReadings, observe_ledger
from tests.conftest import Key

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def scrape(base_url: str) -> Samples:
    response = httpx.get(f"{base_url}/metrics")
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain")
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


def test_metrics_count_what_the_responses_said(served: str, agent: Key) -> None:
    with Client(agent.key, served) as ctxgw:
        written = ctxgw.write_batch(
            [
                NewMemory(namespace="ops", heading=f"Runbook {n}", content=f"step {n}: restart")
                for n in range(8)
            ]
            + [NewMemory(namespace="ops", heading="Contact", content="mail ops@example.com")]
        )
        ids = [str(item.memory_id) for item in written.items]
        bundle = ctxgw.context("restart runbook step", budget_tokens=120, top_k=3)
        hits = ctxgw.search("restart", limit=2)
        ctxgw.delete_memory(ids[0], "obsolete")
        fetched = ctxgw.fetch([ids[0], ids[-1]])
        with pytest.raises(InvalidRequestError):
            ctxgw.write_memory("ops", "", "x")
    assert httpx.get(f"{served}/no/such/route").status_code == 404
    samples = scrape(served)

    def requests(route: str, method: str, status: str) -> float:
        return value(
            samples, "ctxgw_http_requests_total", route=route, method=method, status=status
        )

    assert requests("/v1/context", "POST", "200") == 1
    assert requests("/v1/memories", "POST", "422") == 1
    assert requests("/v1/memories/{memory_id}", "DELETE", "200") == 1
    assert requests("unmatched", "GET", "404") == 1
    latency = "ctxgw_http_request_duration_seconds_count"
    assert value(samples, latency, route="/v1/search", method="POST") == 1

    assert value(samples, "ctxgw_context_tokens_count") == 1
    assert value(samples, "ctxgw_context_tokens_sum") == bundle.tokens_used
    assert value(samples, "ctxgw_context_utilization_ratio_sum") == pytest.approx(
        bundle.utilization
    )
    for disclosure, receipts in {"context": 1, "search": 1, "fetch": 1, "timeline": 0}.items():
        assert value(samples, "ctxgw_receipts_written_total", disclosure=disclosure) == receipts

    reasons = [e.reason for e in bundle.excluded]
    assert reasons  # a tight budget and top_k 3 over nine memories leave some out
    for reason in set(reasons):
        counted = value(samples, "ctxgw_exclusions_total", disclosure="context", reason=reason)
        assert counted == reasons.count(reason)
    assert value(samples, "ctxgw_exclusions_total", disclosure="fetch", reason="deleted") == 1
    assert [w.reason for w in fetched.withheld] == ["deleted"]

    decisions = [*bundle.policy.decisions, *hits.policy.decisions, *fetched.policy.decisions]
    assert decisions  # the shipped default records PII redaction (log_only) on the contact
    for d in decisions:
        labels = {"rule": d.rule_id, "effect": d.effect, "outcome": d.outcome}
        expected = sum(
            (e.rule_id, e.effect, e.outcome) == tuple(labels.values()) for e in decisions
        )
        assert value(samples, "ctxgw_policy_decisions_total", **labels) == expected

    assert value(samples, "ctxgw_checkpoint_lag_receipts") >= 0
    assert ("ctxgw_pool_connections_in_use", frozenset()) in samples
    assert value(samples, "ctxgw_receipts_failed_total") == 0
    # Every disclosure's receipt went through this process's writer, which held the log a
    # moment for each batch.
    assert value(samples, "ctxgw_receipts_sealed_total") >= 3
    assert 0 < value(samples, "ctxgw_receipt_log_held_seconds_total") < 5


def test_a_receipt_that_cannot_be_written_is_counted(
    served: str, agent: Key, database_url: str
) -> None:
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("REVOKE INSERT ON receipts FROM ctxgw_app")
    assert (
        httpx.post(
            f"{served}/v1/context", json={"task": "anything"}, headers=agent.headers
        ).status_code
        == 503
    )
    samples = scrape(served)
    assert value(samples, "ctxgw_receipts_failed_total") == 1
    assert value(samples, "ctxgw_receipts_written_total", disclosure="context") == 0


def test_metrics_are_for_the_allowed_networks_only(settings: Settings) -> None:
    # The test transport's client is not an IP address: not known to be near, so refused.
    with TestClient(app=create_app(settings)) as client:
        response = client.get("/metrics")
    assert response.status_code == 403 and response.json()["code"] == "forbidden"
    nobody = replace(settings, metrics_allow=())
    with TestClient(app=create_app(nobody)) as client:
        assert client.get("/metrics").status_code == 403


def test_metrics_allow_is_read_and_checked() -> None:
    from gateway.shell.settings import SettingsError, load_settings

    read = load_settings({"GATEWAY_METRICS_ALLOW": "10.0.0.0/8, ::1"})
    assert [str(n) for n in read.metrics_allow] == ["10.0.0.0/8", "::1/128"]
    with pytest.raises(SettingsError) as bad:
        load_settings({"GATEWAY_METRICS_ALLOW": "10.0.0.0/8,somewhere"})
    assert "GATEWAY_METRICS_ALLOW" in bad.value.problems


def _job(conn: psycopg.Connection[tuple[object, ...]], tenant: str, n: int, **row: object) -> None:
    columns = {
        "tenant_id": tenant,
        "job_id": f"01JDZ6Q00000000000000000{n:02d}",
        "namespace": "chat",
        "extractor": "rules/x",
        "agent_id": "agent-1",
        "requested_by_key": "k",
        **row,
    }
    names = ", ".join(columns)
    values = ", ".join(["%s"] * len(columns))
    conn.execute(f"INSERT INTO compile_jobs ({names}) VALUES ({values})", list(columns.values()))  # noqa: S608


def test_compile_jobs_of_every_tenant_are_read_at_scrape(
    settings: Settings, database_url: str, app_database_url: str, make_key: Any
) -> None:
    make_key(tenant="acme")
    make_key(tenant="globex")
    now = datetime.now(UTC)
    with psycopg.connect(database_url, autocommit=True) as conn:
        _job(conn, "acme", 1, status="pending", requested_at=now - timedelta(seconds=90))
        # Claimed by a worker that died: its heartbeat stopped ten minutes ago.
        old = now - timedelta(minutes=10)
        _job(conn, "globex", 2, status="running", requested_at=old, heartbeat_at=old)
        _job(conn, "globex", 3, status="running", requested_at=now, heartbeat_at=now)
        for n, (status, created) in enumerate([("completed", 3), ("completed", 4), ("failed", 1)]):
            _job(conn, "acme", 4 + n, status=status, created=created, superseded=1,
                 requested_at=old, finished_at=now)  # fmt: skip

    async def observe() -> LedgerReadings:
        pool = open_pool(app_database_url, settings, size=1)
        await pool.open(wait=True)
        try:
            return await observe_ledger(pool, now, settings.compile_reclaim_seconds)
        finally:
            await pool.close()

    # Read by the least-privileged login, behind the tenant wall: both tenants are counted.
    read = asyncio.run(observe()).compile
    assert read.by_status == {"pending": 1, "running": 2, "completed": 2, "failed": 1}
    assert read.oldest_open_seconds >= 10 * 60  # the stalled running job, waiting longest
    assert read.stalled == 1
    assert read.written == {"created": 8, "superseded": 3, "conflicts": 0, "skipped": 0}


def test_a_compile_is_seen_in_the_metrics(served: str, agent: Key) -> None:
    assert value(scrape(served), "ctxgw_compile_jobs", status="completed") == 0
    with Client(agent.key, served) as ctxgw:
        session = ctxgw.create_session("chat", "plan")
        ctxgw.append_turns(
            session.session_id,
            [NewTurn(role="user", content="We're on the Starter plan, capped at 10 seats.")],
        )
        job = ctxgw.compile(session_id=session.session_id)
    assert job.status == "completed" and job.created >= 1
    samples = scrape(served)
    assert value(samples, "ctxgw_compile_jobs", status="completed") == 1
    assert value(samples, "ctxgw_compile_jobs", status="pending") == 0
    assert value(samples, "ctxgw_compile_facts_total", outcome="created") == job.created
    assert value(samples, "ctxgw_compile_stalled_jobs") == 0


def test_process_platform_and_build_are_exported_and_nothing_created(
    served: str, agent: Key
) -> None:
    from gateway import __version__

    with Client(agent.key, served) as ctxgw:
        ctxgw.write_memory("ops", "Runbook", "restart the worker")
        ctxgw.context("restart", budget_tokens=200)
    response = httpx.get(f"{served}/metrics")
    names = {
        sample.name
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
    }
    # No `_created` series for any counter or histogram (nor for anything else).
    assert not [name for name in names if name.endswith("_created")]
    assert "ctxgw_http_requests_total" in names and "ctxgw_receipts_written_total" in names
    samples = scrape(served)
    assert value(samples, "process_cpu_seconds_total") > 0
    assert value(samples, "process_resident_memory_bytes") > 0
    assert value(samples, "process_open_fds") > 0
    assert any(name.startswith("python_gc_") for name in names)
    [(python, _)] = [(k, v) for k, v in samples.items() if k[0] == "python_info"]
    assert dict(python[1])["implementation"] == "CPython"
    [(build, one)] = [(k, v) for k, v in samples.items() if k[0] == "ctxgw_build_info"]
    labels = dict(build[1])
    assert one == 1 and labels["version"] == __version__
    assert labels["python_version"] == dict(python[1])["version"]


def test_a_worker_in_multiprocess_mode_exports_no_process_of_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under `--workers N` the values come from the workers' files; `process_*` would describe
    only the worker that answered, so it is left out (build and platform are the same in all)."""
    from gateway.http.metrics import Metrics

    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))
    metrics = Metrics()
    readings = LedgerReadings(0, 0.0, CompileJobs({}, 0.0, 0, {}))
    text = metrics.exposition(readings).decode()
    assert "ctxgw_build_info{" in text and "python_info{" in text
    assert "process_cpu_seconds_total" not in text and "_created" not in text
