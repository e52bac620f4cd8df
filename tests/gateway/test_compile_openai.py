"""The optional `openai` extractor against a local chat-completions stand-in: its JSON facts are
validated and written like the rules' facts; a malformed answer fails the job with a clear
error and writes nothing."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from litestar import Litestar
from litestar.testing import TestClient

from gateway.http.app import create_app
from gateway.shell.settings import Settings, load_settings
from tests.conftest import Key
from tests.gateway.chat_server import ChatServer, chat_server
from tests.gateway.sessions_helpers import append, open_session


@pytest.fixture
def chat() -> Iterator[ChatServer]:
    with chat_server() as server:
        yield server


@pytest.fixture
def chat_client(settings: Settings, chat: ChatServer) -> Iterator[TestClient[Litestar]]:
    configured = dataclasses.replace(
        settings,
        extractors=("rules", "openai"),
        extractor_base_url=chat.base_url,
        extractor_model="tiny",
    )
    with TestClient(app=create_app(configured)) as client:
        yield client


def _session(client: TestClient[Any], key: Key) -> str:
    session_id: str = open_session(client, key, namespace="llm")["session_id"]
    turns = [("user", "We moved the office to Mission Bay."), ("assistant", "Noted.")]
    assert append(client, key, session_id, *turns).status_code == 200
    return session_id


def _facts(database_url: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(database_url) as conn:
        return conn.execute(
            "SELECT heading, claim_key, extractor, claim_value FROM memories"
            " WHERE extractor IS NOT NULL AND memory_type <> 'episodic'"
        ).fetchall()


def test_the_model_s_facts_are_validated_and_written(
    chat_client: TestClient[Any], chat: ChatServer, agent: Key, database_url: str
) -> None:
    session_id = _session(chat_client, agent)
    fact = {
        "turn": 0,
        "type": "semantic",
        "heading": "Office location",
        "content": "The office is in Mission Bay.",
        "confidence": 0.9,
        "claim_key": "user.office",
        "value": "Mission Bay",
    }
    chat.reply = json.dumps({"facts": [fact]})
    done = chat_client.post(
        "/v1/compile",
        json={"session_id": session_id, "extractor": "openai"},
        headers=agent.headers,
    ).json()
    assert done["status"] == "completed" and done["created"] == 1, done
    assert _facts(database_url) == [
        ("Office location", "user.office", "openai/tiny", "Mission Bay")
    ]
    [request] = chat.requests
    assert request["model"] == "tiny" and request["temperature"] == 0
    assert "0. user: We moved the office to Mission Bay." in request["messages"][-1]["content"]


@pytest.mark.parametrize(
    "reply",
    [
        "not json at all",
        json.dumps(
            {
                "facts": [
                    {
                        "turn": 0,
                        "type": "opinion",
                        "heading": "h",
                        "content": "c",
                        "confidence": 0.5,
                    }
                ]
            }
        ),
        json.dumps(
            {
                "facts": [
                    {
                        "turn": 7,
                        "type": "semantic",
                        "heading": "h",
                        "content": "c",
                        "confidence": 0.5,
                    }
                ]
            }
        ),
        json.dumps(
            {
                "facts": [
                    {
                        "turn": 0,
                        "type": "semantic",
                        "heading": "h",
                        "content": "c",
                        "confidence": 0.5,
                        "claim_key": "Bad Key",
                    }
                ]
            }
        ),
    ],
)
def test_a_malformed_answer_fails_the_job_and_writes_nothing(
    chat_client: TestClient[Any], chat: ChatServer, agent: Key, database_url: str, reply: str
) -> None:
    session_id = _session(chat_client, agent)
    chat.reply = reply
    done = chat_client.post(
        "/v1/compile",
        json={"session_id": session_id, "extractor": "openai"},
        headers=agent.headers,
    ).json()
    assert done["status"] == "failed" and done["created"] == 0
    assert done["error"].startswith("extractor_failed: ")
    assert _facts(database_url) == []
    job = chat_client.get(f"/v1/compile/{done['job_id']}", headers=agent.headers).json()
    assert job["status"] == "failed" and job["error"] == done["error"]
    # The watermark did not move: once the model answers well, the same turns compile.
    chat.reply = json.dumps({"facts": []})
    again = chat_client.post(
        "/v1/compile",
        json={"session_id": session_id, "extractor": "openai"},
        headers=agent.headers,
    ).json()
    assert again["status"] == "completed" and len(chat.requests) == 2


def test_an_unreachable_model_fails_the_job(
    chat_client: TestClient[Any], chat: ChatServer, agent: Key
) -> None:
    session_id = _session(chat_client, agent)
    chat.mode = "http_503"
    done = chat_client.post(
        "/v1/compile",
        json={"session_id": session_id, "extractor": "openai"},
        headers=agent.headers,
    ).json()
    assert done["status"] == "failed" and "HTTP 503" in done["error"]


def test_the_extractors_are_chosen_by_the_environment() -> None:
    settings = load_settings({"GATEWAY_EXTRACTORS": "rules,openai", "GATEWAY_EXTRACTOR_MODEL": "m"})
    assert (settings.extractors, settings.extractor_model) == (("rules", "openai"), "m")
    with pytest.raises(Exception, match="GATEWAY_EXTRACTORS"):
        load_settings({"GATEWAY_EXTRACTORS": "rules,magic"})
    with pytest.raises(Exception, match="GATEWAY_SUPERSEDE_JACCARD"):
        load_settings({"GATEWAY_SUPERSEDE_JACCARD": "2"})
