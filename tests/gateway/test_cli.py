"""The `ctxgw` command, run as a user runs it: separate processes on a real data directory."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

CTXGW = [sys.executable, "-m", "gateway"]


def run(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GATEWAY_DATA_DIR": str(data_dir)}
    env.pop("GATEWAY_DATABASE_URL", None)
    return subprocess.run(
        [*CTXGW, *args], env=env, capture_output=True, text=True, timeout=120, check=False
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def data_dir() -> Iterator[Path]:
    """A data dir outside pytest's basetemp: the embedded server runs as another system user and
    needs to traverse the path, which a concurrent pytest session may re-restrict to 0700."""
    with tempfile.TemporaryDirectory(prefix="ctxgw-cli-") as directory:
        yield Path(directory)


@pytest.fixture
def server(data_dir: Path) -> Iterator[tuple[Path, str, subprocess.Popen[str]]]:
    port = free_port()
    env = {**os.environ, "GATEWAY_DATA_DIR": str(data_dir)}
    env.pop("GATEWAY_DATABASE_URL", None)
    process = subprocess.Popen(
        [*CTXGW, "serve", "--demo", "--port", str(port)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{base}/readyz", timeout=1).status_code == 200:
                break
        except httpx.TransportError:
            time.sleep(0.2)
    else:
        process.kill()
        pytest.fail(f"the gateway did not become ready:\n{process.communicate()[0]}")
    yield data_dir, base, process
    process.terminate()
    process.communicate(timeout=30)


def test_keys_create_list_revoke(data_dir: Path) -> None:
    created = run(data_dir, "keys", "create", "--tenant", "acme", "--role", "agent",
                  "--namespaces", "ops,support", "--agent-id", "bot", "--json")  # fmt: skip
    assert created.returncode == 0, created.stderr
    issued = json.loads(created.stdout)
    assert set(issued) == {"key", "key_id", "tenant_id"}
    assert issued["tenant_id"] == "acme" and issued["key"].startswith("ctxgw.acme.")

    listed = json.loads(run(data_dir, "keys", "list", "--json").stdout)
    assert [(k["key_id"], k["namespaces"], k["revoked_at"]) for k in listed] == [
        (issued["key_id"], ["ops", "support"], None)
    ]
    assert issued["key"] not in json.dumps(listed)  # the secret is never shown again

    assert run(data_dir, "keys", "revoke", issued["key_id"]).returncode == 0
    assert run(data_dir, "keys", "revoke", issued["key_id"]).returncode == 1
    assert json.loads(run(data_dir, "keys", "list", "--json").stdout)[0]["revoked_at"]


def test_bad_tenant_and_bad_settings_are_reported(data_dir: Path) -> None:

    bad = run(data_dir, "keys", "create", "--tenant", "Not Valid", "--role", "agent")
    assert bad.returncode == 1 and "tenant" in bad.stderr
    env = {**os.environ, "GATEWAY_PORT": "99999", "GATEWAY_EMBEDDER": "magic"}
    result = subprocess.run([*CTXGW, "migrate"], env=env, capture_output=True, text=True,
                            timeout=60, check=False)  # fmt: skip
    assert result.returncode == 2
    assert "GATEWAY_PORT" in result.stderr and "GATEWAY_EMBEDDER" in result.stderr


def test_serve_demo_works_and_keys_can_be_made_beside_it(
    server: tuple[Path, str, subprocess.Popen[str]],
) -> None:
    data_dir, base, _ = server
    demo = json.loads((data_dir / "demo-keys.json").read_text())
    assert set(demo) == {"tenant_id", "admin", "agent", "planner", "coder"}
    agent = {"Authorization": f"Bearer {demo['agent']}"}
    written = httpx.post(
        f"{base}/v1/memories",
        json={"namespace": "atlas", "heading": "From the test", "content": "hello"},
        headers=agent,
    )
    assert written.status_code == 201, written.text
    assert httpx.get(f"{base}/schema/openapi.json").status_code == 200

    # A second process on the same data dir, while the server runs.
    created = run(data_dir, "keys", "create", "--tenant", "demo", "--role", "agent", "--json")
    assert created.returncode == 0, created.stderr
    new_key = json.loads(created.stdout)["key"]
    memory_id = written.json()["memory_id"]
    fetched = httpx.post(f"{base}/v1/fetch", json={"ids": [memory_id]},
                         headers={"Authorization": f"Bearer {new_key}"})  # fmt: skip
    assert fetched.json()["memories"][0]["heading"] == "From the test"
    assert httpx.get(f"{base}/readyz").status_code == 200  # the server survived the CLI exiting


def test_serve_demo_twice_reuses_data_and_keys(data_dir: Path) -> None:

    port = free_port()
    env = {**os.environ, "GATEWAY_DATA_DIR": str(data_dir)}
    env.pop("GATEWAY_DATABASE_URL", None)
    keys: list[dict[str, str]] = []
    for _ in range(2):
        process = subprocess.Popen([*CTXGW, "serve", "--demo", "--port", str(port)], env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)  # fmt: skip
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.2)
        keys.append(json.loads((data_dir / "demo-keys.json").read_text()))
        process.terminate()
        process.communicate(timeout=30)
    assert keys[0] == keys[1]
    listed = json.loads(run(data_dir, "keys", "list", "--json").stdout)
    assert len(listed) == 4  # admin, agent, and the planner and coder of the two-agent demo


def test_sweep_prints_the_curve_and_draws_it(
    server: tuple[Path, str, subprocess.Popen[str]], tmp_path: Path
) -> None:
    data_dir, base, _ = server
    demo = json.loads((data_dir / "demo-keys.json").read_text())
    chart = tmp_path / "curve.svg"
    result = run(data_dir, "sweep", "How do I roll back an Atlas deploy?", "--url", base,
                 "--key", demo["agent"], "--budgets", "150,600,2400", "--chart", str(chart))  # fmt: skip
    assert result.returncode == 0, result.stderr
    rows = [
        line
        for line in result.stdout.splitlines()
        if line.startswith("| 1") or line.startswith("| 6") or line.startswith("| 2")
    ]
    assert [row.split("|")[1].strip() for row in rows] == ["150", "600", "2400"]
    admitted = [int(row.split("|")[2]) for row in rows]
    assert admitted == sorted(admitted) and admitted[-1] > admitted[0]
    assert chart.read_text().startswith("<svg") and "polyline" in chart.read_text()


def test_demo_shows_a_bundle_on_start(server: tuple[Path, str, subprocess.Popen[str]]) -> None:
    _, _, process = server
    assert process.stdout is not None
    seen: list[str] = []
    reader = threading.Thread(
        target=lambda: seen.extend(iter(process.stdout.readline, "")),  # type: ignore[union-attr]
        daemon=True,
    )
    reader.start()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not any("Try it yourself" in line for line in seen):
        time.sleep(0.2)
    output = "".join(seen)
    assert "# Context from memory" in output
    assert "receipt " in output and "/verify" in output


def test_serve_with_two_workers(data_dir: Path) -> None:
    port = free_port()
    env = {**os.environ, "GATEWAY_DATA_DIR": str(data_dir)}
    env.pop("GATEWAY_DATABASE_URL", None)
    process = subprocess.Popen([*CTXGW, "serve", "--demo", "--workers", "2", "--port", str(port)],
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 90
        ready = False
        while time.monotonic() < deadline and not ready:
            try:
                ready = httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=1).status_code == 200
            except httpx.TransportError:
                time.sleep(0.3)
        assert ready
        agent = json.loads((data_dir / "demo-keys.json").read_text())["agent"]
        headers = {"Authorization": f"Bearer {agent}"}
        statuses = {httpx.post(f"http://127.0.0.1:{port}/v1/search", json={"query": "rollback"},
                               headers=headers, timeout=30).status_code for _ in range(6)}  # fmt: skip
        assert statuses == {200}
        # Whichever worker answers the scrape, it sums every worker's counts (multiprocess mode).
        scraped = {httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=30).text for _ in range(4)}
    finally:
        process.terminate()  # SIGTERM to the supervisor: it stops both workers, then PostgreSQL
        output = process.communicate(timeout=60)[0]
    assert output.count("Started server process") == 2
    assert output.count("Finished server process") == 2, output
    assert process.returncode == 0, output
    searches = 'ctxgw_http_requests_total{method="POST",route="/v1/search",status="200"} 6.0'
    assert all(searches in text for text in scraped), scraped
    deadline = time.monotonic() + 10
    while _postgres_running(data_dir) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _postgres_running(data_dir)
    assert _handles(data_dir) == []


def test_session_create_append_from_jsonl_and_print_a_context(
    server: tuple[Path, str, subprocess.Popen[str]], tmp_path: Path
) -> None:
    data_dir, base, _ = server
    created = run(data_dir, "session", "--url", base, "create", "--namespace", "chat",
                  "--task", "Plan a trip to Lisbon", "--budget", "500")  # fmt: skip
    assert created.returncode == 0, created.stderr
    session_id = created.stdout.strip()
    turns = tmp_path / "turns.jsonl"
    lines = [
        json.dumps(
            {"role": "user" if i % 2 == 0 else "assistant", "content": f"Turn {i}: museum {i}."}
        )
        for i in range(150)
    ]
    turns.write_text("\n".join(lines) + "\n")
    appended = run(data_dir, "session", "--url", base, "append", session_id, str(turns))
    assert appended.returncode == 0, appended.stderr
    assert appended.stdout.strip() == "appended turns 1..150"  # two appends: 100, then 50
    shown = run(data_dir, "session", "--url", base, "context", session_id)
    assert shown.returncode == 0, shown.stderr
    assert "Task: Plan a trip to Lisbon" in shown.stdout and "Turn 149: museum 149." in shown.stdout
    assert "/500 tokens" in shown.stderr
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"role": "user", "content": "ok"}\nnot json\n')
    failed = run(data_dir, "session", "--url", base, "append", session_id, str(bad))
    assert failed.returncode == 2 and "line 2 is not JSON" in failed.stderr
    refused = run(data_dir, "session", "--url", base, "context", session_id, "--budget", "10")
    assert refused.returncode == 1 and "minimum" in refused.stderr


def _postgres_running(data_dir: Path) -> bool:
    """Whether the embedded PostgreSQL of `data_dir` runs (its postmaster.pid names a live pid)."""
    try:
        pid = int((data_dir / "pg" / "postmaster.pid").read_text().split("\n", 1)[0])
    except (OSError, ValueError):
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _handles(data_dir: Path) -> list[int]:
    """pgserver's list of the processes using the server (the file's shape is pgserver's)."""
    path = data_dir / "pg" / ".handle_pids.json"
    return list(json.loads(path.read_text() or "[]")) if path.exists() else []


