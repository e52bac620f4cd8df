"""The `openai` extractor's contract, pinned, and recorded answers replayed through it: the
prompt and the answer's JSON schema are held to their digests (a change to either is a new
`EXTRACTION_PROMPT` version), and the answers in `recorded/openai_extractor_answers.json` are
served by the chat stand-in for the exact user messages they were recorded for, compiled into
facts, and the newer value supersedes the older in the bundle."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from gateway.http.app import create_app
from gateway.shell.settings import Settings
from gateway.usecases.compiling.extractors import (
    EXTRACTION_INSTRUCTIONS,
    EXTRACTION_PROMPT,
    EXTRACTION_SCHEMA,
)
from tests.conftest import Key
from tests.gateway.chat_server import ChatServer, chat_server
from tests.gateway.sessions_helpers import open_session

RECORDED = Path(__file__).parent / "recorded" / "openai_extractor_answers.json"
# The digests of the prompt and the schema of EXTRACTION_PROMPT's version.
PROMPT_SHA256 = "0bd1f6783954f241122e69b41876fc9ad714ec5f0989a9cd1071286e038bf1ad"
SCHEMA_SHA256 = "edc1f17da7ad09e3d5e2d0627fdf70332118b60cd9414658e6302e8267f35f6c"


def test_the_prompt_and_the_schema_are_those_of_their_version() -> None:
    assert EXTRACTION_PROMPT == ("facts", "2026-12-02.1")
    assert hashlib.sha256(EXTRACTION_INSTRUCTIONS.encode()).hexdigest() == PROMPT_SHA256
    schema = json.dumps(EXTRACTION_SCHEMA, sort_keys=True).encode()
    assert hashlib.sha256(schema).hexdigest() == SCHEMA_SHA256
    recorded = json.loads(RECORDED.read_text(encoding="utf-8"))
    assert recorded["prompt"] == "/".join(EXTRACTION_PROMPT)


@pytest.fixture
def chat() -> Iterator[ChatServer]:
    with chat_server() as server:
        yield server


@pytest.fixture
def chat_client(settings: Settings, chat: ChatServer) -> Iterator[TestClient[Litestar]]:
    configured = dataclasses.replace(
        settings,
        extractors=("openai", "rules"),
        extractor_base_url=chat.base_url,
        extractor_model="recorded",
    )
    with TestClient(app=create_app(configured)) as client:
        yield client


def test_recorded_answers_replay_into_facts_and_the_newer_value_holds(
    chat_client: TestClient[Any], chat: ChatServer, agent: Key
) -> None:
    recorded = json.loads(RECORDED.read_text(encoding="utf-8"))
    for index, session in enumerate(recorded["sessions"]):
        session_id = open_session(chat_client, agent, namespace="replayed")["session_id"]
        turns = [
            {**turn, "occurred_at": f"{session['date']}T10:00:{n:02d}Z"}
            for n, turn in enumerate(session["turns"])
        ]
        appended = chat_client.post(
            f"/v1/sessions/{session_id}/turns", json={"turns": turns}, headers=agent.headers
        )
        assert appended.status_code == 200, appended.text
        chat.reply = session["answer"]
        done = chat_client.post(
            "/v1/compile", json={"session_id": session_id}, headers=agent.headers
        ).json()
        assert done["status"] == "completed", done
        # The gateway asked exactly what the answer was recorded for.
        request = chat.requests[index]
        assert request["messages"][0]["content"] == EXTRACTION_INSTRUCTIONS
        asked = request["messages"][-1]["content"].encode()
        assert hashlib.sha256(asked).hexdigest() == session["user_message_sha256"]
        assert done["created"] == len(json.loads(session["answer"])["facts"])
    context = chat_client.post(
        "/v1/context",
        json={"task": "How much does Bob weigh?", "namespaces": ["replayed"], "budget_tokens": 800},
        headers=agent.headers,
    ).json()
    assert "172 pounds" in context["bundle"] and "185 pounds" not in context["bundle"]
