"""A small stand-in for an OpenAI-compatible `/v1/chat/completions` server on 127.0.0.1 and an
ephemeral port: it answers with a summary naming how many turns it was given (or a set reply,
such as an extractor's JSON), or fails."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

Mode = Literal["ok", "http_503", "not_completion"]
UPSTREAM_WORDS = "model shard 4 overloaded"


class ChatServer:
    def __init__(self) -> None:
        self.mode: Mode = "ok"
        self.reply: str | None = None  # when set, the completion's text (the extractor's JSON)
        self.requests: list[dict[str, Any]] = []
        server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        server.daemon_threads = True
        self.port = server.server_address[1]
        self._server = server
        threading.Thread(target=server.serve_forever, daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                body = json.loads(self.rfile.read(length))
                stand_in.requests.append(body)
                if self.path != "/v1/chat/completions" or stand_in.mode == "http_503":
                    self._send(503, {"error": UPSTREAM_WORDS})
                elif stand_in.mode == "not_completion":
                    self._send(200, {"choices": [], "note": UPSTREAM_WORDS})
                elif stand_in.reply is not None:
                    message = {"role": "assistant", "content": stand_in.reply}
                    self._send(200, {"choices": [{"message": message}]})
                else:
                    prompt = body["messages"][-1]["content"]
                    turns = sum(line.startswith("t") for line in prompt.splitlines())
                    text = f"- The user and the assistant exchanged {turns} more turns."
                    self._send(
                        200, {"choices": [{"message": {"role": "assistant", "content": text}}]}
                    )

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: object) -> None:
                pass

        return Handler


@contextmanager
def chat_server() -> Iterator[ChatServer]:
    server = ChatServer()
    try:
        yield server
    finally:
        server.close()
