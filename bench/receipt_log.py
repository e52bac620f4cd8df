"""The receipt log alone (issue 35): N processes appending receipts with no other work, each
receipt acknowledged only once durable; receipts/s into one tenant and spread over N tenants, and
the serial section's time per receipt.

Every worker process is what a gateway worker is to the log: its own receipt writer
(`gateway.usecases.receiptlog.group_commit.GroupCommit` on its own connection, with the
gateway's signer) and `--concurrency` requests that each append one receipt after another and
wait for it, as `Recorder.record` does. The bodies are canonical JSON of `--body-bytes` (a
context receipt's header, and candidates up to that size); nothing else runs. The serial section
is the time a tenant's log is held by one writer (`GroupCommit.held_seconds`, summed over every
process) over the receipts it sealed. Afterwards every tenant's log is checked whole: as many
receipts as were acknowledged, `seq` gapless from 1, each `prev` the leaf before it, the head the
last leaf.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg

from bench.harness import embedded_postgres, machine, markdown_table, new_database, write_result
from gateway.shell.clock import new_ulid
from gateway.shell.settings import Settings
from gateway.shell.signing import load_signer
from gateway.store.pool import open_pool
from gateway.usecases.access.keys import issue_key
from gateway.usecases.receiptlog.group_commit import GroupCommit, PendingReceipt
from receipts import RECEIPT_SCHEMA
from receipts.canonical import CanonicalTemplate

__all__ = ["main"]


@dataclass(frozen=True)
class Job:
    app_url: str
    data_dir: str
    tenants: tuple[str, ...]
    concurrency: int
    seconds: float
    body_bytes: int
    start_at: float  # time.time() at which every process starts appending
    busy_ms: float  # the CPU each request spends before its receipt, holding the event loop
    disclosed: int  # memory ids each receipt discloses (a context receipt names its bundle's)


@dataclass(frozen=True)
class Tally:
    acknowledged: dict[str, int]
    serial_seconds: float
    sealed: int


def _body(tenant_id: str, receipt_id: str, body_bytes: int, disclosed: list[str]) -> dict[str, Any]:
    body: dict[str, Any] = {
        "schema": RECEIPT_SCHEMA,
        "receipt_id": receipt_id,
        "kind": "context",
        "tenant_id": tenant_id,
        "issued_at": datetime.now(UTC).isoformat(),
        "subject": {"agent_id": "bench", "key_id": "k", "role": "agent", "purpose": None},
        "bundle": {"sha256": "0" * 64, "bytes": 0},
        "parent_receipt_id": None,
        "disclosed_ids": disclosed,
        "candidates": [],
    }
    while len(repr(body)) < body_bytes:
        body["candidates"].append(
            {"memory_id": new_ulid(datetime.now(UTC)), "vector": "0.8125", "lexical": "3.25"}
        )
    return body


async def _work(job: Job) -> Tally:
    settings = Settings(database_url=job.app_url, data_dir=Path(job.data_dir), log_level="WARNING")
    pool = open_pool(job.app_url, settings, size=1, name="bench-log")
    await pool.open(wait=True, timeout=30)
    log = GroupCommit(pool, load_signer(settings))
    acknowledged = dict.fromkeys(job.tenants, 0)
    # Made before the clock starts: the bench measures the log, not building bodies.
    made = []
    for _ in range(50):
        disclosed = sorted(new_ulid(datetime.now(UTC)) for _ in range(job.disclosed))
        made.append(_body(job.tenants[0], new_ulid(datetime.now(UTC)), job.body_bytes, disclosed))
    await asyncio.sleep(max(0.0, job.start_at - time.time()))
    stop = time.monotonic() + job.seconds

    async def client(number: int) -> None:
        turn = number
        while time.monotonic() < stop:
            # The request's own work before its receipt (ranking, assembly), which holds the
            # process's event loop: `--busy-ms` of CPU.
            until = time.perf_counter() + job.busy_ms / 1000
            while time.perf_counter() < until:
                pass
            tenant = job.tenants[turn % len(job.tenants)]
            template = made[turn % len(made)]
            issued_at = datetime.now(UTC)
            receipt_id = new_ulid(issued_at)
            body = {**template, "receipt_id": receipt_id, "tenant_id": tenant}
            pending = PendingReceipt(
                template=CanonicalTemplate(body, "log"),
                receipt_id=receipt_id,
                kind="context",
                agent_id="bench",
                key_id="k",
                issued_at=issued_at,
                bundle_sha256="0" * 64,
                policy_digest=None,
                parent_receipt_id=None,
                disclosed_ids=template["disclosed_ids"],
            )
            await log.append(tenant, pending)
            acknowledged[tenant] += 1
            turn += job.concurrency

    await asyncio.gather(*(client(n) for n in range(job.concurrency)))
    await pool.close()
    return Tally(acknowledged, log.held_seconds, log.sealed)


def _worker(job: Job) -> Tally:
    return asyncio.run(_work(job))


def _check_logs(url: str, tenants: tuple[str, ...], acknowledged: dict[str, int]) -> list[str]:
    """What is wrong with the tenants' logs (nothing: an empty list)."""
    wrong = []
    with psycopg.connect(url) as conn:
        for tenant in tenants:
            size, top, links_broken = conn.execute(
                """
                SELECT count(*), COALESCE(max(seq), 0),
                       count(*) FILTER (WHERE r.prev <> COALESCE(
                           (SELECT p.leaf FROM receipts p
                             WHERE p.tenant_id = r.tenant_id AND p.seq = r.seq - 1),
                           '\\x0000000000000000000000000000000000000000000000000000000000000000'))
                  FROM receipts r WHERE tenant_id = %s
                """,
                (tenant,),
            ).fetchone() or (0, 0, 0)
            head = conn.execute(
                "SELECT l.size, l.head = r.leaf FROM receipt_logs l"
                " LEFT JOIN receipts r ON r.tenant_id = l.tenant_id AND r.seq = l.size"
                " WHERE l.tenant_id = %s",
                (tenant,),
            ).fetchone()
            if size != acknowledged[tenant] or top != size or links_broken:
                wrong.append(
                    f"{tenant}: {size} stored, {acknowledged[tenant]} acknowledged, "
                    f"max seq {top}, {links_broken} broken links"
                )
            if head is None or head[0] != size or not head[1]:
                wrong.append(f"{tenant}: the head is not the last receipt ({head})")
    return wrong


