"""``python -m bench <name> [options]``: run one benchmark; ``python -m bench`` lists them."""

from __future__ import annotations

import importlib
import sys

BENCHMARKS = {
    "ingest": ("bench.ingest", "batch ingest throughput over HTTP vs a bare COPY"),
    "mixed": ("bench.mixed", "half writes, half contexts over HTTP: latency, errors, RSS"),
    "quality": (
        "bench.quality",
        "evidence recall on LoCoMo and LongMemEval_S vs baselines, table and chart",
    ),
    "speed": (
        "bench.speed",
        "/v1/context and /v1/search latency at 1k-100k memories vs the SQL floor",
    ),
    "policy": ("bench.policy_cost", "policy evaluation cost and enforce/log_only overhead"),
    "receipts": ("bench.receipt_cost", "receipt overhead, receipts/s, export + offline verify"),
    "log": (
        "bench.receipt_log",
        "the receipt log alone: N processes appending to one tenant and to N, serial section",
    ),
    "index": ("bench.index_fetch", "the index fetch with and without entries' contents, by budget"),
    "proofs": (
        "bench.proofs",
        "inclusion proofs for a filtered export: per call vs one hashed tree",
    ),
    "replay": ("bench.replay", "exact replay of LongMemEval_S context receipts"),
    "roundtrips": ("bench.roundtrips", "database round trips per request, counted on the wire"),
    "defence": (
        "bench.defence",
        "evidence recall with conversations as remembered sessions, which the defence reads",
    ),
    "hops": (
        "bench.hops",
        "calls and data shapes one /v1/context and one session step pass, traced in process",
    ),
    "sessions": (
        "bench.sessions",
        "session contexts over LongMemEval_S (and LoCoMo): tokens per turn, what survives, speed",
    ),
    "tokens": ("bench.tokens", "dump-everything tokens vs the two-tier bundle, utilization"),
    "integration": (
        "bench.integration",
        "MCP get_context (stdio, /mcp) and the client vs raw /v1/context; /metrics cost",
    ),
    "console": (
        "bench.console",
        "console list page at 100k receipts and a 500-candidate receipt page vs the API",
    ),
    "limits": ("bench.limits", "/v1/search with a rate-limited key vs an unlimited one"),
    "bad-input": ("bench.bad_input", "hostile requests over HTTP: tried, and answered 4xx"),
    "faults": (
        "bench.faults",
        "resilience: kill -9 mid-load, PostgreSQL stopped and started, receipt writes revoked",
    ),
    "failover": (
        "bench.failover",
        "primary killed -9 under load, standby promoted: receipts lost, chain, seconds of 503s",
    ),
    "restore": (
        "bench.restore",
        "ctxgw backup and restore: receipts verified, chain continues, lost tail detected",
    ),
    "rls": ("bench.tenant_wall", "row-level security's cost on /v1/context, walled vs open A/B"),
    "knowledge": (
        "bench.knowledge",
        "knowledge updates: current vs stale values in 800-token bundles, raw or compiled",
    ),
    "replacing": (
        "bench.replacing",
        "fit the defence's weighing of a newer turn replacing an older one; held-out sets apart",
    ),
    "introductions": (
        "bench.introductions",
        "identity from self-introductions: each rules version on messages written blind",
    ),
    "census": (
        "bench.extraction_census",
        "what the rules extractor reads of knowledge-update cases: old, new, one claim key",
    ),
    "compile": (
        "bench.compile_speed",
        "compile throughput with the rules extractor: full and incremental (+10 turns)",
    ),
    "defaults": (
        "bench.defaults",
        "only a budget named vs ranking-only, on folds, and the full tier's relevance cut",
    ),
    "tune": (
        "bench.tune",
        "ranking-profile sweep on LoCoMo + LongMemEval_S, cross-validated on folds",
    ),
}


def main(argv: list[str]) -> int:
    if not argv or argv[0] in {"-h", "--help"} or argv[0] not in BENCHMARKS:
        print("usage: python -m bench <name> [options]\n")
        for name, (_, summary) in BENCHMARKS.items():
            print(f"  {name:<8} {summary}")
        return 0 if not argv or argv[0] in {"-h", "--help"} else 2
    module = importlib.import_module(BENCHMARKS[argv[0]][0])
    result: int = module.main(argv[1:])
    return result


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
