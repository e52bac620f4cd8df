"""Erasure (ARCHITECTURE §14) through real HTTP: an admin erases a memory or a turn; afterwards
no path finds its text (vector, full-text, index, fetch, timeline, session history and context,
nor the row itself), a signed `erasure` receipt says what went, every older receipt still
verifies (on the server and offline) and exact replay answers `memory_erased`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import psycopg
import pytest
from litestar.testing import TestClient

from gateway.shell.settings import Settings
from tests.conftest import Key, KeyFactory
from tests.gateway.sessions_helpers import append, context, open_session
from tests.gateway.test_compile import plan_session
from tests.gateway.test_memories_write import write

# A word no other text holds, so any answer that still carries it leaks the erased text.
RARE_WORD = "Quixotrand"
# Eight digits, so no id, hash or signature in an answer holds it by chance (four did: a ULID's
# random part once read "...KFRA4471WX...").
VAULT_CODE = "44719083"


def _every_answer(client: TestClient[Any], key: Key, memory_id: str) -> str:
    """What the agent can get back about the memory, by every read path, as one text."""
    asks = [
        ("/v1/search", {"query": f"{RARE_WORD} vault code"}),
        ("/v1/context", {"task": f"What is the {RARE_WORD} vault code?"}),
        ("/v1/context", {"task": "anything", "index_budget_tokens": 2000}),
        ("/v1/fetch", {"ids": [memory_id]}),
        ("/v1/timeline", {"ids": [memory_id]}),
    ]
    answers = []
    for path, body in asks:
        response = client.post(path, json=body, headers=key.headers)
        assert response.status_code == 200, (path, response.text)
        answers.append(response.text)
    return "\n".join(answers)


@pytest.fixture
def admin(make_key: KeyFactory) -> Key:
    return make_key(role="admin", agent_id=None)


def test_an_erased_memory_is_found_by_no_path_and_older_receipts_still_verify(
    client: TestClient[Any],
    agent: Key,
    admin: Key,
    make_key: KeyFactory,
    database_url: str,
    settings: Settings,
    tmp_path: Path,
) -> None:
    written = write(client, agent, heading=f"{RARE_WORD} vault", content=f"The {RARE_WORD} vault code is {VAULT_CODE}.")  # fmt: skip
    memory_id = written.json()["memory_id"]
    assert write(client, agent, heading="Lunch", content="Lunch is at noon.").status_code == 201
    before = _every_answer(client, agent, memory_id)
    assert RARE_WORD in before and VAULT_CODE in before  # the paths do find it while it exists
    original = client.post("/v1/context", json={"task": f"{RARE_WORD} vault code"}, headers=agent.headers).json()  # fmt: skip

    erased = client.post(f"/v1/memories/{memory_id}/erase", json={"reason": "subject request"}, headers=admin.headers)  # fmt: skip
    assert erased.status_code == 200, erased.text
    body = erased.json()
    assert body["memories"] == [memory_id] and body["turns"] == [] and body["reason"] == "subject request"  # fmt: skip

    after = _every_answer(client, agent, memory_id)
    assert RARE_WORD not in after and VAULT_CODE not in after
    with psycopg.connect(database_url) as conn:
        row = conn.execute(
            "SELECT heading, content, embedding IS NULL, tsv::text, erased_at IS NOT NULL"
            " FROM memories WHERE memory_id = %s",
            (memory_id,),
        ).fetchone()
        searched = conn.execute(
            "SELECT count(*) FROM memories WHERE tsv @@ to_tsquery('english', %s)", (RARE_WORD,)
        ).fetchone()
    assert row == ("", "", True, "", True) and searched == (0,)

    auditor = make_key(role="auditor")
    receipt = client.get(f"/v1/receipts/{body['receipt_id']}", headers=auditor.headers).json()
    assert receipt["kind"] == "erasure"
    assert receipt["body"]["erasure"]["memories"] == [memory_id]
    assert RARE_WORD not in str(receipt)
    verified = client.get(f"/v1/receipts/{original['receipt_id']}/verify", headers=auditor.headers)
    assert verified.json()["valid"] is True
    export = client.get("/v1/receipts/export", headers=auditor.headers)
    (tmp_path / "export.jsonl").write_text(export.text)
    keyring = settings.data_dir / "keys" / "keyring.json"
    offline = subprocess.run(
        [
            sys.executable,
            "-m",
            "receipts",
            "verify",
            str(tmp_path / "export.jsonl"),
            "--keyring",
            str(keyring),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert offline.returncode == 0, offline.stdout + offline.stderr

    replayed = client.post(
        f"/v1/receipts/{original['receipt_id']}/replay",
        json={"mode": "exact"},
        headers=auditor.headers,
    ).json()
    assert {(p["code"], p["memory_id"]) for p in replayed["problems"]} >= {("memory_erased", memory_id)}  # fmt: skip
    assert RARE_WORD not in str(replayed)


def test_erasure_is_for_admins_once_and_within_their_namespaces(
    client: TestClient[Any], agent: Key, admin: Key, make_key: KeyFactory
) -> None:
    memory_id = write(client, agent, namespace="hr").json()["memory_id"]
    ask = {"reason": "subject request"}
    assert client.post(f"/v1/memories/{memory_id}/erase", json=ask, headers=agent.headers).status_code == 403  # fmt: skip
    ops_admin = make_key(role="admin", namespaces=("ops",), agent_id=None)
    assert client.post(f"/v1/memories/{memory_id}/erase", json=ask, headers=ops_admin.headers).status_code == 404  # fmt: skip
    other = make_key(tenant="globex", role="admin", agent_id=None)
    assert client.post(f"/v1/memories/{memory_id}/erase", json=ask, headers=other.headers).status_code == 404  # fmt: skip
    bad = client.post(f"/v1/memories/{memory_id}/erase", json={"reason": ""}, headers=admin.headers)
    assert bad.status_code == 422 and "reason" in bad.text
    assert client.post(f"/v1/memories/{memory_id}/erase", json=ask, headers=admin.headers).status_code == 200  # fmt: skip
    again = client.post(f"/v1/memories/{memory_id}/erase", json=ask, headers=admin.headers)
    assert again.status_code == 409 and again.json()["code"] == "already_erased"


def test_an_erased_turn_takes_its_summaries_and_remembered_memories(
    client: TestClient[Any], agent: Key, admin: Key, database_url: str
) -> None:
    session_id = open_session(client, agent, budget_tokens=400, keep_last=2)["session_id"]
    said = append(
        client, agent, session_id, ("user", f"My {RARE_WORD} vault code is {VAULT_CODE}.")
    )
    assert said.status_code == 200, said.text
    for i in range(24):  # more than the verbatim turns' share holds
        append(client, agent, session_id, ("user", f"Day {i}: we visit museum {i} in Lisbon."))
    compacted = context(client, agent, session_id).json()
    assert compacted["summary"] is not None  # the first turn was folded into a summary
    history = client.get(f"/v1/sessions/{session_id}/turns", headers=agent.headers)
    assert RARE_WORD in history.text

    erased = client.post(f"/v1/sessions/{session_id}/turns/1/erase", json={"reason": "subject request"}, headers=admin.headers)  # fmt: skip
    assert erased.status_code == 200, erased.text
    body = erased.json()
    assert len(body["turns"]) == 1 and body["summaries"] == [compacted["summary"]["summary_id"]]
    assert len(body["memories"]) == 1  # the turn as remembered (remember_turns)

    history = client.get(f"/v1/sessions/{session_id}/turns", headers=agent.headers)
    assert history.status_code == 200 and RARE_WORD not in history.text
    fresh = context(client, agent, session_id)
    assert fresh.status_code == 200 and RARE_WORD not in fresh.text and VAULT_CODE not in fresh.text
    search = client.post(
        "/v1/search", json={"query": f"{RARE_WORD} vault code"}, headers=agent.headers
    )
    assert RARE_WORD not in search.text
    with psycopg.connect(database_url) as conn:
        leftovers = conn.execute(
            "SELECT (SELECT count(*) FROM session_turns WHERE content LIKE %(s)s)"
            " + (SELECT count(*) FROM session_summaries WHERE text LIKE %(s)s)"
            " + (SELECT count(*) FROM memories WHERE content LIKE %(s)s OR heading LIKE %(s)s)",
            {"s": f"%{RARE_WORD}%"},
        ).fetchone()
    assert leftovers == (0,)
    again = client.post(f"/v1/sessions/{session_id}/turns/1/erase", json={"reason": "x"}, headers=admin.headers)  # fmt: skip
    assert again.status_code == 409
    # Any place that is not a turn of the session is 404 (a huge or negative one included).
    for seq in ("999", "0", "-1", "99999999999999999999999", "one"):
        missing = client.post(f"/v1/sessions/{session_id}/turns/{seq}/erase", json={"reason": "x"}, headers=admin.headers)  # fmt: skip
        assert missing.status_code == 404, (seq, missing.text)


def test_the_guards_admit_an_erasure_and_nothing_else(
    client: TestClient[Any], agent: Key, app_database_url: str
) -> None:
    memory_id = write(client, agent).json()["memory_id"]
    session_id = open_session(client, agent)["session_id"]
    append(client, agent, session_id, ("user", "hello"))
    with psycopg.connect(app_database_url) as conn:
        conn.execute("SELECT enter_tenant(%s)", (agent.tenant_id,))
        # Naming the row in ctxgw.erasing by hand does not let any other change through.
        conn.execute("SELECT set_config('ctxgw.erasing', %s, true)", (f"acme/{memory_id}",))
        with pytest.raises(psycopg.errors.CheckViolation):
            conn.execute("UPDATE memories SET content = '', embedding = NULL, erased_at = now(), heading = '', namespace = 'x' WHERE memory_id = %s", (memory_id,))  # fmt: skip
    with psycopg.connect(app_database_url) as conn:
        conn.execute("SELECT enter_tenant(%s)", (agent.tenant_id,))
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("UPDATE session_turns SET content = 'changed'")


@pytest.mark.parametrize("remember_turns", [True, False])
def test_an_erased_turn_takes_the_facts_compiled_from_it(
    client: TestClient[Any], agent: Key, admin: Key, database_url: str, remember_turns: bool
) -> None:
    session_id = plan_session(client, agent, remember_turns=remember_turns)
    compiled = client.post("/v1/compile", json={"session_id": session_id}, headers=agent.headers)
    assert compiled.status_code == 200 and compiled.json()["created"] == 2, compiled.text
    with psycopg.connect(database_url) as conn:
        facts = conn.execute(
            "SELECT memory_id FROM memories WHERE extractor LIKE 'rules/%' AND content LIKE '%Premium%'"
        ).fetchall()
    assert len(facts) == 1
    # Turn 4 stated the Premium plan; the fact compiled from it goes with it.
    erased = client.post(f"/v1/sessions/{session_id}/turns/4/erase", json={"reason": "subject request"}, headers=admin.headers)  # fmt: skip
    assert erased.status_code == 200, erased.text
    asked = client.post(
        "/v1/context",
        json={"task": "Which Tallyworks plan are we on?", "budget_tokens": 800},
        headers=agent.headers,
    )
    assert asked.status_code == 200 and "Premium" not in asked.text
    with psycopg.connect(database_url) as conn:
        left = conn.execute(
            "SELECT count(*) FROM memories WHERE content LIKE '%Premium%'"
            " OR heading LIKE '%Premium%' OR claim_value LIKE '%Premium%'"
        ).fetchone()
        recorded = conn.execute(
            "SELECT count(*) FROM erasures WHERE memory_id = %s", (facts[0][0],)
        ).fetchone()
    assert left == (0,) and recorded == (1,)
    # The response and the signed receipt name every memory erased: the fact, the session's
    # digest retelling the turn and, with remember_turns, the turn's remembered copy.
    named = erased.json()["memories"]
    with psycopg.connect(database_url) as conn:
        rows = conn.execute(
            "SELECT memory_id FROM erasures WHERE erased_at = %s", (erased.json()["erased_at"],)
        ).fetchall()
    assert facts[0][0] in named and sorted(named) == sorted(r[0] for r in rows)
    assert len(named) == (3 if remember_turns else 2)
    receipt = client.get(f"/v1/receipts/{erased.json()['receipt_id']}", headers=admin.headers)
    assert receipt.json()["body"]["erasure"]["memories"] == erased.json()["memories"]


def test_an_erased_memory_names_the_facts_derived_from_it(
    client: TestClient[Any], agent: Key, admin: Key, database_url: str
) -> None:
    session_id = plan_session(client, agent, remember_turns=True)
    compiled = client.post("/v1/compile", json={"session_id": session_id}, headers=agent.headers)
    assert compiled.status_code == 200, compiled.text
    with psycopg.connect(database_url) as conn:
        [(remembered,)] = conn.execute(
            "SELECT memory_id FROM memories WHERE source_type = 'turn' AND content LIKE '%Premium%'"
        ).fetchall()
        derived = {
            r[0]
            for r in conn.execute(
                "SELECT memory_id FROM memories WHERE sources @> ARRAY[%s]", (remembered,)
            ).fetchall()
        }
    assert derived  # the Premium fact, and the digest retelling the turn
    erased = client.post(f"/v1/memories/{remembered}/erase", json={"reason": "subject request"}, headers=admin.headers)  # fmt: skip
    assert erased.status_code == 200, erased.text
    named = erased.json()["memories"]
    assert named[0] == remembered and set(named[1:]) == derived
    receipt = client.get(f"/v1/receipts/{erased.json()['receipt_id']}", headers=admin.headers)
    assert receipt.json()["body"]["erasure"]["memories"] == named
