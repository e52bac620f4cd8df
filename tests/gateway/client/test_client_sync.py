"""The sync client against the real gateway over HTTP: every v1 endpoint, typed results."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from gateway.client import (
    Client,
    ConflictError,
    Exported,
    NewMemory,
    NewTurn,
    PolicyRefusedError,
)
from gateway.responses.disclosures import ContextReplay, RefusalReplay
from gateway.shell.settings import Settings
from tests.conftest import Key, KeyFactory
from tests.gateway.test_policies_api import STRICT

TOPICS = (
    ("Rollback procedure", "Run atlasctl rollback --to <sha>, then page the on-call."),
    ("Deploy window", "Deploys happen Tuesday and Thursday mornings."),
    ("Refund rule", "Refunds above 200 EUR need a team lead."),
    ("Support hours", "Support answers from 07:00 to 22:00 CET on weekdays."),
)


def seeded(ctxgw: Client) -> list[str]:
    written = ctxgw.write_batch(
        [NewMemory(namespace="ops", heading=h, content=c, confidence=0.9) for h, c in TOPICS]
    )
    assert (written.written, written.failed) == (len(TOPICS), 0)
    return [str(item.memory_id) for item in written.items]


def test_the_agent_loop(served: str, agent: Key) -> None:
    with Client(agent.key, served) as ctxgw:
        assert ctxgw.health().status == "ok" and ctxgw.ready().status == "ready"
        ids = seeded(ctxgw)
        written = ctxgw.write_memory(
            "ops", "Escalation", "Escalate to the platform on-call after 15 minutes.",
            memory_type="procedural", labels=["oncall"],
        )  # fmt: skip
        assert written.created and len(written.memory_id) == 26

        bundle = ctxgw.context("how do I run a rollback?", budget_tokens=400, top_k=2)
        assert "atlasctl rollback" in bundle.bundle
        assert bundle.included[0].memory_id == ids[0] and bundle.tokens_used <= 400
        assert bundle.refs[bundle.included[0].ref] == ids[0]

        hits = ctxgw.search("refund", limit=2)
        assert hits.results[0].memory_id == ids[2] and hits.receipt_id != bundle.receipt_id
        timeline = ctxgw.timeline([ids[2]])
        assert [entry.memory_id for entry in timeline.entries] == [ids[2]]
        fetched = ctxgw.fetch([ids[2], written.memory_id])
        assert {m.content for m in fetched.memories} >= {TOPICS[2][1]}

        deleted = ctxgw.delete_memory(ids[3], "obsolete")
        assert deleted.memory_id == ids[3] and deleted.deleted_at.endswith("Z")
        with pytest.raises(ConflictError) as conflict:
            ctxgw.delete_memory(ids[3], "again")
        assert conflict.value.status == 409
        assert ids[3] in {m.memory_id for m in ctxgw.fetch([ids[3]]).withheld}


def test_the_auditor_reads_pages_verifies_and_exports(
    served: str, agent: Key, make_key: KeyFactory, settings: Settings, tmp_path: Path
) -> None:
    auditor = make_key(role="auditor")
    with Client(agent.key, served) as ctxgw:
        seeded(ctxgw)
        asked = [ctxgw.search(f"question {n}").receipt_id for n in range(5)]
    with Client(auditor.key, served) as audit:
        detail = audit.receipt(asked[0])
        assert (detail.kind, detail.receipt_id) == ("search", asked[0])
        assert detail.body is not None and detail.body["receipt_id"] == asked[0]
        # Pages of two follow the cursor to the end, in log order, and miss nothing.
        paged = [r.receipt_id for r in audit.iter_receipts(page_size=2)]
        assert paged == asked == [r.receipt_id for r in audit.receipts(limit=100).receipts]
        assert audit.receipts(limit=2).next_cursor is not None
        assert [r.receipt_id for r in audit.iter_receipts(kind="context")] == []

        verification = audit.verify_receipt(asked[1])
        assert verification.valid and {c.name for c in verification.checks} >= {"signature"}
        proof = audit.receipt_proof(asked[1])
        assert proof.tree_size >= 2 and proof.checkpoint == audit.checkpoint()

        out = tmp_path / "out"
        out.mkdir()
        exported = audit.export_receipts(out / "export.jsonl")
        text = (out / "export.jsonl").read_text()
        assert exported.lines == len(text.splitlines()) == len(asked) + 1
        assert list(out.iterdir()) == [out / "export.jsonl"]  # no temporary left
        into = io.BytesIO()
        again = audit.export_receipts(into)
        assert again == Exported(exported.lines, exported.bytes, exported.sha256)
        assert into.getvalue() == text.encode()
    keyring = settings.data_dir / "keys" / "keyring.json"
    verified = subprocess.run(
        [sys.executable, "-m", "receipts", "verify", str(out / "export.jsonl"),
         "--keyring", str(keyring)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert verified.returncode == 0, verified.stdout + verified.stderr


def test_the_admin_manages_policies_and_replays(
    served: str, agent: Key, make_key: KeyFactory
) -> None:
    admin = make_key(role="admin")
    with Client(agent.key, served) as ctxgw, Client(admin.key, served) as boss:
        seeded(ctxgw)
        before = ctxgw.context("how do I run a rollback?", budget_tokens=300)
        uploaded = boss.upload_policy(STRICT.decode(), filename="strict.yaml")
        assert uploaded.created and boss.upload_policy(STRICT).created is False
        activated = boss.activate_policy(uploaded.digest, "enforce")
        assert activated.mode == "enforce"
        active = boss.active_policy()
        assert (active.digest, active.activated) == (uploaded.digest, True)
        assert boss.policy(uploaded.digest).source == STRICT.decode()

        with pytest.raises(PolicyRefusedError) as refused:
            ctxgw.context("how do I run a rollback?")
        assert refused.value.code == "policy_refused" and refused.value.receipt_id

        replayed = boss.replay(before.receipt_id, "exact")
        assert isinstance(replayed, ContextReplay) and replayed.identical
        again = boss.replay(str(refused.value.receipt_id), "exact")
        assert isinstance(again, RefusalReplay) and again.original.outcome == "refuse"
        report = boss.what_if(policy_digest=uploaded.digest, last=10)
        assert report.policy_digest == uploaded.digest and report.receipts_evaluated >= 1
    assert json.loads(json.dumps(report.rule_hits)) == report.rule_hits


def test_a_session_through_the_client(served: str, agent: Key) -> None:
    with Client(agent.key, served) as ctxgw:
        opened = ctxgw.create_session("chat", "Plan the Lisbon trip", budget_tokens=400)
        again = ctxgw.session(opened.session_id)
        assert opened.created and again.session_id == opened.session_id
        turns = [NewTurn(role="user", content=f"Day {n}: museum {n} opens at 10:00.") for n in range(7)]  # fmt: skip
        first = ctxgw.append_turns(opened.session_id, turns[:5], idempotency_key="append-1")
        retried = ctxgw.append_turns(opened.session_id, turns[:5], idempotency_key="append-1")
        assert (first.first_seq, first.last_seq) == (1, 5) and not retried.created
        ctxgw.append_turns(opened.session_id, turns[5:])
        step = ctxgw.session_context(opened.session_id, purpose="planning")
        assert step.tokens_used <= 400 and step.turns.last_seq == 7 and step.receipt_id
        assert ctxgw.session(opened.session_id).turn_count == 7
        pages = [turn.seq for turn in ctxgw.iter_history(opened.session_id, page_size=3)]
        assert pages == list(range(1, 8))  # three pages, followed to the end