def _run(
    db_url: str, app_url: str, data_dir: str, tenants: tuple[str, ...], args: argparse.Namespace
) -> dict[str, Any]:
    with psycopg.connect(db_url, autocommit=True) as conn:
        counted = conn.execute(
            "SELECT tenant_id, count(*) FROM receipts WHERE tenant_id = ANY(%s) GROUP BY 1",
            (list(tenants),),
        ).fetchall()
    before = dict.fromkeys(tenants, 0) | {tenant: int(count) for tenant, count in counted}
    start_at = time.time() + 3.0
    jobs = [
        Job(
            app_url,
            data_dir,
            tenants,
            args.concurrency,
            args.seconds,
            args.body_bytes,
            start_at,
            args.busy_ms,
            args.disclosed,
        )
        for _ in range(args.processes)
    ]
    with multiprocessing.get_context("spawn").Pool(args.processes) as workers:
        tallies = workers.map(_worker, jobs)
    acknowledged = {t: before[t] + sum(tally.acknowledged[t] for tally in tallies) for t in tenants}
    total = sum(acknowledged.values()) - sum(before.values())
    serial = sum(tally.serial_seconds for tally in tallies)
    sealed = sum(tally.sealed for tally in tallies)
    return {
        "processes": args.processes,
        "tenants": len(tenants),
        "acknowledged": total,
        "receipts_per_second": round(total / args.seconds, 1),
        "serial_ms_per_receipt": round(1000 * serial / max(1, sealed), 4),
        "wrong": _check_logs(db_url, tenants, acknowledged),
    }


def _set_flush_delay(url: str, milliseconds: float) -> None:
    """Every WAL flush waits `milliseconds` first: PostgreSQL's commit_delay, with
    commit_siblings 0 so that it applies to a lone committer too."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"ALTER SYSTEM SET commit_delay = {round(milliseconds * 1000)}")
        conn.execute("ALTER SYSTEM SET commit_siblings = 0")
        conn.execute("SELECT pg_reload_conf()")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench log", description=__doc__)
    parser.add_argument("--processes", type=int, nargs="+", default=[1, 2, 4, 8])
    parser.add_argument("--concurrency", type=int, default=32, help="requests per process")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--body-bytes", type=int, default=2000)
    parser.add_argument(
        "--tenants", type=int, default=8, help="for the spread-out run (0: one tenant only)"
    )
    parser.add_argument(
        "--busy-ms",
        type=float,
        default=0.0,
        help="each request first spends this much CPU (its assembly), holding the event loop",
    )
    parser.add_argument(
        "--disclosed",
        type=int,
        default=0,
        help="memory ids each receipt discloses (indexed by memory at append, as a bundle's are)",
    )
    parser.add_argument(
        "--flush-ms",
        type=float,
        default=0.0,
        help="add this much to every WAL flush (commit_delay), as a network-attached disk would",
    )
    args = parser.parse_args(argv)
    rows = []
    with embedded_postgres() as server, tempfile.TemporaryDirectory() as data_dir:
        db = new_database(server, "bench_log")
        _set_flush_delay(db.url, args.flush_ms)
        settings = Settings(database_url=db.app_url, data_dir=Path(data_dir), log_level="WARNING")
        load_signer(settings)  # generated once, here, so every worker signs with the same keys
        spread = tuple(f"log-{n}" for n in range(args.tenants))
        with psycopg.connect(db.url, autocommit=True) as conn:
            for tenant in spread:
                issue_key(conn, tenant_id=tenant, role="agent", namespaces=["*"])
        results = []
        for processes in args.processes:
            for tenants in ((db.tenant_id,), spread) if spread else ((db.tenant_id,),):
                run = argparse.Namespace(**{**vars(args), "processes": processes})
                result = _run(db.url, db.app_url, data_dir, tenants, run)
                results.append(result)
                rows.append(
                    [
                        processes,
                        result["tenants"],
                        result["receipts_per_second"],
                        result["serial_ms_per_receipt"],
                        "ok" if not result["wrong"] else "; ".join(result["wrong"]),
                    ]
                )
                print(rows[-1], flush=True)
        table = markdown_table(
            ["processes", "tenants", "receipts/s", "serial ms/receipt", "logs"], rows
        )
        print(table)
        write_result(
            "receipt_log",
            {"args": vars(args), "machine": machine(server), "results": results, "table": table},
        )


if __name__ == "__main__":
    main()
