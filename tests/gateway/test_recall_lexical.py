"""The lexical branch of hybrid recall scores by Okapi BM25 over each memory's tsvector, whatever
the statement does to be fast: checked against BM25 computed here in Python from the stored
tsvectors (term frequency = positions, document length = distinct lexemes, N = live memories in
scope, df over the matches). Real HTTP writes, real PostgreSQL."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from typing import Any

import psycopg
from litestar.testing import TestClient

from gateway.core.model import Candidate
from gateway.store import recall_statement
from tests.conftest import Key
from tests.gateway.recall_helpers import recall
from tests.gateway.sessions_helpers import append, open_session
from tests.gateway.test_memories_write import memory

TASK = "how do we roll back the payments deploy"
# Long turns with the task's words at different frequencies, short ones, and ones with none.
CONTENTS = [
    "Roll back the payments deploy with the rollback script; a deploy that fails rolls back. "
    + "The payments team reviews every deploy. " * 12,
    "Payments are settled nightly. " * 30 + "Deploy notes live in the wiki.",
    "We roll back by redeploying the previous tag.",
    "Nothing here matches: lunch is at noon, the office closes at six.",
    "deploy deploy deploy deploy payments rollback roll back back back",
    "The payments service deploy happens on Tuesdays. " + "Unrelated words follow. " * 50,
]
_ENTRY = re.compile(r"'((?:[^']|'')*)'(?::([0-9A-D,]+))?")


def _tsvector(text: str) -> dict[str, int]:
    """A tsvector's text form as lexeme → term frequency (its number of positions)."""
    return {
        m.group(1).replace("''", "'"): len(m.group(2).split(",")) if m.group(2) else 1
        for m in _ENTRY.finditer(text)
    }


def _expected(url: str, tenant_id: str) -> dict[str, float]:
    with psycopg.connect(url) as conn:
        query = {
            row[0]
            for row in conn.execute(
                "SELECT DISTINCT lexeme FROM unnest(to_tsvector('english', %s))", (TASK,)
            )
        }
        docs = {
            memory_id: _tsvector(tsv)
            for memory_id, tsv in conn.execute(
                "SELECT memory_id, tsv::text FROM memories WHERE tenant_id = %s", (tenant_id,)
            )
        }
    matched = {i: d for i, d in docs.items() if query & d.keys()}
    n = len(docs)
    avgdl = max(sum(len(d) for d in matched.values()) / len(matched), 1)
    df = {t: sum(1 for d in matched.values() if t in d) for t in query}
    k1, b = recall_statement.BM25_K1, recall_statement.BM25_B
    return {
        memory_id: sum(
            math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
            * d[t]
            * (k1 + 1)
            / (d[t] + k1 * (1 - b + b * len(d) / avgdl))
            for t in query & d.keys()
        )
        for memory_id, d in matched.items()
    }


def test_lexical_scores_are_bm25_over_the_stored_tsvectors(
    client: TestClient[Any], agent: Key, database_url: str
) -> None:
    items = [memory(heading=f"note {i}", content=text) for i, text in enumerate(CONTENTS)]
    written = client.post("/v1/memories/batch", json={"items": items}, headers=agent.headers)
    assert written.status_code in (200, 201), written.text
    expected = _expected(database_url, agent.tenant_id)
    recalled: dict[str, Candidate] = {
        c.memory_id: c for c in recall(database_url, agent.tenant_id, "ops", TASK, limit=40)
    }
    lexical = {i: c for i, c in recalled.items() if c.lexical_rank is not None}
    assert len(expected) == 5  # every memory but the one without the task's words
    assert lexical.keys() == expected.keys()
    for memory_id, score in expected.items():
        assert math.isclose(lexical[memory_id].lexical_score or 0, score, rel_tol=1e-9)
    by_score = sorted(expected, key=lambda i: (-expected[i], i))
    assert [lexical[i].lexical_rank for i in by_score] == list(range(1, 6))


def test_the_full_text_index_keeps_at_most_64_kb_pending(
    client: TestClient[Any], agent: Key, database_url: str
) -> None:
    """Writes wait in GIN's pending list, which every full-text probe of every recall reads whole,
    only up to 64 kB (migration 0020; PostgreSQL's default lets it reach 4 MB): 80 long memories
    hold about 110 kB of entries, so most of them must have gone into the index already."""
    long_turn = " ".join(f"word{i} topic{i % 97} detail{i % 13}" for i in range(120))
    items = [memory(heading=f"turn {i}", content=f"{long_turn} unique{i}") for i in range(80)]
    written = client.post("/v1/memories/batch", json={"items": items}, headers=agent.headers)
    assert written.status_code in (200, 201), written.text
    with psycopg.connect(database_url) as conn:
        options = conn.execute(
            "SELECT reloptions FROM pg_class WHERE oid = 'memories_tsv'::regclass"
        ).fetchone()
        pending = conn.execute("SELECT gin_clean_pending_list('memories_tsv'::regclass)").fetchone()
    assert options == (["gin_pending_list_limit=64"],)
    assert pending is not None and pending[0] <= 64 // 8  # pages of 8 kB


def _write_many(client: TestClient[Any], key: Key, namespace: str, contents: list[str]) -> None:
    for start in range(0, len(contents), 100):
        items = [
            memory(namespace=namespace, heading=f"{namespace} {start + i}", content=text)
            for i, text in enumerate(contents[start : start + 100])
        ]
        written = client.post("/v1/memories/batch", json={"items": items}, headers=key.headers)
        assert written.status_code in (200, 201), written.text


