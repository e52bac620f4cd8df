"""Evaluation cost: 500 candidate memories × 20 rules, p50/p99/min per assembly and per
evaluate() call.

    .venv/bin/python tests/policies/policy_bench.py

Per assembly is what a context assembly spends in the engine: `judge` the 500 candidates, then
redact what it renders (the heading of every memory not denied, as its index line, and the
first TOP_K admitted in full, the gateway's default top_k) and take the evaluation. evaluate()
redacts every text, as search, timeline, fetch and policy tests do.

Two data sets over the same 20-rule bundle (every operator family, all four stages, one log_only
rule): `typical` (most candidates pass; 5 % carry PII) and `heavy` (three quarters are denied,
capped or redacted, so most memories produce decisions with evidence). The same data sets are
then run through the shipped `default` and `strict` bundles, and the bench bundle without its
redact rules, its cap rules, or both (where the time goes). On a shared machine p50 moves with
the load; min is the steadier figure to compare runs with. The collector is settled first, as
`ctxgw serve` settles it.
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gateway.shell.collector import settle_collector
from policies import Bundle, evaluate, judge, load_bundle
from policies.shipped import shipped_bundle

NOW = datetime(2026, 11, 29, tzinfo=UTC)
REQUEST: dict[str, object] = {
    "tenant": "acme",
    "agent_id": "support-bot",
    "role": "agent",
    "purpose": "support",
    "namespaces": ["eng", "public"],
    "budget_tokens": 4000,
}

BUNDLE = """\
apiVersion: ctxgw/v1
kind: PolicyBundle
metadata: {name: bench}
spec:
  default_decision: allow
  rules:
    - {id: need-purpose, effect: require, reason: r, when: {field: request.purpose, op: exists}}
    - {id: tenant-set, effect: require, reason: r, when: {field: request.tenant, op: exists}}
    - id: hr
      effect: deny
      reason: r
      when: {all: [{field: memory.namespace, op: eq, value: hr}, {field: request.role, op: not_in, value: [hr_assistant]}]}
    - {id: legal, effect: deny, reason: r, when: {field: memory.namespace, op: in, value: [legal, finance]}}
    - {id: low-conf, effect: deny, reason: r, when: {field: memory.confidence, op: lt, value: 0.2}}
    - id: stale
      effect: deny
      reason: r
      when: {all: [{field: memory.memory_type, op: eq, value: working}, {field: memory.created_at, op: older_than, value: 30d}]}
    - {id: secret-label, effect: deny, reason: r, when: {field: memory.labels, op: contains_any, value: [secret, restricted]}}
    - id: expired
      effect: deny
      reason: r
      when: {all: [{field: memory.expires_at, op: exists}, {field: memory.expires_at, op: lt, value: "2026-01-01T00:00:00Z"}]}
    - id: vault
      effect: deny
      reason: r
      when: {all: [{field: memory.source_ref, op: exists}, {field: memory.source_ref, op: glob, value: "vault://*"}]}
    - {id: heading-rx, effect: deny, reason: r, when: {field: memory.heading, op: regex, value: "(?i)do not share"}}
    - id: untrusted-agent
      effect: deny
      reason: r
      when: {all: [{field: request.agent_id, op: eq, value: untrusted}, {field: memory.namespace, op: ne, value: public}]}
    - {id: allow-public, effect: allow, when: {field: memory.namespace, op: eq, value: public}}
    - {id: redact-pii, effect: redact, detectors: [email, phone, card], when: {field: memory.labels, op: contains_any, value: [pii]}}
    - {id: redact-tokens, effect: redact, detectors: [api_token], when: {field: memory.source_type, op: eq, value: code}}
    - {id: redact-all-email, effect: redact, mode: log_only, detectors: [email], when: {field: memory.namespace, op: ne, value: public}}
    - {id: cap-episodic, effect: cap, max_items: 50, when: {field: memory.memory_type, op: eq, value: episodic}}
    - {id: cap-working, effect: cap, max_tokens: 4000, when: {field: memory.memory_type, op: eq, value: working}}
    - {id: cap-lowconf, effect: cap, max_items: 20, when: {field: memory.confidence, op: lt, value: 0.5}}
    - {id: cap-big, effect: cap, max_items: 10, when: {field: memory.tokens, op: gt, value: 800}}
    - {id: cap-eng, effect: cap, max_items: 300, when: {field: memory.namespace, op: eq, value: eng}}
