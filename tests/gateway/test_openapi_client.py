"""A client generated from the gateway's OpenAPI document by a standard generator
(openapi-python-client, run here as a user would run it) imports, sends the key the document
declares, and talks to a real gateway: a memory written, a context bundle with its receipt, a
problem parsed as the documented `Problem`."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest

from tests.conftest import Key

PACKAGE = "ctxgw_generated"
GENERATOR = Path(sys.executable).with_name("openapi-python-client")


@pytest.fixture
def generated(served: str, tmp_path: Path) -> Iterator[ModuleType]:
    document = tmp_path / "openapi.json"
    document.write_bytes(httpx.get(f"{served}/schema/openapi.json").content)
    # The generator formats its output with ruff, found on PATH (the project's own, in the venv).
    environment = {**os.environ, "PATH": f"{GENERATOR.parent}{os.pathsep}{os.environ['PATH']}"}
    run = subprocess.run(
        [str(GENERATOR), "generate", "--path", str(document), "--meta", "none",
         "--output-path", str(tmp_path / PACKAGE)],
        capture_output=True, text=True, env=environment, timeout=300, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    # Every operation but two is generated: the generator reads no YAML request body (policy
    # upload) and no JSONL response (export); both are documented all the same.
    said = run.stdout + run.stderr
    skipped = {line for line in said.splitlines() if line.startswith("WARNING parsing")}
    assert skipped == {
        "WARNING parsing GET /v1/receipts/export within receipts.",
        "WARNING parsing POST /v1/policies within policies. Endpoint will not be generated.",
    }, said
    sys.path.insert(0, str(tmp_path))
    try:
        yield importlib.import_module(PACKAGE)
    finally:
        sys.path.remove(str(tmp_path))
        for name in [m for m in sys.modules if m == PACKAGE or m.startswith(f"{PACKAGE}.")]:
            del sys.modules[name]


def _module(name: str) -> Any:
    return importlib.import_module(f"{PACKAGE}.{name}")


def test_a_generated_client_makes_an_authenticated_call(
    generated: ModuleType, served: str, agent: Key
) -> None:
    models = _module("models")
    write_memory = _module("api.memories.write_memory")
    get_context = _module("api.disclosure.get_context")
    get_health = _module("api.operations.get_health")

    client = generated.AuthenticatedClient(base_url=served, token=agent.key)
    with client:
        memory = models.MemoryIn(
            namespace="ops", heading="Rollback", content="Run atlasctl rollback, then verify."
        )
        written = write_memory.sync_detailed(client=client, body=memory)
        assert written.status_code == 201
        assert isinstance(written.parsed, models.Written) and written.parsed.created

        task = models.ContextIn(task="how do I roll back", budget_tokens=300)
        bundle = get_context.sync(client=client, body=task)
        assert isinstance(bundle, models.ContextBundle)
        assert [m.memory_id for m in bundle.included] == [written.parsed.memory_id]
        assert bundle.receipt_id  # the call was receipted like any other

    # Without the key: the documented problem, parsed as the generated Problem.
    anonymous = generated.Client(base_url=served)
    with anonymous:
        refused = get_context.sync_detailed(client=anonymous, body=task)
        assert refused.status_code == 401
        assert isinstance(refused.parsed, models.Problem) and refused.parsed.code
        health = get_health.sync(client=anonymous)
        assert isinstance(health, models.Health) and health.status == "ok"
