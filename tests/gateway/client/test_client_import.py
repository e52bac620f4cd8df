"""Importing the client pulls in nothing of the server: an agent's process stays light."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

SERVER = ("litestar", "uvicorn", "psycopg", "psycopg_pool", "pgvector", "policies", "receipts")
SERVER_MODULES = (
    "gateway.http",
    "gateway.store",
    "gateway.usecases",
    "gateway.core",
    "gateway.shell.runtime",
    "gateway.shell.settings",
    "gateway.embedding",
)


@pytest.mark.parametrize(
    ("module", "framework"),
    [
        ("gateway.client", "httpx"),
        ("gateway.client.langchain", "langchain_core"),
        ("gateway.client.langgraph", "langgraph.store.base"),
        ("gateway.client.llamaindex", "llama_index.core"),
    ],
)
def test_importing_the_client_imports_no_server_module(module: str, framework: str) -> None:
    """The client and each framework adapter on it: the framework comes, the server does not."""
    probe = f"import json, sys, {module}; print(json.dumps(sorted(sys.modules)))"
    loaded = json.loads(
        subprocess.run(
            [sys.executable, "-c", probe], capture_output=True, text=True, check=True
        ).stdout
    )
    assert module in loaded and framework in loaded  # the probe saw the import
    heavy = [m for m in loaded if m.split(".")[0] in SERVER or m.startswith(SERVER_MODULES)]
    assert heavy == []
