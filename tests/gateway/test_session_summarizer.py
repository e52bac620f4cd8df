"""The optional OpenAI-compatible chat summarizer, against a local chat-completions stand-in:
its text is stored and shown like any summary, never recomputed (replay needs no model), and a
failing model fails the step closed (503, no summary, no receipt)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from litestar import Litestar
from litestar.testing import TestClient

from gateway.http.app import create_app
from gateway.shell.settings import Settings, load_settings
from tests.conftest import Key, KeyFactory
from tests.gateway.chat_server import UPSTREAM_WORDS, ChatServer, chat_server
from tests.gateway.sessions_helpers import append, context, open_session


@pytest.fixture
def chat() -> Iterator[ChatServer]:
    with chat_server() as server:
        yield server


@pytest.fixture
def chat_client(settings: Settings, chat: ChatServer) -> Iterator[TestClient[Litestar]]:
    configured = dataclasses.replace(
        settings, summarizer="openai", summarizer_base_url=chat.base_url, summarizer_model="tiny"
    )
    with TestClient(app=create_app(configured)) as client:
        yield client


def fill(client: TestClient[Any], key: Key, session_id: str, count: int) -> None:
    for i in range(count):
        turn = f"Turn {i}: we talked about the museum opening hours for a while, at length."
        assert append(client, key, session_id, ("user", turn)).status_code == 200


def test_the_chat_summarizer_is_asked_once_and_its_text_is_stored(
    chat_client: TestClient[Any], chat: ChatServer, agent: Key, make_key: KeyFactory
) -> None:
    session_id = open_session(chat_client, agent, budget_tokens=400)["session_id"]
    fill(chat_client, agent, session_id, 30)
    body = context(chat_client, agent, session_id).json()
    folded = body["compaction"]["folded"]
    assert folded is not None and body["summary"]["summarizer"] == "openai-chat/tiny"
    [asked] = chat.requests
    assert asked["model"] == "tiny" and asked["temperature"] == 0
    assert f"exchanged {folded[1]} more turns" in body["text"]
    # Never recomputed: replay loads the stored text, with the model gone.
    chat.mode = "http_503"
    replayed = chat_client.post(
        f"/v1/receipts/{body['receipt_id']}/replay",
        json={"mode": "exact"},
        headers=make_key(role="auditor").headers,
    ).json()
    assert replayed["identical"] and len(chat.requests) == 1


@pytest.mark.parametrize("mode", ["http_503", "not_completion"])
def test_a_failing_model_fails_the_step_closed(
    chat_client: TestClient[Any], chat: ChatServer, agent: Key, database_url: str, mode: Any
) -> None:
    session_id = open_session(chat_client, agent, budget_tokens=400)["session_id"]
    fill(chat_client, agent, session_id, 30)
    chat.mode = mode
    response = context(chat_client, agent, session_id)
    assert response.status_code == 503, response.text
    assert response.json()["code"] == "summarizer_unavailable"
    assert UPSTREAM_WORDS not in response.text
    with psycopg.connect(database_url) as conn:
        summaries = conn.execute("SELECT count(*) FROM session_summaries").fetchone()
        receipts = conn.execute(
            "SELECT count(*) FROM receipts WHERE kind = 'session_context'"
        ).fetchone()
    assert summaries == (0,) and receipts == (0,)


def test_the_summarizer_is_chosen_by_the_environment() -> None:
    settings = load_settings(
        {
            "GATEWAY_SUMMARIZER": "openai",
            "GATEWAY_SUMMARIZER_BASE_URL": "http://127.0.0.1:9/v1",
            "GATEWAY_SUMMARIZER_MODEL": "m",
        }
    )
    assert (settings.summarizer, settings.summarizer_model) == ("openai", "m")
    with pytest.raises(Exception, match="GATEWAY_SUMMARIZER"):
        load_settings({"GATEWAY_SUMMARIZER": "magic"})
