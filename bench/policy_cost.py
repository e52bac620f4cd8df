"""Policy cost (issue 4): evaluation time for 500 candidates × 20 rules, and what enforce and
log_only add to a context assembly against policy off, in one run.

1. The engine alone: 500 candidate memories (real LongMemEval_S sentences, metadata spread so
   that every rule fires somewhere, 5 % carrying personal data) × the 20-rule bundle below
   (require, deny/allow with eq/in/lt/glob/regex/contains_any/older_than, redact, cap, one
   log_only rule), enforce and log_only. Per assembly: ``judge``, then redact what an assembly
   renders (the heading of every memory not denied, the first 6 admitted in full), then the
   evaluation, as ``gateway.usecases.disclosure.pipeline.compose`` does; ``evaluate()`` redacts every text (search, fetch).
   The collector is settled first, as ``ctxgw serve`` settles it (gateway/shell/collector.py), and
   stays so for the rest of the run.
2. The pure core on recorded inputs (``gather`` once per task, then ``assemble`` with no
   verdict = policy off, vs ``compose`` with the 20-rule bundle enforced, in
   log_only, and the shipped default bundle). The gateway has no policy-off switch (no side door),
   so policy off exists only here, in-process.
3. POST /v1/context over HTTP with the shipped default, the 20-rule bundle enforced, and in
   log_only, activated in turn through POST /v1/policies + /activate (admin key), in rounds.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import random
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import psycopg

from bench.corpus import PII_SENTENCE, bulk_load, load_corpus
from bench.harness import (
    OUT_DIR,
    Server,
    embedded_postgres,
    machine,
    markdown_table,
    new_database,
    percentile,
    serve,
    write_result,
)
from bench.load import run_count
from bench.stages import gather, open_runtime, principal_for
from gateway.core.assembly import assemble
from gateway.core.model import ContextRequest
from gateway.core.tokens import load_tokenizer
from gateway.shell.collector import settle_collector
from gateway.usecases.access.keys import issue_key
from gateway.usecases.access.policy import PolicyInForce, context_view, request_stage
from gateway.usecases.disclosure.pipeline import Admitted, compose
from policies import Bundle, Evaluation, evaluate, judge, load_bundle
from receipts.canonical import canonicalize

__all__ = ["BUNDLE", "main"]

NAMESPACE = "policy"
BUNDLE = """\
apiVersion: ctxgw/v1
kind: PolicyBundle
metadata: {name: bench-20-rules, revision: "2026-11-30.1"}
spec:
  mode: enforce
  combining: deny-overrides
  default_decision: allow
  rules:
    - {id: need-purpose, stage: request, effect: require, reason: r, when: {field: request.purpose, op: exists}}
    - {id: need-tenant, stage: request, effect: require, reason: r, when: {field: request.tenant, op: exists}}
    - {id: secrets, effect: deny, reason: r, when: {field: memory.labels, op: contains_any, value: [secret, credentials]}}
    - {id: low-confidence, effect: deny, reason: r, when: {field: memory.confidence, op: lt, value: 0.1}}
    - id: stale-working
      effect: deny
      reason: r
      when: {all: [{field: memory.memory_type, op: eq, value: working}, {field: memory.created_at, op: older_than, value: 240d}]}
    - {id: heading-password, effect: deny, reason: r, when: {field: memory.heading, op: regex, value: "(?i)password|do not share"}}
    - {id: content-ssn, effect: deny, reason: r, when: {field: memory.content, op: regex, value: "(?i)social security number"}}
    - id: vault
      effect: deny
      reason: r
      when: {all: [{field: memory.source_ref, op: exists}, {field: memory.source_ref, op: glob, value: "vault://*"}]}
    - id: restricted
      effect: deny
      reason: r
      when: {all: [{field: memory.labels, op: contains, value: restricted}, {field: request.role, op: not_in, value: [admin]}]}
    - {id: hr-legal, effect: deny, reason: r, when: {field: memory.namespace, op: in, value: [hr, legal]}}
    - id: untrusted-agent
      effect: deny
      reason: r
      when: {all: [{field: request.agent_id, op: eq, value: untrusted}, {field: memory.namespace, op: ne, value: public}]}
    - {id: public, effect: allow, reason: r, when: {field: memory.labels, op: contains_any, value: [public]}}
    - {id: redact-pii, stage: transform, effect: redact, detectors: [email, phone, card], reason: r, when: {field: memory.labels, op: contains_any, value: [pii]}}
    - {id: redact-tokens, stage: transform, effect: redact, detectors: [api_token], reason: r}
    - {id: preview-email, stage: transform, effect: redact, mode: log_only, detectors: [email], reason: r}
    - {id: cap-episodic, stage: budget, effect: cap, max_items: 4, reason: r, when: {field: memory.memory_type, op: eq, value: episodic}}
    - {id: cap-working, stage: budget, effect: cap, max_tokens: 600, reason: r, when: {field: memory.memory_type, op: eq, value: working}}
    - {id: cap-unsure, stage: budget, effect: cap, max_items: 2, reason: r, when: {field: memory.confidence, op: lt, value: 0.3}}
    - {id: cap-long, stage: budget, effect: cap, max_items: 3, reason: r, when: {field: memory.tokens, op: gt, value: 240}}
    - {id: cap-procedural, stage: budget, effect: cap, max_items: 5, reason: r, when: {field: memory.memory_type, op: eq, value: procedural}}
