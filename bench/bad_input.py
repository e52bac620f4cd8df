"""Bad input, tried as an attacker would, over real HTTP: every request below must be answered
with a 4xx RFC 9457 problem (never a 5xx, a hang or a partial write). ``python -m bench
bad-input`` prints the table (tried / answered 4xx, by kind); tests/gateway/test_bad_input_table.py
runs the same list against the test app.
"""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx

__all__ = ["Attempt", "Keys", "attempts", "main", "try_all"]

ULID = "01JAAAAAAAAAAAAAAAAAAAAAAA"


@dataclass(frozen=True)
class Keys:
    agent: str
    admin: str
    auditor: str
    foreign_admin: str  # another tenant's


@dataclass(frozen=True)
class Attempt:
    kind: str
    what: str
    send: Callable[[httpx.Client, Keys], httpx.Response]


def _auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def _post(
    path: str, body: Any, who: str = "agent"
) -> Callable[[httpx.Client, Keys], httpx.Response]:
    return lambda c, k: c.post(path, json=body, headers=_auth(getattr(k, who)))


def _raw(
    method: str, path: str, content: bytes, who: str = "agent", ctype: str = "application/json"
) -> Callable[[httpx.Client, Keys], httpx.Response]:
    return lambda c, k: c.request(
        method, path, content=content, headers={**_auth(getattr(k, who)), "content-type": ctype}
    )


def _memory(**overrides: Any) -> dict[str, Any]:
    return {"namespace": "ops", "heading": "h", "content": "c", **overrides}


def attempts() -> list[Attempt]:
    deep = b'{"items": ' + b"[" * 5000 + b"]" * 5000 + b"}"
    return [
        # Structure of the body.
        Attempt(
            "body",
            "JSON nested 5000 deep, before auth",
            lambda c, k: c.post(
                "/v1/context", content=deep, headers={"content-type": "application/json"}
            ),
        ),
        Attempt("body", "not JSON", _raw("POST", "/v1/context", b"{not json")),
        Attempt("body", "invalid UTF-8", _raw("POST", "/v1/memories", b'{"heading": "\xff\xfe"}')),
        Attempt("body", "an array, not an object", _post("/v1/context", [1, 2])),
        Attempt("body", "empty body", _raw("POST", "/v1/context", b"")),
        Attempt("body", "unknown field", _post("/v1/context", {"task": "x", "evil": 1})),
        Attempt("body", "NUL inside a string", _post("/v1/memories", _memory(content="a\u0000b"))),
        # Types and ranges.
        Attempt("range", "task empty", _post("/v1/context", {"task": ""})),
        Attempt("range", "task 1 MB", _post("/v1/context", {"task": "x" * 1_000_000})),
        Attempt("range", "top_k 10^9", _post("/v1/context", {"task": "x", "top_k": 10**9})),
        Attempt(
            "range", "budget negative", _post("/v1/context", {"task": "x", "budget_tokens": -5})
        ),
        Attempt(
            "range", "budget 2^70", _post("/v1/context", {"task": "x", "budget_tokens": 2**70})
        ),
        Attempt(
            "range",
            "confidence NaN (as text)",
            _raw(
                "POST",
                "/v1/memories",
                b'{"namespace":"ops","heading":"h","content":"c","confidence":NaN}',
            ),
        ),
        Attempt("range", "confidence 7", _post("/v1/memories", _memory(confidence=7))),
        Attempt("range", "heading 10 kB", _post("/v1/memories", _memory(heading="h" * 10_000))),
        Attempt(
            "range",
            "content over the size limit",
            _post("/v1/memories", _memory(content="c" * 2_000_000)),
        ),
        Attempt("range", "batch of 101", _post("/v1/memories/batch", {"items": [_memory()] * 101})),
        Attempt("range", "labels as a string", _post("/v1/memories", _memory(labels="a"))),
        Attempt("range", "namespace with a slash", _post("/v1/memories", _memory(namespace="a/b"))),
        Attempt("range", "fetch 51 ids", _post("/v1/fetch", {"ids": [ULID] * 51})),
        Attempt("range", "fetch a non-ULID", _post("/v1/fetch", {"ids": ["../../etc"]})),
        Attempt(
            "range",
            "receipts limit 10^6",
            lambda c, k: c.get("/v1/receipts", params={"limit": 10**6}, headers=_auth(k.auditor)),
        ),
        Attempt(
            "range",
            "history after -1",
            lambda c, k: c.get(
                f"/v1/sessions/{ULID}/turns", params={"after": -1}, headers=_auth(k.agent)
            ),
        ),
        # Instants.
        Attempt(
            "instant",
            "expires_at 9999-12-31T23:59:59-00:01",
            _post("/v1/memories", _memory(expires_at="9999-12-31T23:59:59-00:01")),
        ),
        Attempt(
            "instant",
            "expires_at 0001-01-01T00:00:00+23:59",
            _post("/v1/memories", _memory(expires_at="0001-01-01T00:00:00+23:59")),
        ),
        Attempt(
            "instant",
            "expires_at without a zone",
            _post("/v1/memories", _memory(expires_at="2030-01-01T00:00:00")),
        ),
        Attempt(
            "instant",
            "as_of year 10000",
            _post("/v1/context", {"task": "x", "as_of": "10000-01-01T00:00:00Z"}),
        ),
        Attempt(
            "instant",
            "receipts since garbage",
            lambda c, k: c.get(
                "/v1/receipts", params={"since": "yesterday"}, headers=_auth(k.auditor)
            ),
        ),
        # Paths.
        Attempt(
            "path",
            "NUL in a receipt id",
            lambda c, k: c.get("/v1/receipts/%00", headers=_auth(k.auditor)),
        ),
        Attempt(
            "path",
            "NUL in a memory id (delete)",
            lambda c, k: c.request(
                "DELETE", "/v1/memories/%00", json={"reason": "x"}, headers=_auth(k.agent)
            ),
        ),
        Attempt(
            "path",
            "NUL in a memory id (erase)",
            _post("/v1/memories/%00/erase", {"reason": "x"}, "admin"),
        ),
        Attempt(
            "path",
            "erase turn seq 2^80",
            _post(f"/v1/sessions/{ULID}/turns/{2**80}/erase", {"reason": "x"}, "admin"),
        ),
        Attempt(
            "path",
            "erase turn seq -1",
            _post(f"/v1/sessions/{ULID}/turns/-1/erase", {"reason": "x"}, "admin"),
        ),
        Attempt(
            "path",
            "unknown receipt",
            lambda c, k: c.get(f"/v1/receipts/{ULID}", headers=_auth(k.auditor)),
        ),
        # Identity and authority.
        Attempt(
            "identity", "no Authorization", lambda c, k: c.post("/v1/context", json={"task": "x"})
        ),
        Attempt(
            "identity",
            "malformed bearer",
            lambda c, k: c.post(
                "/v1/context", json={"task": "x"}, headers={"Authorization": "Bearer nope"}
            ),
        ),
        Attempt(
            "identity",
            "two Authorization headers",
            lambda c, k: c.post(
                "/v1/context",
                json={"task": "x"},
                headers=[
                    ("Authorization", f"Bearer {k.agent}"),
                    ("Authorization", f"Bearer {k.admin}"),
                ],
            ),
        ),
        Attempt(
            "identity", "tenant in the body", _post("/v1/memories", _memory(tenant_id="globex"))
        ),
        Attempt("identity", "agent erases", _post(f"/v1/memories/{ULID}/erase", {"reason": "x"})),
        Attempt(
            "identity",
            "agent reads the whole ledger",
            lambda c, k: c.get("/v1/receipts/export", headers=_auth(k.agent)),
        ),
        Attempt(
            "identity",
            "another tenant's admin erases",
            _post(f"/v1/memories/{ULID}/erase", {"reason": "x"}, "foreign_admin"),
        ),
        Attempt(
            "identity", "erase without a reason", _post(f"/v1/memories/{ULID}/erase", {}, "admin")
        ),
    ]