def test_sigterm_stops_the_gateway_and_its_embedded_postgres(
    server: tuple[Path, str, subprocess.Popen[str]],
) -> None:
    data_dir, _, process = server
    assert _postgres_running(data_dir) and process.pid in _handles(data_dir)
    process.terminate()  # SIGTERM, as a service manager (or a user's kill) sends it
    process.communicate(timeout=30)
    assert process.returncode == 0
    deadline = time.monotonic() + 10
    while _postgres_running(data_dir) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _postgres_running(data_dir)
    assert _handles(data_dir) == []


def test_a_killed_process_does_not_keep_postgres_running_after_the_next_clean_exit(
    data_dir: Path,
) -> None:
    assert run(data_dir, "keys", "create", "--tenant", "acme", "--role", "agent").returncode == 0
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    # What kill -9 leaves behind: a pid in the handle file whose process no longer exists.
    (data_dir / "pg" / ".handle_pids.json").write_text(json.dumps([int(gone.stdout)]))
    listed = run(data_dir, "keys", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert not _postgres_running(data_dir) and _handles(data_dir) == []


def test_keys_say_which_data_dir_and_start_no_second_database_unasked(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("GATEWAY_DATA_DIR", "GATEWAY_DATABASE_URL")}  # fmt: skip
    ask = [*CTXGW, "keys", "list"]
    refused = subprocess.run(ask, env=env, cwd=tmp_path, capture_output=True, text=True,
                             timeout=120, check=False)  # fmt: skip
    assert refused.returncode == 2
    assert (
        str((tmp_path / ".ctxgw").resolve()) in refused.stderr
        and "--new-data-dir" in refused.stderr
    )
    assert not (tmp_path / ".ctxgw" / "pg").exists()
    told = subprocess.run([*CTXGW, "keys", "--new-data-dir", "list"], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    assert told.returncode == 0, told.stderr
    assert "embedded PostgreSQL" not in told.stderr and "no database yet" in told.stderr
    again = subprocess.run(ask, env=env, cwd=tmp_path, capture_output=True, text=True,
                           timeout=120, check=False)  # fmt: skip
    assert again.returncode == 0 and "embedded PostgreSQL" in again.stderr


def test_keys_export_public_writes_a_keyring_without_secrets(tmp_path: Path) -> None:
    # The keys a gateway generates on first start, as `ctxgw serve` would (no database needed).
    from gateway.shell.settings import Settings
    from gateway.shell.signing import load_signer

    load_signer(Settings(data_dir=tmp_path))
    full = json.loads((tmp_path / "keys" / "keyring.json").read_text())
    out = tmp_path / "keyring.public.json"
    written = run(tmp_path, "keys", "export-public", "-o", str(out))
    assert written.returncode == 0, written.stderr
    public = json.loads(out.read_text())
    assert public["hmac"] == [] and public["ed25519"] == full["ed25519"]
    text = out.read_text()
    assert all(k["secret"] not in text for k in full["hmac"]) and "PRIVATE" not in text
    assert oct(out.stat().st_mode & 0o777) == "0o644"
    again = run(tmp_path, "keys", "export-public", "-o", str(out))
    assert again.returncode == 2 and "--force" in again.stderr
    printed = run(tmp_path, "keys", "export-public")
    assert printed.returncode == 0 and json.loads(printed.stdout) == public
