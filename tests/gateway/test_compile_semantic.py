"""The `rules+semantic` extractor: `rules` with the gateway's embedder (here a local stand-in of
an OpenAI-compatible embeddings server) joining attribute phrases that share no word; its version
names the model; an embedder that fails fails the job and writes nothing."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from litestar.testing import TestClient

from gateway.core.extraction import RULES
from gateway.http.app import create_app
from gateway.shell.settings import Settings
from tests.conftest import KeyFactory
from tests.gateway.embeddings_server import (
    EmbeddingsServer,
    embedding_settings,
    embeddings_server,
)
from tests.gateway.sessions_helpers import append, open_session

DIM = 8
# Two statements of one rent in words that share nothing but the dimension of their value.
RENT = ("My rent is $1,850.", "My apartment costs $1,975.")


@pytest.fixture
def semantic_client(settings: Settings) -> Iterator[tuple[TestClient[Any], EmbeddingsServer]]:
    with embeddings_server(DIM) as stand_in:
        extractors = ("rules", "rules+semantic")
        configured = embedding_settings(settings, stand_in, extractors=extractors)
        with TestClient(app=create_app(configured)) as client:
            yield client, stand_in


def _compile(client: TestClient[Any], make_key: KeyFactory, namespace: str, extractor: str) -> Any:
    agent = make_key(namespaces=(namespace,))
    session_id = open_session(client, agent, namespace=namespace)["session_id"]
    for text in RENT:
        assert append(client, agent, session_id, ("user", text)).status_code == 200
    return client.post(
        "/v1/compile",
        json={"session_id": session_id, "extractor": extractor},
        headers=agent.headers,
    ).json()


def _claims(database_url: str, namespace: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(database_url) as conn:
        return conn.execute(
            "SELECT claim_key, claim_value, extractor FROM memories WHERE namespace = %s"
            " AND memory_type = 'semantic' AND superseded_by IS NULL ORDER BY claim_value",
            (namespace,),
        ).fetchall()


def test_the_embedder_joins_phrases_that_share_no_word(
    semantic_client: tuple[TestClient[Any], EmbeddingsServer],
    make_key: KeyFactory,
    database_url: str,
) -> None:
    client, _ = semantic_client
    lexical = _compile(client, make_key, "plain", "rules")
    assert lexical["status"] == "completed", lexical
    apart = _claims(database_url, "plain")
    assert len({key for key, _, _ in apart}) == 2, apart  # two claims, both live

    joined = _compile(client, make_key, "meant", "rules+semantic")
    assert joined["status"] == "completed" and joined["superseded"] >= 1, joined
    [(_key, value, extractor)] = _claims(database_url, "meant")
    assert value == "$1,975"  # the newer holds; the older is superseded
    assert extractor.startswith(f"rules+semantic/{RULES[1]}+")  # the model named


def test_an_embedder_that_fails_fails_the_compile_and_writes_nothing(
    semantic_client: tuple[TestClient[Any], EmbeddingsServer],
    make_key: KeyFactory,
    database_url: str,
) -> None:
    client, stand_in = semantic_client
    agent = make_key(namespaces=("down",))
    session_id = open_session(client, agent, namespace="down")["session_id"]
    for text in RENT:
        assert append(client, agent, session_id, ("user", text)).status_code == 200
    stand_in.mode = "http_503"
    done = client.post(
        "/v1/compile",
        json={"session_id": session_id, "extractor": "rules+semantic"},
        headers=agent.headers,
    ).json()
    assert done["status"] == "failed" and done["created"] == 0, done
    assert done["error"].startswith("extractor_failed: ")
    assert _claims(database_url, "down") == []