def try_all(base_url: str, keys: Keys) -> list[tuple[Attempt, int, str]]:
    """Each attempt once: (attempt, status, problem code or what came back instead)."""
    results = []
    with httpx.Client(base_url=base_url, timeout=30) as client:
        for attempt in attempts():
            response = attempt.send(client, keys)
            problem = response.headers.get("content-type", "").startswith(
                "application/problem+json"
            )
            code = response.json().get("code", "?") if problem else response.text[:60]
            results.append((attempt, response.status_code, str(code)))
    return results


def main(argv: list[str]) -> int:
    from bench.harness import embedded_postgres, markdown_table, new_database, serve
    from gateway.usecases.access.keys import issue_key

    parser = argparse.ArgumentParser(prog="python -m bench bad-input", description=__doc__)
    parser.parse_args(argv)
    import psycopg

    with embedded_postgres() as pg:
        db = new_database(pg, "bench_bad_input", tenant="acme")
        with psycopg.connect(db.url, autocommit=True) as conn:
            made = {
                role: issue_key(conn, tenant_id=tenant, role=role, namespaces=["*"]).key
                for role, tenant in (("admin", "acme"), ("auditor", "acme"))
            }
            foreign = issue_key(conn, tenant_id="globex", role="admin", namespaces=["*"]).key
        keys = Keys(db.key, made["admin"], made["auditor"], foreign)
        with serve(db) as server:
            results = try_all(server.base_url, keys)
    rows = [(a.kind, a.what, status, code) for a, status, code in results]
    print(markdown_table(("kind", "input", "status", "code"), rows))
    by_kind: Counter[str] = Counter(a.kind for a, _, _ in results)
    four: Counter[str] = Counter(a.kind for a, status, _ in results if 400 <= status < 500)
    print()
    print(markdown_table(
        ("kind", "tried", "answered 4xx"),
        [(kind, by_kind[kind], four[kind]) for kind in by_kind] + [("all", sum(by_kind.values()), sum(four.values()))],
    ))  # fmt: skip
    return 0 if sum(four.values()) == len(results) else 1
