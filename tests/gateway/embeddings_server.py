"""A small stand-in for an OpenAI-compatible `/v1/embeddings` server, on 127.0.0.1 and an
ephemeral port, that can be told to fail the ways a real one does."""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

from gateway.shell.settings import Settings

Mode = Literal["ok", "hang", "http_503", "not_json", "not_embeddings"]
# What a failing upstream says; none of it may reach a client of the gateway.
UPSTREAM_WORDS = "upstream pool exhausted at node emb-7f3a"


class EmbeddingsServer:
    """Answers `POST /v1/embeddings` by `mode`; `stop()` and `start()` take it down and bring it
    back on the same port (a server that is down refuses connections)."""

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.mode: Mode = "ok"
        self.requests = 0
        self._release = threading.Event()  # lets hanging handlers go at shutdown
        self._server: ThreadingHTTPServer | None = None
        self.port = 0
        self.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> None:
        server = ThreadingHTTPServer(("127.0.0.1", self.port), self._handler())
        server.daemon_threads = True
        self.port = server.server_address[1]
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self._server = server

    def stop(self) -> None:
        if self._server is not None:
            self._release.set()
            self._server.shutdown()
            self._server.server_close()
            self._server = None
            self._release.clear()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                stand_in.requests += 1
                length = int(self.headers.get("content-length", "0"))
                body = json.loads(self.rfile.read(length))
                mode = stand_in.mode
                if mode == "hang":
                    stand_in._release.wait(30)
                    return
                if self.path != "/v1/embeddings" or mode == "http_503":
                    self._send(503, "application/json", json.dumps({"error": UPSTREAM_WORDS}))
                elif mode == "not_json":
                    self._send(200, "text/html", f"<html>{UPSTREAM_WORDS}</html>")
                elif mode == "not_embeddings":
                    self._send(200, "application/json", json.dumps({"data": [UPSTREAM_WORDS]}))
                else:
                    data = [
                        {"index": i, "embedding": [1.0 + i % 3] + [0.5] * (stand_in.dim - 1)}
                        for i, _ in enumerate(body["input"])
                    ]
                    self._send(200, "application/json", json.dumps({"data": data}))

            def _send(self, status: int, content_type: str, text: str) -> None:
                payload = text.encode()
                self.send_response(status)
                self.send_header("content-type", content_type)
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: object) -> None:
                pass  # keep test output clean

        return Handler


@contextmanager
def embeddings_server(dim: int) -> Iterator[EmbeddingsServer]:
    server = EmbeddingsServer(dim)
    try:
        yield server
    finally:
        server.stop()


def embedding_settings(settings: Settings, server: EmbeddingsServer, **more: Any) -> Settings:
    """`settings` with the `openai` embedder at `server` (a short timeout: a test waits on it)."""
    return dataclasses.replace(
        settings,
        embedder="openai",
        openai_base_url=server.base_url,
        embedding_dim=server.dim,
        openai_timeout_seconds=0.5,
        **more,
    )