"""

_WORDS = [
    "deploy",
    "service",
    "the",
    "user",
    "asked",
    "about",
    "billing",
    "prod",
    "cluster",
    "latency",
    "rollback",
    "canary",
]


def memories(count: int, *, heavy: bool, seed: int = 1) -> list[dict[str, object]]:
    rnd = random.Random(seed)
    found = []
    for i in range(count):
        pii = rnd.random() < (0.2 if heavy else 0.05)
        content = " ".join(rnd.choice(_WORDS) for _ in range(60))
        if pii:
            content += " contact jane.doe@example.com or +1 555 123 4567"
        if heavy:
            namespace = rnd.choice(["eng", "eng", "public", "hr", "legal", "ops"])
            confidence = rnd.random()
        else:
            namespace = rnd.choices(["eng", "public", "hr", "ops"], [70, 20, 3, 7])[0]
            confidence = 0.3 + 0.7 * rnd.random()
        found.append(
            {
                "memory_id": f"m{i:05d}",
                "namespace": namespace,
                "memory_type": rnd.choices(
                    ["semantic", "episodic", "procedural", "working"], [50, 35, 10, 5]
                )[0],
                "heading": f"Heading {i} about the service",
                "content": content,
                "confidence": confidence,
                "labels": ["pii"]
                if pii
                else rnd.choice([[], [], ["x"], ["secret"] if heavy else []]),
                "source_type": rnd.choice(["chat", "chat", "doc", "code"]),
                "source_ref": rnd.choice(["git://repo", None, "vault://a" if heavy else None]),
                "created_at": NOW - timedelta(days=rnd.randint(0, 60 if heavy else 20)),
                "expires_at": None,
                "tokens": rnd.randint(20, 1000 if heavy else 400),
            }
        )
    return found


def bench_bundle() -> Bundle:
    return load_bundle(BUNDLE, "bench.yaml").bundle


def measure(items: list[dict[str, object]], runs: int = 200) -> tuple[float, float, int]:
    """(p50 ms, p99 ms, decisions) of evaluate() over `items` with the bench bundle."""
    p50, p99, _, decisions = timings(bench_bundle(), items, runs)
    return p50, p99, decisions


def timings(
    bundle: Bundle, items: list[dict[str, object]], runs: int = 200
) -> tuple[float, float, float, int]:
    """(p50 ms, p99 ms, min ms, decisions) of evaluate() over `items`."""
    for _ in range(10):
        evaluation = evaluate(bundle, REQUEST, items, NOW)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        evaluation = evaluate(bundle, REQUEST, items, NOW)
        times.append(time.perf_counter() - start)
    times.sort()
    p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
    return statistics.median(times) * 1e3, p99 * 1e3, times[0] * 1e3, len(evaluation.decisions)


TOP_K = 6


def rendered(bundle: Bundle, items: list[dict[str, object]]) -> tuple[list[int], list[int]]:
    """What an assembly renders of `items`: (positions shown by heading, positions in full)."""
    outcomes = evaluate(bundle, REQUEST, items, NOW).outcomes
    headings = [m for m, outcome in enumerate(outcomes) if outcome.outcome != "deny"]
    full = [m for m, outcome in enumerate(outcomes) if outcome.outcome == "admit"][:TOP_K]
    return headings, full


def assembly_timings(
    bundle: Bundle, items: list[dict[str, object]], runs: int = 200
) -> tuple[float, float, float, int]:
    """(p50 ms, p99 ms, min ms, decisions) of judge + texts(what is rendered) + evaluation."""
    headings, full = rendered(bundle, items)
    times = []
    for run in range(runs + 10):
        start = time.perf_counter()
        judgement = judge(bundle, REQUEST, items, NOW)
        judgement.texts(headings=headings, full=full)  # what the layout measures
        evaluation = judgement.evaluation(headings=headings, full=full)  # what it showed
        if run >= 10:  # warm-up
            times.append(time.perf_counter() - start)
    times.sort()
    p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
    return statistics.median(times) * 1e3, p99 * 1e3, times[0] * 1e3, len(evaluation.decisions)


def without(effects: set[str]) -> Bundle:
    """The bench bundle without its rules of ``effects`` (where the time goes, by family)."""
    lines = BUNDLE.split("\n")
    kept: list[str] = []
    dropping = False
    for line in lines:
        if line.startswith("    - "):  # a rule starts
            dropping = any(f"effect: {effect}" in line for effect in effects)
        if not dropping:
            kept.append(line)
    return load_bundle("\n".join(kept), "bench.yaml").bundle


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    settle_collector()  # as `ctxgw serve` does (gateway/shell/collector.py)
    bundles = {
        "bench": bench_bundle(),
        "default": shipped_bundle("default").bundle,
        "strict": shipped_bundle("strict").bundle,
    }
    assert len(bundles["bench"].rules) == 20
    for how, timed in (("per assembly", assembly_timings), ("evaluate()", timings)):
        print(f"{how}:")
        for label, bundle in bundles.items():
            for name, heavy in (("typical", False), ("heavy", True)):
                p50, p99, least, decisions = timed(bundle, memories(500, heavy=heavy), runs)
                print(
                    f"  {label:7} {name:8} 500 memories x {len(bundle.rules):2} rules: "
                    f"p50 {p50:5.2f} ms  p99 {p99:5.2f} ms  min {least:5.2f} ms  "
                    f"({decisions} decisions)"
                )
    print("evaluate(), where the time goes:")
    typical = memories(500, heavy=False)
    for label, effects in (
        ("no redact", {"redact"}),
        ("no cap", {"cap"}),
        ("neither", {"redact", "cap"}),
    ):
        bundle = without(effects)
        p50, p99, least, decisions = timings(bundle, typical, runs)
        print(
            f"  bench {label:9} typical  500 memories x {len(bundle.rules):2} rules: "
            f"p50 {p50:5.2f} ms  min {least:5.2f} ms  ({decisions} decisions)"
        )


if __name__ == "__main__":
    main()
