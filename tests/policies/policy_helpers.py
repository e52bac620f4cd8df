"""Builders shared by the policy tests: bundles from rule snippets, complete memories, a request."""

from __future__ import annotations

import textwrap
from datetime import UTC, datetime, timedelta

from policies import Bundle, LoadedBundle, load_bundle

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)

REQUEST: dict[str, object] = {
    "tenant": "acme",
    "agent_id": "support-bot",
    "role": "agent",
    "purpose": "support",
    "namespaces": ["eng", "public"],
    "budget_tokens": 4000,
}


def loaded(rules: str = "", **spec: str) -> LoadedBundle:
    """A bundle from a YAML snippet of rules (a list, indented freely) and spec settings."""
    settings = {"default_decision": "allow", **spec}
    lines = [
        "apiVersion: ctxgw/v1",
        "kind: PolicyBundle",
        "metadata: {name: test}",
        "spec:",
        *(f"  {key}: {value}" for key, value in settings.items()),
    ]
    body = textwrap.dedent(rules).strip("\n")
    if body:
        lines.append("  rules:")
        lines.extend("    " + line for line in body.splitlines())
    return load_bundle("\n".join(lines) + "\n", "test.yaml")


def bundle(rules: str = "", **spec: str) -> Bundle:
    return loaded(rules, **spec).bundle


def memory(memory_id: str = "m1", /, **fields: object) -> dict[str, object]:
    """A complete memory as the gateway passes it; `fields` override the defaults."""
    base: dict[str, object] = {
        "memory_id": memory_id,
        "namespace": "eng",
        "memory_type": "semantic",
        "heading": "Deploy runbook",
        "content": "Roll out with the canary first.",
        "confidence": 0.9,
        "labels": [],
        "source_type": "chat",
        "source_ref": "chat://1",
        "created_at": NOW - timedelta(days=1),
        "expires_at": None,
        "tokens": 10,
    }
    base.update(fields)
    return base
