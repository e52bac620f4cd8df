"""Backup and restore that verify (README, backups): ``ctxgw backup`` of a database with a live
receipt log, more receipts after it (the tail a later disaster loses), an auditor's checkpoint
taken over that tail, then:

- ``ctxgw restore`` into a new database: every receipt verifies offline, the chain is gapless,
  every checkpoint commits to the stored log, the log is the one the manifest recorded;
- a gateway started on the restored database: its next receipt chains to the restored head
  (seq = size + 1, prev = the head's leaf) and the whole log, exported, verifies;
- the same backup restored with the auditor's checkpoint (``--checkpoint``): the lost tail is
  detected (exit 1, TRUNCATED), not silently continued.

``python -m bench restore`` runs it once with defaults; tests/gateway/test_backup.py with small
bounds.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import httpx
import psycopg

from bench.faults import running_gateway
from bench.harness import Database, embedded_postgres, new_database, write_result
from gateway.store.database import APP_ROLE, EmbeddedPostgres
from gateway.usecases.access.keys import issue_key
from receipts import Keyring
from receipts.checkpoint import parse_checkpoint
from receipts.verify import verify_export

__all__ = ["RestoreResult", "main", "restore_run"]

_ASK = {"task": "when do deploys happen?", "budget_tokens": 400}
_MEMORY = {
    "namespace": "ops",
    "heading": "Deploys happen on Tuesdays",
    "content": "The release train leaves every Tuesday at 10:00 UTC.",
    "memory_type": "procedural",
    "confidence": 0.9,
}


@dataclass(frozen=True)
class RestoreResult:
    backed_up: int  # receipts in the backup
    tail: int  # receipts written after it (an auditor's checkpoint covers them)
    restore_exit: int  # ctxgw restore into a new database (0: every check passed)
    restored: int  # receipts in the restored database
    verified: int  # of those, verified by the restore's checks
    backup_seconds: float
    restore_seconds: float
    next_seq: int  # the first receipt after the restore
    next_chains_to_head: bool  # its prev is the restored head, its seq size + 1
    export_verified: int  # receipts in the full export after that receipt, verified offline
    truncated_exit: int  # the restore given the auditor's checkpoint (must be 1)
    truncated_reported: bool  # and it said TRUNCATED
    restore_output: str
    truncated_output: str


def _ctxgw(*args: str, data_dir: Path) -> subprocess.CompletedProcess[str]:
    env = os.environ | {
        "GATEWAY_DATA_DIR": str(data_dir),
        "GATEWAY_LOG_LEVEL": "WARNING",
        "PYTHONWARNINGS": "ignore",  # the embedded server's XDG_RUNTIME_DIR notice
    }
    env.pop("GATEWAY_DATABASE_URL", None)
    return subprocess.run(
        [sys.executable, "-m", "gateway", *args],
        env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip


def _receipts(base: str, key: str, count: int, concurrency: int = 8) -> int:
    """`count` context receipts at least, closed loop."""
    done = 0

    async def run() -> None:
        nonlocal done
        headers = {"Authorization": f"Bearer {key}"}
        async with httpx.AsyncClient(base_url=base, headers=headers, timeout=60) as client:

            async def worker() -> None:
                nonlocal done
                while done < count:
                    response = await client.post("/v1/context", json=_ASK)
                    response.raise_for_status()
                    done += 1

            await asyncio.gather(*(worker() for _ in range(concurrency)))

    asyncio.run(run())
    return done


def _checkpoint(base: str, auditor: str, size: int) -> str:
    """The latest checkpoint once it covers `size` receipts (the checkpointer runs every 0.5 s)."""
    deadline = time.monotonic() + 60
    while True:
        note = httpx.get(f"{base}/v1/log/checkpoint", headers={"Authorization": f"Bearer {auditor}"}, timeout=30)  # fmt: skip
        if note.status_code == 200 and parse_checkpoint(note.text).size >= size:
            return note.text
        if time.monotonic() > deadline:
            raise RuntimeError(f"no checkpoint of size {size} within 60 s")
        time.sleep(0.2)


def _log_size(url: str) -> int:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT coalesce(sum(size), 0) FROM receipt_logs").fetchone()
    return int(row[0]) if row else 0


def restore_run(
    pg: EmbeddedPostgres, source: Database, auditor: str, work: Path, *, before: int, after: int
) -> RestoreResult:
    data_dir = work / "data"  # the gateway's: its keyring signs both logs
    with running_gateway(source.app_url, data_dir) as gateway:
        httpx.post(f"{gateway.base_url}/v1/memories", json=_MEMORY, headers={"Authorization": f"Bearer {source.key}"}, timeout=60).raise_for_status()  # fmt: skip
        _receipts(gateway.base_url, source.key, before)
        started = time.monotonic()
        made = _ctxgw("backup", str(work / "backup"), "--url", source.url, data_dir=data_dir)
        backup_seconds = time.monotonic() - started
        if made.returncode != 0:
            raise RuntimeError(f"ctxgw backup failed: {made.stdout}{made.stderr}")
        backed_up = _log_size(source.url)  # the load has stopped: the backup holds exactly these
        _receipts(gateway.base_url, source.key, after)
        total = _log_size(source.url)
        note = _checkpoint(gateway.base_url, auditor, total)
    (work / "auditor.checkpoint").write_text(note)

    restored_url = pg.url("bench_restored")
    started = time.monotonic()
    restored = _ctxgw("restore", str(work / "backup"), "--url", restored_url, data_dir=data_dir)
    restore_seconds = time.monotonic() - started
    with psycopg.connect(restored_url) as conn:
        head = conn.execute("SELECT size, head FROM receipt_logs").fetchone()
        assert head is not None
        auditor_there = issue_key(conn, tenant_id=source.tenant_id, role="auditor", namespaces=["*"])  # fmt: skip
        conn.commit()
    with running_gateway(pg.url("bench_restored", user=APP_ROLE), data_dir) as gateway:
        answer = httpx.post(f"{gateway.base_url}/v1/context", json=_ASK, headers={"Authorization": f"Bearer {source.key}"}, timeout=60)  # fmt: skip
        answer.raise_for_status()
        export = httpx.get(f"{gateway.base_url}/v1/receipts/export", headers={"Authorization": f"Bearer {auditor_there.key}"}, timeout=300)  # fmt: skip
        export.raise_for_status()
    with psycopg.connect(restored_url) as conn:
        row = conn.execute(
            "SELECT seq, prev FROM receipts WHERE receipt_id = %s", (answer.json()["receipt_id"],)
        ).fetchone()
        assert row is not None
    report = verify_export(export.text.splitlines(), Keyring.load(data_dir / "keys" / "keyring.json"))  # fmt: skip

    truncated = _ctxgw("restore", str(work / "backup"), "--url", pg.url("bench_truncated"),
                       "--checkpoint", str(work / "auditor.checkpoint"), data_dir=data_dir)  # fmt: skip
    summary = restored.stdout.strip().splitlines()[-1] if restored.stdout.strip() else ""
    verified = int(summary.split(" receipts")[0].rsplit(" ", 1)[1]) if "verified" in summary and restored.returncode == 0 else 0  # fmt: skip
    return RestoreResult(
        backed_up=backed_up,
        tail=total - backed_up,
        restore_exit=restored.returncode,
        restored=int(head[0]),
        verified=verified,
        backup_seconds=round(backup_seconds, 2),
        restore_seconds=round(restore_seconds, 2),
        next_seq=int(row[0]),
        next_chains_to_head=int(row[0]) == int(head[0]) + 1 and bytes(row[1]) == bytes(head[1]),
        export_verified=report.receipts,
        truncated_exit=truncated.returncode,
        truncated_reported="TRUNCATED" in truncated.stdout,
        restore_output=(restored.stdout + restored.stderr).strip(),
        truncated_output=(truncated.stdout + truncated.stderr).strip(),
    )


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench restore", description=__doc__)
    parser.add_argument("--receipts", type=int, default=2000, help="receipts in the backup")
    parser.add_argument("--tail", type=int, default=200, help="receipts after the backup")
    args = parser.parse_args(argv)
    with embedded_postgres() as pg, tempfile.TemporaryDirectory(prefix="ctxgw-restore-") as tmp:
        source = new_database(pg, "bench_restore_source", writes_per_second=None)
        with psycopg.connect(source.url, autocommit=True) as conn:
            auditor = issue_key(conn, tenant_id=source.tenant_id, role="auditor", namespaces=["*"])
        work = Path(tmp)
        work.chmod(0o755)
        result = restore_run(pg, source, auditor.key, work, before=args.receipts, after=args.tail)
    print(result.restore_output)
    print(result.truncated_output)
    print(write_result("restore", {"args": vars(args), "result": asdict(result)}))
    clean = (
        result.restore_exit == 0
        and result.verified == result.restored == result.backed_up
        and result.next_chains_to_head
        and result.truncated_exit == 1
        and result.truncated_reported
    )
    print(
        f"restore: {result.restored} receipts, {result.verified} verified, "
        + ("chain continues" if result.next_chains_to_head else "chain does NOT continue")
        + f" (seq {result.next_seq}, export of {result.export_verified} verified), "
        + ("truncated restore detected" if result.truncated_reported else "truncation NOT detected")
        + f"; backup {result.backup_seconds:.1f} s, restore {result.restore_seconds:.1f} s"
    )
    return 0 if clean else 1
