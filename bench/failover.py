"""Failover without loss (README, high availability): a gateway (``ctxgw serve``, its own
process) reaches a primary and its synchronous standby through one libpq multi-host URL with
``target_session_attrs=read-write``; under closed-loop /v1/context load and memory writes the
primary is killed with -9 (postmaster and backends: the machine is gone) and the standby promoted.

Per round: the receipts and the memories the clients were acknowledged (200, 201) and how many of
them the new primary lacks (lost, must be 0); every other answer must be a 503 with
``Retry-After`` and no memory text (never a 500); the seconds from the kill to the first 200; and
the log stays gapless (``receipt_logs.size`` = count = max seq). Between rounds a new standby is
built where the failed primary was, so the next round fails over the other way. At the end the
whole log is exported by the same gateway and verified offline (signatures, the chain across
every failover, the checkpoint's root), and every checkpoint stored across the failovers is
checked against the stored log (`gateway.shell.restored_log`).

``python -m bench failover`` runs 5 rounds; tests/gateway/test_failover.py runs one, bounded.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psycopg
from psycopg import sql

from bench.faults import running_gateway
from bench.harness import markdown_table, write_result
from bench.replication import Pair, replicated_postgres
from gateway.shell.restored_log import check_restored_logs
from gateway.store.database import APP_ROLE
from gateway.store.migrator import apply_migrations
from gateway.usecases.access.keys import issue_key
from receipts import Keyring
from receipts.verify import VerifyReport, verify_export

__all__ = ["FailoverRound", "Ground", "failover_ground", "failover_round", "main", "verify_log"]

_DATABASE = "ctxgw"
_ASK = {"task": "when do deploys happen?", "budget_tokens": 400}
_MEMORY = {
    "namespace": "ops",
    "heading": "Deploys happen on Tuesdays",
    "content": "The release train leaves every Tuesday at 10:00 UTC.",
    "memory_type": "procedural",
    "confidence": 0.9,
}
_ROUND_LIMIT_SECONDS = 120  # no round waits longer than this for its first 200


@dataclass(frozen=True)
class Ground:
    pair: Pair
    base_url: str
    agent_key: str
    auditor_key: str
    keyring: Path


@contextlib.contextmanager
def failover_ground(root: Path | None = None) -> Iterator[Ground]:
    """The replicated pair, the migrated database on it, keys, and a gateway serving through
    the multi-host URL."""
    with contextlib.ExitStack() as stack:
        if root is None:
            root = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="ctxgw-failover-")))
        pair = stack.enter_context(replicated_postgres(root / "pg"))
        with psycopg.connect(pair.url(), autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(_DATABASE)))
        apply_migrations(pair.url(_DATABASE))
        with psycopg.connect(pair.url(_DATABASE), autocommit=True) as conn:
            agent = issue_key(conn, tenant_id="acme", role="agent", namespaces=["*"], agent_id="a",
                              requests_per_second=None, writes_per_second=None)  # fmt: skip
            auditor = issue_key(conn, tenant_id="acme", role="auditor", namespaces=["*"])
        data_dir = root / "data"
        gateway = stack.enter_context(running_gateway(pair.url(_DATABASE, APP_ROLE), data_dir))
        headers = {"Authorization": f"Bearer {agent.key}"}
        written = httpx.post(f"{gateway.base_url}/v1/memories", json=_MEMORY, headers=headers, timeout=60)  # fmt: skip
        written.raise_for_status()
        yield Ground(pair, gateway.base_url, agent.key, auditor.key, data_dir / "keys" / "keyring.json")  # fmt: skip


@dataclass(frozen=True)
class FailoverRound:
    acknowledged: int  # 200 answers, each naming its receipt
    lost: int  # acknowledged receipts the new primary does not hold (must be 0)
    written: int  # memory writes answered 201
    writes_lost: int  # of those, memories the new primary does not hold (must be 0)
    refused: int  # 503 answers, all with Retry-After
    leaked: int  # 503 answers that carried memory text (must be 0)
    other: int  # any other answer or a transport error (must be 0)
    retry_after_missing: int  # 503s without a positive Retry-After (must be 0)
    unavailable_seconds: float  # from the kill to the first 200 after it
    promote_seconds: float  # how long pg_ctl promote took
    gapless: bool  # receipt_logs.size = count(receipts) = max(seq) on the new primary
    stored: int  # receipts on the new primary


@dataclass
class _Tally:
    acknowledged: list[str]
    written: list[str] = field(default_factory=list)  # memory ids of 201 answers
    refused: int = 0
    leaked: int = 0  # refusals that carried content
    other: int = 0
    retry_after_missing: int = 0
    first_200_after: float | None = None
    recovered: asyncio.Event = field(default_factory=asyncio.Event)


async def _load(base: str, key: str, tally: _Tally, killed: asyncio.Event, stop: asyncio.Event, concurrency: int) -> None:  # fmt: skip
    headers = {"Authorization": f"Bearer {key}"}
    async with httpx.AsyncClient(base_url=base, headers=headers, timeout=30) as client:

        async def worker(writes: bool) -> None:
            while not stop.is_set():
                sent_after_kill = killed.is_set()
                try:
                    if writes:  # a new memory each time: 201 with its id
                        response = await client.post("/v1/memories", json=_MEMORY)
                    else:
                        response = await client.post("/v1/context", json=_ASK)
                except httpx.HTTPError:
                    tally.other += 1
                    await asyncio.sleep(0.05)
                    continue
                if response.status_code == 201 and writes:
                    tally.written.append(response.json()["memory_id"])
                elif response.status_code == 200 and not writes:
                    tally.acknowledged.append(response.json()["receipt_id"])
                    if sent_after_kill and tally.first_200_after is None:
                        tally.first_200_after = time.monotonic()
                        tally.recovered.set()
                elif response.status_code == 503:
                    tally.refused += 1
                    tally.leaked += "Tuesday" in response.text
                    if int(response.headers.get("retry-after", "0") or 0) <= 0:
                        tally.retry_after_missing += 1
                    await asyncio.sleep(0.05)  # a client honouring Retry-After, impatiently
                else:
                    tally.other += 1

        # One writer beside the readers: acknowledged memory writes must survive too.
        await asyncio.gather(*(worker(writes=i == 0) for i in range(max(2, concurrency))))


def failover_round(
    ground: Ground,
    *,
    load_before: float = 2.0,
    load_after: float = 2.0,
    promote_after: float = 0.0,
    concurrency: int = 8,
) -> FailoverRound:
    """One failover under load; the standby is rebuilt afterwards for the next round."""
    pair = ground.pair
    tally: _Tally

    async def run() -> tuple[float, float]:
        nonlocal tally
        tally = _Tally([])  # its event belongs to this loop
        killed, stop = asyncio.Event(), asyncio.Event()
        load = asyncio.create_task(_load(ground.base_url, ground.agent_key, tally, killed, stop, concurrency))  # fmt: skip
        await asyncio.sleep(load_before)
        kill_at = time.monotonic()
        await asyncio.to_thread(pair.fail_primary)
        killed.set()  # a request sent from now on met a dead primary (or none at all)
        await asyncio.sleep(promote_after)
        started = time.monotonic()
        await asyncio.to_thread(pair.promote)
        promote_seconds = time.monotonic() - started
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(tally.recovered.wait(), kill_at + _ROUND_LIMIT_SECONDS - time.monotonic())  # fmt: skip
        await asyncio.sleep(load_after)
        stop.set()
        await load
        return kill_at, promote_seconds

    kill_at, promote_seconds = asyncio.run(run())
    if tally.first_200_after is None:
        raise RuntimeError(f"no 200 within {_ROUND_LIMIT_SECONDS} s of the failover")
    with psycopg.connect(pair.url(_DATABASE), autocommit=True) as conn:
        stored = {str(r[0]) for r in conn.execute("SELECT receipt_id FROM receipts").fetchall()}
        memories = {str(r[0]) for r in conn.execute("SELECT memory_id FROM memories").fetchall()}
        row = conn.execute(
            "SELECT (SELECT coalesce(sum(size), 0) FROM receipt_logs), count(*),"
            " coalesce(max(seq), 0) FROM receipts"
        ).fetchone()
    assert row is not None
    pair.rebuild_standby()
    return FailoverRound(
        acknowledged=len(tally.acknowledged),
        lost=len(set(tally.acknowledged) - stored),
        written=len(tally.written),
        writes_lost=len(set(tally.written) - memories),
        refused=tally.refused,
        leaked=tally.leaked,
        other=tally.other,
        retry_after_missing=tally.retry_after_missing,
        unavailable_seconds=round(tally.first_200_after - kill_at, 2),
        promote_seconds=round(promote_seconds, 2),
        gapless=int(row[0]) == int(row[1]) == int(row[2]),
        stored=len(stored),
    )


def verify_log(ground: Ground) -> VerifyReport:
    """The tenant's whole log, exported through the gateway and verified offline; raises a
    `receipts` VerificationError on any break (signature, chain, root). And every checkpoint
    stored across the failovers commits to the stored log, whose head is its last receipt
    (`gateway.shell.restored_log`, as after a restore); a RuntimeError says which does not."""
    response = httpx.get(
        f"{ground.base_url}/v1/receipts/export",
        headers={"Authorization": f"Bearer {ground.auditor_key}"},
        timeout=300,
    )
    response.raise_for_status()
    keyring = Keyring.load(ground.keyring)
    report = verify_export(response.text.splitlines(), keyring)
    failed = [c.problem for c in check_restored_logs(ground.pair.url(_DATABASE), keyring) if not c.ok]  # fmt: skip
    if failed:
        raise RuntimeError(f"the stored log after failover: {failed}")
    return report


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench failover", description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--load-before", type=float, default=3.0, help="seconds before the kill")
    parser.add_argument("--load-after", type=float, default=2.0, help="seconds after the first 200")
    parser.add_argument("--promote-after", type=float, default=0.0,
                        help="seconds between the kill and pg_ctl promote (a failover manager's detection)")  # fmt: skip
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args(argv)
    rounds: list[FailoverRound] = []
    with failover_ground() as ground:
        for _ in range(args.rounds):
            rounds.append(
                failover_round(
                    ground,
                    load_before=args.load_before,
                    load_after=args.load_after,
                    promote_after=args.promote_after,
                    concurrency=args.concurrency,
                )
            )
        report = verify_log(ground)
    print(markdown_table(
        ("round", "receipts acknowledged", "lost", "memories written", "lost", "503s",
         "503s with content", "503s without Retry-After", "other", "kill → first 200 s",
         "promote s", "gapless"),
        [(i + 1, r.acknowledged, r.lost, r.written, r.writes_lost, r.refused, r.leaked,
          r.retry_after_missing, r.other, r.unavailable_seconds, r.promote_seconds, r.gapless)
         for i, r in enumerate(rounds)],
    ))  # fmt: skip
    result: dict[str, Any] = {
        "args": vars(args),
        "rounds": [asdict(r) for r in rounds],
        "verified_receipts": report.receipts,
    }
    print(write_result("failover", result))
    seconds = [r.unavailable_seconds for r in rounds]
    clean = all(
        r.lost == r.writes_lost == r.leaked == r.other == r.retry_after_missing == 0 and r.gapless
        for r in rounds
    )
    print(
        f"failover: {len(rounds)} rounds, acknowledged {sum(r.acknowledged for r in rounds)}, "
        f"lost {sum(r.lost for r in rounds)}, chain verified ({report.receipts} receipts, "
        f"checkpoints consistent), memory writes {sum(r.written for r in rounds)} lost "
        f"{sum(r.writes_lost for r in rounds)}, 503s {min(seconds):.1f}-{max(seconds):.1f} s"
        + ("" if clean else ", NOT CLEAN: see the table")
    )
    return 0 if clean else 1
