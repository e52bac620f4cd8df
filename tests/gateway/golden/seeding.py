"""The scenario's first phase: the memories every golden receipt is made of (see `scenario`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tests.gateway.golden.scenario import Gateway, Key

__all__ = ["Written", "append", "instant", "memory", "open_session", "write_memories"]

SAID_AT = "2024-05-01T09:00:00Z"  # two writers' facts for one claim at one instant: a conflict
PLAN = (
    ("user", "We're on the Starter plan for Tallyworks, which caps us at 10 seats.", "2024-01-02T10:00:00Z"),
    ("assistant", "Noted.", "2024-01-02T10:00:05Z"),
    ("user", "Please upgrade us, we need more seats.", "2024-02-10T09:00:00Z"),
    ("assistant", "Done. Your Tallyworks workspace is now on the Premium plan with 25 seats.", "2024-02-10T09:00:05Z"),
)  # fmt: skip
# name: heading, content, fields beyond a semantic memory of confidence 0.9 in namespace ops
OPS: dict[str, tuple[str, str, dict[str, Any]]] = {
    "rollback": ("Rollback procedure", "Run atlasctl rollback --to <sha> and page the on-call engineer.", {"labels": ["runbook", "deploy"], "memory_type": "procedural"}),
    "schedule": ("Deploy schedule", "Deploys leave every Tuesday at 10:00 UTC from a clean main branch.", {"labels": ["deploy"]}),
    "database": ("Database version", "The ledger database runs PostgreSQL 16 with logical replication.", {"labels": ["database"]}),
    "support": ("Support hours", "Support answers 07:00 to 22:00 CET on weekdays: write to support@example.com or call +1 415 555 0100 before a rollback.", {"labels": ["support"]}),
    "refunds": ("Refund policy", "Refunds under 200 EUR need one approval from a team lead.", {"memory_type": "procedural"}),
    "holidays": ("Holiday rota", "The holiday rota covers 23 December to 2 January; no deploy or rollback then.", {}),
    "vault": ("Vault access", "The rollback vault PIN is kept by the on-call lead; never paste it in a ticket.", {"labels": ["secret"]}),
    "rumour": ("Rollback rumour", "Someone said a rollback is disabled on Fridays.", {"confidence": 0.1}),
    "incident": ("Current incident", "The rollback of deploy 4411 is in progress.", {"memory_type": "working", "confidence": 0.7}),
    "day": ("Deploy day", "Deploys go out on Tuesdays.", {"claim_key": "deploy.day"}),
    "salary": ("Rollback of salary changes", "HR rolls back salary changes by ticket, never by a deploy.", {"namespace": "hr"}),
}  # fmt: skip


def memory(heading: str, content: str, **fields: Any) -> dict[str, Any]:
    """A POST /v1/memories body: semantic, confidence 0.9, namespace ops unless `fields` say."""
    body = {"namespace": "ops", "memory_type": "semantic", "confidence": 0.9, **fields}
    return {"heading": heading, "content": content, **body}


def instant(at: datetime) -> str:
    return at.astimezone(UTC).isoformat().replace("+00:00", "Z")


@dataclass(frozen=True, slots=True)
class Written:
    """The ids the later phases name, and the instant an `as_of` bundle looks back to."""

    ids: dict[str, str]
    before_changes: datetime


async def open_session(gateway: Gateway, key: Key, namespace: str, task: str, **body: Any) -> str:
    asked = {"namespace": namespace, "task": task, **body}
    session = await gateway.call("POST", "/v1/sessions", key, asked, status=201)
    return str(session["session_id"])


async def append(gateway: Gateway, key: Key, session_id: str, *turns: dict[str, str]) -> None:
    await gateway.call("POST", f"/v1/sessions/{session_id}/turns", key, {"turns": list(turns)})


async def write_memories(gateway: Gateway, keys: dict[str, Key]) -> Written:
    """Labels, a claim key superseded by a newer value, an explicit new version, a deletion, an
    expiry, episodes, compiled facts (the newer plan superseding the older) and an open
    conflict between two writers."""
    agent = keys["agent"]
    items = {name: memory(h, c, **fields) for name, (h, c, fields) in OPS.items()}
    freeze_ends = instant(gateway.clock.now + timedelta(seconds=30))
    items["freeze"] = memory(
        "Freeze window", "No deploy and no rollback during the freeze.", expires_at=freeze_ends
    )
    for day in (3, 9, 17, 24):
        items[f"episode-{day}"] = memory(
            f"Rollback on {day} March",
            f"We ran a rollback of the deploy of {day} March after payment errors.",
            memory_type="episodic",
            confidence=0.8,
            source_type="incident",
            source_ref=f"INC-{day:04d}",
        )
    batch = await gateway.call("POST", "/v1/memories/batch", agent, {"items": list(items.values())})
    ids = {name: item["memory_id"] for name, item in zip(items, batch["items"], strict=True)}
    before_changes = gateway.clock.now
    newer = {
        "day-2": memory(
            "Deploy day", "Deploys go out on Thursdays since November.", claim_key="deploy.day"
        ),
        "database-2": memory(
            "Database version",
            "The ledger database runs PostgreSQL 17 since the November upgrade.",
            labels=["database"],
            supersedes=ids["database"],
        ),
    }
    for name, body in newer.items():
        ids[name] = (await gateway.call("POST", "/v1/memories", agent, body, status=201))[
            "memory_id"
        ]
    retired = {"reason": "replaced by the HR calendar"}
    await gateway.call("DELETE", f"/v1/memories/{ids['holidays']}", agent, retired)
    gateway.elapse(timedelta(minutes=1))  # the freeze window has expired
    plan = await open_session(gateway, agent, "account", "Keep the account up to date.")
    turns = [{"role": r, "content": c, "occurred_at": at} for r, c, at in PLAN]
    await append(gateway, agent, plan, *turns)
    await gateway.call("POST", "/v1/compile", agent, {"session_id": plan})
    for writer, team in (("planner", "Payments"), ("coder", "Fraud")):
        said = await open_session(gateway, keys[writer], "team", "Know the user's team.")
        turn = {"role": "user", "content": f"I'm on the {team} team.", "occurred_at": SAID_AT}
        await append(gateway, keys[writer], said, turn)
        await gateway.call("POST", "/v1/compile", keys[writer], {"session_id": said})
    return Written(ids, before_changes)
