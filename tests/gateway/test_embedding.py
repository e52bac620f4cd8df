from __future__ import annotations

import json
import math
import subprocess
import sys

import httpx
import pytest

from gateway.embedding import EmbeddingError, HashEmbedder
from gateway.embedding.remote import OpenAIEmbedder


def test_hash_embedding_is_unit_length_and_topical() -> None:
    embedder = HashEmbedder(384)
    pasta, recipe, car = embedder.embed(
        ["I cooked pasta recipes", "a pasta recipe for dinner", "the car broke down"]
    )
    assert math.isclose(sum(x * x for x in pasta), 1.0)
    similarity = sum(a * b for a, b in zip(pasta, recipe, strict=True))
    unrelated = sum(a * b for a, b in zip(pasta, car, strict=True))
    assert similarity > 0.2 > unrelated
    assert embedder.embed([""])[0][0] == 1.0  # still a valid vector


def test_hash_embedding_is_identical_across_processes() -> None:
    code = (
        "import json; from gateway.embedding import HashEmbedder;"
        "print(json.dumps(HashEmbedder().embed(['déjà vu <|endoftext|> 日本'])[0]))"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONHASHSEED": seed},
        ).stdout
        for seed in ("1", "2")
    }
    assert len(outputs) == 1
    assert json.loads(outputs.pop()) == HashEmbedder().embed(["déjà vu <|endoftext|> 日本"])[0]


def test_openai_embedder_speaks_the_protocol() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        assert request.url.path == "/v1/embeddings"
        assert request.headers["authorization"] == "Bearer sk-test"
        data = [{"index": i, "embedding": [3.0, 4.0]} for i, _ in enumerate(body["input"])]
        return httpx.Response(200, json={"data": list(reversed(data))})

    embedder = OpenAIEmbedder(
        "http://embeddings.test/v1", "m", "sk-test", 2, transport=httpx.MockTransport(handler)
    )
    assert embedder.embed(["a", "b"]) == [[0.6, 0.8], [0.6, 0.8]]


def test_openai_embedder_rejects_wrong_dimension() -> None:
    transport = httpx.MockTransport(
        lambda _: httpx.Response(200, json={"data": [{"index": 0, "embedding": [1.0]}]})
    )
    embedder = OpenAIEmbedder("http://embeddings.test/v1", "m", None, 2, transport=transport)
    with pytest.raises(EmbeddingError, match="dimensions"):
        embedder.embed(["a"])


@pytest.mark.parametrize(
    "answer",
    [
        b'{"data": [{"index": 0, "embedding": ["x", 1]}]}',
        b'{"data": [{"index": 0, "embedding": [NaN, 1]}]}',
        b'{"data": [{"index": 0, "embedding": [0.0, 0.0]}]}',
        b'{"data": [{"index": 0}]}',
        b'{"data": {"index": 0}}',
        b"[]",
    ],
)
def test_openai_embedder_names_a_malformed_answer(answer: bytes) -> None:
    """Whatever is wrong inside the answer, the error is ours (503 at the edge), never a
    ValueError or TypeError escaping as a 500."""
    transport = httpx.MockTransport(lambda _: httpx.Response(200, content=answer))
    embedder = OpenAIEmbedder("http://embeddings.test/v1", "m", None, 2, transport=transport)
    with pytest.raises(EmbeddingError, match="not an embeddings response") as caught:
        embedder.embed(["a"])
    assert caught.value.code == "embedder_unavailable"