"""
REQUEST_VIEW: dict[str, object] = {
    "tenant": "bench",
    "agent_id": "bench",
    "role": "agent",
    "purpose": "support",
    "namespaces": [NAMESPACE],
    "budget_tokens": 4000,
}


def _views(count: int, now: datetime) -> list[dict[str, object]]:
    corpus = load_corpus()
    rng = random.Random(7)
    views: list[dict[str, object]] = []
    for number, (heading, text) in enumerate(corpus.memories(0, count)):
        labels = ["bench"]
        content = text
        if rng.random() < 0.05:
            labels.append("pii")
            content += PII_SENTENCE
        labels += rng.choice([[], [], [], ["secret"], ["public"], ["restricted"]])
        views.append(
            {
                "memory_id": f"m{number:05d}",
                "namespace": rng.choice([NAMESPACE] * 8 + ["hr", "legal"]),
                "memory_type": rng.choice(["semantic", "episodic", "procedural", "working"]),
                "heading": heading,
                "content": content,
                "confidence": round(rng.random(), 3),
                "labels": labels,
                "source_type": "chat",
                "source_ref": rng.choice([None, "git://repo", "vault://a"]),
                "created_at": now - timedelta(days=rng.randint(0, 330)),
                "expires_at": None,
                "tokens": rng.randint(100, 260),
            }
        )
    return views


def _evaluate_cost(runs: int) -> list[list[object]]:
    now = datetime(2026, 11, 30, tzinfo=UTC)
    bundle = load_bundle(BUNDLE, "bench.yaml").bundle
    assert len(bundle.rules) == 20
    views = _views(500, now)
    settle_collector()  # as `ctxgw serve` does: the loaded corpus out of the collector's way
    rows: list[list[object]] = []
    for mode in ("enforce", "log_only"):
        moded = dataclasses.replace(bundle, mode=mode)
        outcomes = evaluate(moded, REQUEST_VIEW, views, now).outcomes
        headings = [m for m, o in enumerate(outcomes) if o.outcome != "deny"]
        full = [m for m, o in enumerate(outcomes) if o.outcome == "admit"][:6]

        def per_assembly(
            moded: Bundle = moded, headings: list[int] = headings, full: list[int] = full
        ) -> Evaluation:
            judgement = judge(moded, REQUEST_VIEW, views, now)
            judgement.texts(headings=headings, full=full)  # what the layout measures
            return judgement.evaluation(headings=headings, full=full)  # what it showed

        def every_text(moded: Bundle = moded) -> Evaluation:
            return evaluate(moded, REQUEST_VIEW, views, now)

        for how, run in (("per assembly", per_assembly), ("evaluate()", every_text)):
            for _ in range(5):
                evaluation = run()
            times = []
            for _ in range(runs):
                started = time.perf_counter()
                evaluation = run()
                times.append(time.perf_counter() - started)
            counts: dict[str, int] = {}
            for outcome in evaluation.outcomes:
                counts[outcome.outcome] = counts.get(outcome.outcome, 0) + 1
            rows.append(
                [
                    how,
                    mode,
                    len(views),
                    len(bundle.rules),
                    1000 * percentile(times, 50),
                    1000 * percentile(times, 99),
                    len(evaluation.decisions),
                    ", ".join(f"{k} {v}" for k, v in sorted(counts.items())),
                ]
            )
    return rows


def _record_cost(runs: int) -> list[list[object]]:
    """The audit record of one 500-candidate evaluation (the 20 rules, enforce): rendered to JSON
    data, canonicalized for the receipt (profile check + msgspec), and the C JSON encoder writing
    the same bytes, as the baseline."""
    now = datetime(2026, 11, 30, tzinfo=UTC)
    evaluation = evaluate(
        load_bundle(BUNDLE, "bench.yaml").bundle, REQUEST_VIEW, _views(500, now), now
    )

    def record() -> dict[str, object]:
        return {
            "decisions": [d.to_json() for d in evaluation.decisions],
            "outcomes": [o.to_json() for o in evaluation.outcomes],
        }

    data = record()
    size = len(canonicalize(data))
    steps: dict[str, Callable[[], object]] = {
        "to_json": record,
        "canonicalize (receipts)": lambda: canonicalize(data),
        "json.dumps, sorted, compact (baseline)": lambda: json.dumps(
            data, ensure_ascii=False, sort_keys=True, separators=(",", ":")
        ).encode("utf-8"),
    }
    rows: list[list[object]] = []
    for name, step in steps.items():
        times = []
        for _ in range(runs):
            started = time.perf_counter()
            step()
            times.append(time.perf_counter() - started)
        rows.append([name, len(evaluation.decisions), size, 1000 * percentile(times, 50)])
    return rows


async def _core_cost(url: str, key: str, queries: tuple[str, ...], runs: int) -> dict[str, Any]:
    loaded = load_bundle(BUNDLE, "bench.yaml")
    now = datetime.now(UTC)
    async with open_runtime(url) as runtime:
        principal = await principal_for(runtime, key)
        registry = runtime.discloser.policies
        shipped = registry.shipped
        policies = {
            "shipped default": PolicyInForce(
                shipped.digest, shipped.bundle.mode, shipped.bundle, False
            ),
            "20 rules, enforce": PolicyInForce(loaded.digest, "enforce", loaded.bundle, True),
            "20 rules, log_only": PolicyInForce(
                loaded.digest,
                "log_only",
                dataclasses.replace(loaded.bundle, mode="log_only"),
                True,
            ),
        }
        recorded = []
        for query in queries[:runs]:
            request = ContextRequest(
                task=query, namespaces=(NAMESPACE,), budget_tokens=4000, top_k=6, purpose="support"
            )
            inputs, _ = await gather(runtime, principal, request, now)
            recorded.append((request, inputs))
        times: dict[str, list[float]] = {"policy off (no verdict)": [], **{k: [] for k in policies}}
        candidates = [len(i.candidates) + len(i.index_entries) for _, i in recorded]
        tokenizer = runtime.discloser.makers.tokenizer
        profile = runtime.discloser.makers.profile
        for _ in range(3):  # rounds, interleaved, so that machine noise hits every variant
            for request, inputs in recorded:
                started = time.perf_counter()
                assemble(
                    request,
                    inputs.candidates,
                    inputs.index_entries,
                    inputs.total_live,
                    profile=profile,
                    tokenizer=load_tokenizer(tokenizer),
                    now=now,
                )
                times["policy off (no verdict)"].append(time.perf_counter() - started)
                for name, policy in policies.items():
                    started = time.perf_counter()
                    view = context_view(principal, request)
                    admitted = Admitted(policy, request_stage(policy, view, now))
                    compose(request, inputs, admitted, runtime.discloser.makers, at=now)
                    times[name].append(time.perf_counter() - started)
    return {"times": times, "candidates_mean": sum(candidates) / len(candidates)}


async def _http_cost(
    server: Server, admin: dict[str, str], bodies: list[dict[str, Any]], n: int, rounds: int
) -> dict[str, list[float]]:
    async with httpx.AsyncClient(base_url=server.base_url, headers=admin, timeout=60) as client:
        active = (await client.get("/v1/policies/active")).json()
        shipped_digest = active["digest"]
        uploaded = await client.post("/v1/policies", content=BUNDLE.encode("utf-8"))
        uploaded.raise_for_status()
        digest = uploaded.json()["digest"]
        phases = [
            ("shipped default", shipped_digest, "enforce"),
            ("20 rules, enforce", digest, "enforce"),
            ("20 rules, log_only", digest, "log_only"),
        ]
        times: dict[str, list[float]] = {name: [] for name, _, _ in phases}
        for _ in range(rounds):
            for name, chosen, mode in phases:
                response = await client.post(f"/v1/policies/{chosen}/activate", json={"mode": mode})
                response.raise_for_status()
                found = await run_count(server, "/v1/context", bodies, concurrency=1, count=n)
                times[name].extend(found.seconds)
    return times


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench policy", description=__doc__)
    parser.add_argument("--memories", type=int, default=10000)
    parser.add_argument("--eval-runs", type=int, default=300)
    parser.add_argument("--core-tasks", type=int, default=58)
    parser.add_argument("--http-requests", type=int, default=40, help="per phase and round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    if args.quick:
        args.memories, args.eval_runs, args.core_tasks, args.http_requests, args.rounds = (
            1000,
            30,
            10,
            10,
            1,
        )
    eval_rows = _evaluate_cost(args.eval_runs)
    print("evaluate:", eval_rows, flush=True)
    record_rows = _record_cost(max(20, args.eval_runs // 3))
    print("record:", record_rows, flush=True)
    corpus = load_corpus()
    queries = corpus.queries
    with embedded_postgres() as pg:
        db = new_database(pg, "bench_policy")
        bulk_load(
            db.url,
            corpus,
            tenants=[(db.tenant_id, db.key_id)],
            namespace=NAMESPACE,
            start=0,
            stop=args.memories,
            vary=True,
        )
        with psycopg.connect(db.url, autocommit=True) as conn:
            admin = issue_key(conn, tenant_id=db.tenant_id, role="admin", namespaces=["*"])
        core = asyncio.run(_core_cost(db.app_url, db.key, queries, args.core_tasks))
        bodies = [
            {"task": q, "namespaces": [NAMESPACE], "budget_tokens": 4000, "purpose": "support"}
            for q in queries
        ]
        with serve(db) as server:
            asyncio.run(run_count(server, "/v1/context", bodies, concurrency=2, count=10))
            http = asyncio.run(
                _http_cost(
                    server,
                    {"Authorization": f"Bearer {admin.key}"},
                    bodies,
                    args.http_requests,
                    args.rounds,
                )
            )
        info = machine(pg)
    off = percentile(core["times"]["policy off (no verdict)"], 50)
    core_rows = [
        [
            name,
            len(values),
            1000 * percentile(values, 50),
            1000 * percentile(values, 99),
            f"{100 * (percentile(values, 50) - off) / off:+.0f}%",
        ]
        for name, values in core["times"].items()
    ]
    base = percentile(http["shipped default"], 50)
    http_rows = [
        [
            name,
            len(values),
            1000 * percentile(values, 50),
            1000 * percentile(values, 99),
            f"{100 * (percentile(values, 50) - base) / base:+.0f}%",
        ]
        for name, values in http.items()
    ]
    eval_table = markdown_table(
        ["engine", "mode", "memories", "rules", "p50 ms", "p99 ms", "decisions", "outcomes"],
        eval_rows,
    )
    core_table = markdown_table(["pure core", "n", "p50 ms", "p99 ms", "vs policy off"], core_rows)
    http_table = markdown_table(
        ["POST /v1/context, c=1", "n", "p50 ms", "p99 ms", "vs shipped default"], http_rows
    )
    result = {
        "benchmark": "policy",
        "command": "python -m bench policy " + " ".join(argv),
        "machine": info,
        "memories": args.memories,
        "evaluate": eval_rows,
        "record": record_rows,
        "core_candidates_mean": core["candidates_mean"],
        "core": core_rows,
        "http": http_rows,
    }
    path = write_result("policy", result)
    print("\nthe policy engine, 500 candidates × 20 rules\n")
    print(eval_table)
    print("\nits audit record (the policy member of the receipt)\n")
    print(markdown_table(["step", "decisions", "canonical bytes", "p50 ms"], record_rows))
    print(
        f"\npure core on recorded inputs ({args.memories:,} memories, "
        f"{core['candidates_mean']:.0f} candidates + index entries per assembly on average)\n"
    )
    print(core_table)
    print("\nover HTTP, policy activated in turn, interleaved rounds\n")
    print(http_table)
    print(f"\nwritten to {path.relative_to(OUT_DIR.parent.parent)}")
    return 0
