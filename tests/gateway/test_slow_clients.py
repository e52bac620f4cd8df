"""Slow clients over a real socket: late headers close the connection, a late body is a 408."""

from __future__ import annotations

import dataclasses
import socket
import threading
import time
from collections.abc import Iterator

import pytest
import uvicorn

from gateway.http.app import create_app
from gateway.http.slow_clients import http_protocol
from gateway.shell.settings import Settings
from tests.conftest import Key

DEADLINE = 0.5


@pytest.fixture
def address(settings: Settings) -> Iterator[tuple[str, int]]:
    """The app served as `ctxgw serve` serves it, with half-second deadlines."""
    settings = dataclasses.replace(settings, body_timeout_seconds=DEADLINE)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    config = uvicorn.Config(
        create_app(settings), http=http_protocol(DEADLINE), log_level="warning", lifespan="on"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    started = time.monotonic()
    while not server.started:
        assert thread.is_alive() and time.monotonic() - started < 60, "the gateway did not start"
        time.sleep(0.02)
    try:
        yield listener.getsockname()[:2]
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        listener.close()


def _read_all(sock: socket.socket, within: float) -> tuple[bytes, float]:
    """What the server sends until it closes the connection, and when it closed it."""
    sock.settimeout(within)
    started, received = time.monotonic(), b""
    while chunk := sock.recv(65536):
        received += chunk
    return received, time.monotonic() - started


def _one_response(sock: socket.socket) -> bytes:
    """One whole response (headers and its Content-Length of body), however it is segmented."""
    sock.settimeout(5)
    received = b""
    while b"\r\n\r\n" not in received:
        received += sock.recv(65536)
    head, _, body = received.partition(b"\r\n\r\n")
    length = int(next(line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")))  # fmt: skip
    while len(body) < length:
        body += sock.recv(65536)
    return head + b"\r\n\r\n" + body


def test_headers_sent_a_byte_at_a_time_lose_the_connection(address: tuple[str, int]) -> None:
    with socket.create_connection(address) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")  # and never the blank line
        received, waited = _read_all(sock, within=5)
    assert received == b""  # closed, nothing answered
    assert DEADLINE * 0.8 < waited < DEADLINE + 2


def test_a_keep_alive_connection_gets_a_fresh_header_deadline(address: tuple[str, int]) -> None:
    with socket.create_connection(address) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        assert _one_response(sock).startswith(b"HTTP/1.1 200")
        time.sleep(DEADLINE * 0.6)
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")  # in time: answered
        assert _one_response(sock).startswith(b"HTTP/1.1 200")


def test_a_body_that_stops_arriving_is_a_408_problem(address: tuple[str, int], agent: Key) -> None:
    with socket.create_connection(address) as sock:
        sock.sendall(
            b"POST /v1/context HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Authorization: Bearer " + agent.key.encode() + b"\r\n"
            b"Content-Length: 200\r\n\r\n"
            b'{"task": "slow'
        )
        received, waited = _read_all(sock, within=10)
    head, _, body = received.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408"), received
    assert b"application/problem+json" in head and b"connection: close" in head.lower()
    assert b'"code":"request_timeout"' in body
    assert waited < DEADLINE + 2
