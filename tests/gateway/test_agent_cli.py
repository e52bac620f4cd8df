"""`ctxgw context` and `ctxgw search` print what the MCP tools return: the compact result within
`--budget`, counted with the gateway's tokenizer; `--json` the whole response. Against a real
gateway over HTTP, as a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from gateway.client import Client
from gateway.core.tokens import load_tokenizer
from tests.conftest import Key


def ctxgw(url: str, key: Key, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CTXGW_", "GATEWAY_"))}
    env |= {"CTXGW_URL": url, "CTXGW_API_KEY": key.key}
    command = [sys.executable, "-m", "gateway", *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=60, check=False)


def test_context_and_search_print_the_compact_result_within_the_budget(
    served: str, agent: Key
) -> None:
    with Client(agent.key, served) as client:
        for n in range(30):
            client.write_memory("ops", f"Rollback {n}", f"Run atlasctl rollback --to r{n}. " * 8)
    tokens = load_tokenizer()
    for command, text in (("context", "how do I roll back?"), ("search", "rollback")):
        printed = ctxgw(served, agent, command, text, "--budget", "300")
        assert printed.returncode == 0, printed.stderr
        assert tokens.count(printed.stdout.strip()) <= 300
        compact = json.loads(printed.stdout)
        assert compact["receipt_id"] and "policy" not in compact
        full = json.loads(ctxgw(served, agent, command, text, "--json").stdout)
        assert full["policy"] and full["receipt_id"] != compact["receipt_id"]
    assert "atlasctl rollback" in compact["results"][0]["snippet"]

    tiny = ctxgw(served, agent, "context", "rollback", "--budget", "10")
    assert tiny.returncode == 2 and "budget_too_small: " in tiny.stderr
    bad = ctxgw(served, agent, "search", "rollback", "--namespaces", "no spaces")
    assert bad.returncode == 1 and "invalid_request: " in bad.stderr