def _pool(database_url: str, tenant_id: str, task: str) -> list[tuple[object, ...]]:
    return sorted(
        (c.memory_id, c.lexical_rank, repr(c.lexical_score), c.vector_rank, c.neighbours)
        for c in recall(database_url, tenant_id, "ops", task, limit=40)
    )


def test_a_small_scope_leaves_out_common_terms_as_probing_does(
    client: TestClient[Any], agent: Key, database_url: str, monkeypatch: Any
) -> None:
    """A scope of at most UNPROBED_SCOPE memories is matched on every query term and counts each
    term's document frequency among the matches instead of probing it: a term held by more than
    COMMON_TERM_CAP memories must still be left out, with the same scores, ranks and average
    length as when every term is probed first."""
    cap = recall_statement.COMMON_TERM_CAP
    # "deploy" is in every memory (common); "rollback" and "payments" in a few; a tail of
    # memories holds only the common term, so the unprobed match reads them and must drop them.
    contents = [f"deploy note {i} about lunch" for i in range(cap + 20)]
    contents += [f"rollback of the payments deploy, step {i}" for i in range(12)]
    _write_many(client, agent, "ops", contents)
    task = "how do we rollback the payments deploy"
    assert len(contents) <= recall_statement.UNPROBED_SCOPE
    unprobed = _pool(database_url, agent.tenant_id, task)
    monkeypatch.setattr(recall_statement, "UNPROBED_SCOPE", 0)
    probed = _pool(database_url, agent.tenant_id, task)
    assert unprobed == probed
    lexical = [row for row in unprobed if row[1] is not None]
    assert len(lexical) == 12  # only the memories holding a rarer term: "deploy" left out


def test_a_namespace_is_a_condition_of_the_full_text_index_scan(
    client: TestClient[Any], agent: Key, database_url: str, app_database_url: str
) -> None:
    """The full-text index covers each memory's namespace (migration 0025), and under the tenant
    wall, as the gateway's own role reads, the namespace's key is a condition of the index scan
    (only a leakproof operator may be one): a namespace's match in a tenant whose other
    namespace holds many more matches reads only its own rows from the index."""
    _write_many(client, agent, "elsewhere", [f"payments deploy run {i}" for i in range(150)])
    _write_many(client, agent, "ops", [f"payments deploy {i} rolled back" for i in range(5)])
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("ANALYZE memories")
    with psycopg.connect(app_database_url, autocommit=True) as conn:
        conn.execute("SELECT set_config('ctxgw.tenant', %s, false)", (agent.tenant_id,))
        conn.execute("SET enable_seqscan = off")
        plan = conn.execute(
            """EXPLAIN (ANALYZE, FORMAT JSON)
               SELECT memory_id FROM memories m
                WHERE m.tsv @@ 'payment'::tsquery AND m.scope_key @@ %s::tsquery""",
            (f"'{agent.tenant_id}/ops'",),
        ).fetchone()
    assert plan is not None
    scans = list(_nodes(plan[0][0]["Plan"], "Bitmap Index Scan"))
    assert [s["Index Name"] for s in scans] == ["memories_tsv"]
    assert "scope_key" in scans[0]["Index Cond"]
    assert scans[0]["Actual Rows"] == 5


def test_a_remembered_turn_is_searched_by_what_was_said(
    client: TestClient[Any], agent: Key, database_url: str
) -> None:
    """A remembered turn's heading names its role, its number and its opening words; its search
    text leaves out the role and the number (migration 0027), so a query naming "the user" or
    "the assistant" does not match every turn of a session. The opening words stay, as any
    memory's heading does: a memory someone wrote is searched by its heading too."""
    session_id = open_session(client, agent, namespace="chat")["session_id"]
    appended = append(
        client,
        agent,
        session_id,
        ("user", "Book the hotel in Alfama for May."),
        ("assistant", "Done: the hotel in Alfama is booked for May."),
    )
    assert appended.status_code == 200, appended.text
    note = memory(namespace="chat", heading="assistant notes", content="Prefers trams.")
    written = client.post("/v1/memories/batch", json={"items": [note]}, headers=agent.headers)
    assert written.status_code in (200, 201), written.text
    lexical = {
        c.heading: c
        for c in recall(database_url, agent.tenant_id, "chat", "what did the assistant say", 10)
        if c.lexical_rank is not None
    }
    assert list(lexical) == ["assistant notes"]
    found = recall(database_url, agent.tenant_id, "chat", "Alfama hotel", 10)
    assert {c.source_type for c in found if c.lexical_rank is not None} == {"turn"}
    with psycopg.connect(database_url) as conn:
        tsvectors = conn.execute(
            "SELECT tsv::text FROM memories WHERE tenant_id = %s AND source_type = 'turn'"
            " ORDER BY created_at, memory_id",
            (agent.tenant_id,),
        ).fetchall()
    # Heading (its opening words) and content: each word twice, no role, no "turn".
    assert _tsvector(tsvectors[0][0]) == {"book": 2, "hotel": 2, "alfama": 2, "may": 2}


def _nodes(node: dict[str, Any], kind: str) -> Iterator[dict[str, Any]]:
    if node["Node Type"] == kind:
        yield node
    for child in node.get("Plans", []):
        yield from _nodes(child, kind)
