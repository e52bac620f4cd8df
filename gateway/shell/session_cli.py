"""`ctxgw session`: create a session, append turns from a JSONL file, print a context — against
a running gateway over HTTP, as an agent would (the key decides who is asking)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

__all__ = ["add_parser", "run_session"]

BATCH = 100  # the most turns one append takes


def add_parser(commands: Any) -> None:
    session = commands.add_parser("session", help="create a session, append turns, get a context")
    session.add_argument("--url", help="gateway URL (default http://GATEWAY_HOST:GATEWAY_PORT)")
    session.add_argument("--key", help="agent key (default: the demo agent key in the data dir)")
    actions = session.add_subparsers(dest="session_command", required=True)
    create = actions.add_parser("create", help="open a session; prints its id")
    create.add_argument("--namespace", required=True)
    create.add_argument("--task", required=True)
    create.add_argument("--system-prompt")
    create.add_argument("--budget", type=int)
    create.add_argument("--keep-last", type=int)
    create.add_argument("--memory-budget", type=int)
    create.add_argument("--no-remember", action="store_true", help="do not remember turns")
    create.add_argument("--label", action="append", default=[])
    create.add_argument("--json", action="store_true", help="print the whole session")
    append = actions.add_parser("append", help="append turns from a JSONL file ('-': stdin)")
    append.add_argument("session_id")
    append.add_argument("file", help="one {role, content, name?, occurred_at?} per line")
    context = actions.add_parser("context", help="print the context for the next step")
    context.add_argument("session_id")
    context.add_argument("--query")
    context.add_argument("--budget", type=int)
    context.add_argument("--purpose")
    context.add_argument("--json", action="store_true", help="print the whole response")


class _BadLineError(ValueError):
    pass


def _turns(path: str) -> Iterator[dict[str, Any]]:
    lines = sys.stdin if path == "-" else Path(path).open(encoding="utf-8")  # noqa: SIM115
    with lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                yield json.loads(line)
            except json.JSONDecodeError:
                raise _BadLineError(f"line {number} is not JSON") from None


def _check(response: httpx.Response) -> dict[str, Any]:
    if response.status_code >= 400:
        problem = response.json() if response.content else {}
        fields = "; ".join(f"{e['field']}: {e['message']}" for e in problem.get("errors", []))
        raise RuntimeError(f"{response.status_code} {problem.get('detail', '')} {fields}".strip())
    body: dict[str, Any] = response.json()
    return body


def _create(client: httpx.Client, args: argparse.Namespace) -> int:
    body: dict[str, Any] = {"namespace": args.namespace, "task": args.task}
    optional = {
        "system_prompt": args.system_prompt,
        "budget_tokens": args.budget,
        "keep_last": args.keep_last,
        "memory_budget_tokens": args.memory_budget,
        "labels": args.label or None,
        "remember_turns": False if args.no_remember else None,
    }
    body |= {k: v for k, v in optional.items() if v is not None}
    created = _check(client.post("/v1/sessions", json=body))
    print(json.dumps(created, indent=2) if args.json else created["session_id"])
    return 0


def _append(client: httpx.Client, args: argparse.Namespace) -> int:
    """Every turn of the file, in order, in appends of at most `BATCH`."""
    spans: list[tuple[int, int]] = []
    batch: list[dict[str, Any]] = []

    def send() -> None:
        path = f"/v1/sessions/{args.session_id}/turns"
        done = _check(client.post(path, json={"turns": batch}))
        spans.append((done["first_seq"], done["last_seq"]))
        batch.clear()

    try:
        for turn in _turns(args.file):
            batch.append(turn)
            if len(batch) == BATCH:
                send()
    except _BadLineError as exc:
        print(f"ctxgw session append: {exc}", file=sys.stderr)
        return 2
    if batch:
        send()
    print(f"appended turns {spans[0][0]}..{spans[-1][1]}" if spans else "nothing to append")
    return 0


def _context(client: httpx.Client, args: argparse.Namespace) -> int:
    wanted = {"query": args.query, "budget_tokens": args.budget, "purpose": args.purpose}
    step = {k: v for k, v in wanted.items() if v is not None}
    result = _check(client.post(f"/v1/sessions/{args.session_id}/context", json=step))
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(result["text"])
    print(
        f"\n-- {result['tokens_used']}/{result['budget_tokens']} tokens, turns "
        f"{result['turns']['first_seq']}..{result['turns']['last_seq']} verbatim, "
        f"receipt {result['receipt_id']}",
        file=sys.stderr,
    )
    return 0


def run_session(args: argparse.Namespace, url: str, key: str) -> int:
    headers = {"Authorization": f"Bearer {key}"}
    actions = {"create": _create, "append": _append, "context": _context}
    with httpx.Client(base_url=url, headers=headers, timeout=120) as client:
        return actions[args.session_command](client, args)
