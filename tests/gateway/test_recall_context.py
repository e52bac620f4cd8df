"""Recall looks up the neighbours in write order of its strongest hits (the live memories written
just before and just after, in the same namespace) and recalls them too, so the ranking's context
signal can lift the turn that answers a question without sharing a word with it. Real HTTP
writes, real PostgreSQL."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

from litestar.testing import TestClient

from gateway.core.fixed import to_micros
from gateway.core.ranking import rank
from gateway.core.versions import DEFAULT_PROFILE
from tests.conftest import Key
from tests.gateway.recall_helpers import recall
from tests.gateway.test_memories_write import write

TASK = "which cellist played the recital"


def test_the_strongest_hits_bring_their_neighbours_in_write_order(
    client: TestClient[Any], agent: Key, database_url: str
) -> None:
    turns = [
        ("chat", "opening", "Morning! Long week behind me."),
        ("chat", "question", "Who was the cellist at the recital on Friday?"),
        ("elsewhere", "other namespace", "Unrelated notes from another project."),
        ("chat", "answer", "Oh, that was Ana Duarte, she studied in Porto."),
        ("chat", "later", "Anyway, lunch tomorrow?"),
    ]
    for namespace, heading, content in turns:
        response = write(
            client, agent, namespace=namespace, heading=heading, content=content,
            memory_type="episodic",
        )  # fmt: skip
        assert response.status_code == 201, response.text
    recalled = {
        c.heading: c
        # each retriever's best only: the rest can come only as neighbours
        for c in recall(database_url, agent.tenant_id, "chat", TASK, limit=1)
    }
    question, answer = recalled["question"], recalled["answer"]
    assert question.lexical_rank == 1
    # The answer shares no stored word with the task; it is recalled as the question's
    # neighbour (the other namespace's memory, written in between, is not one).
    assert (answer.lexical_rank, answer.vector_rank) == (None, None)
    assert set(question.neighbours) == {recalled["opening"].memory_id, answer.memory_id}
    assert "other namespace" not in recalled
    ranked = {
        r.candidate.memory_id: r
        for r in rank(list(recalled.values()), DEFAULT_PROFILE, datetime.now(UTC))
    }
    # The question is the best hit: its neighbours get the whole context weight.
    assert ranked[answer.memory_id].signal_micros["context"] == to_micros(
        DEFAULT_PROFILE.weights.context
    )
    assert ranked[question.memory_id].signal_micros["context"] == 0


def test_a_past_instant_recalls_and_neighbours_only_what_was_written_by_then(
    client: TestClient[Any], agent: Key, database_url: str
) -> None:
    # The statement states `created_at <= as_of` three ways (scope.Created): bounded for the
    # vector branch, checked on the full-text matches, implied for the earlier neighbour. A
    # memory written after the instant must stay out of each.
    def turn(heading: str, content: str) -> None:
        response = write(
            client, agent, namespace="chat", heading=heading, content=content,
            memory_type="episodic",
        )  # fmt: skip
        assert response.status_code == 201, response.text

    turn("opening", "Morning! Long week behind me.")
    turn("question", "Who was the cellist at the recital on Friday?")
    turn("answer", "Oh, that was Ana Duarte, she studied in Porto.")
    time.sleep(0.01)
    as_of = datetime.now(UTC)
    time.sleep(0.01)
    turn("later", "The cellist at the recital? The recital cellist, Friday's recital.")
    then = {c.heading: c for c in recall(database_url, agent.tenant_id, "chat", TASK, 10, as_of)}
    assert set(then) == {"opening", "question", "answer"}
    assert set(then["answer"].neighbours or ()) == {then["question"].memory_id}
    assert set(then["question"].neighbours or ()) == {
        then["opening"].memory_id,
        then["answer"].memory_id,
    }
    now = {c.heading: c for c in recall(database_url, agent.tenant_id, "chat", TASK, 10)}
    assert now["later"].lexical_rank == 1
