"""429 and 503 are waited out as Retry-After says; a write whose answer was lost is sent again
with the same idempotency key and lands once. Faults are injected by a transport in front of the
real gateway (no patching); waits are recorded by the `sleep` the client is given."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx
import msgspec
import pytest

from gateway.client import Client, ConnectionFailedError, Retries, UnavailableError
from gateway.client.retrying import DEFAULT_RETRIES, retry_after
from tests.conftest import Key

Fault = Callable[[httpx.Request], httpx.Response | None]


def busy(status: int, retry_after_value: str) -> Fault:
    def fault(request: httpx.Request) -> httpx.Response:
        body = {
            "type": "/problems/x",
            "title": "t",
            "status": status,
            "code": "busy",
            "detail": "d",
        }
        return httpx.Response(
            status,
            headers={"content-type": "application/problem+json", "retry-after": retry_after_value},
            content=msgspec.json.encode(body),
        )

    return fault


class Faulty(httpx.BaseTransport):
    """Plays `faults` in order, one per request (None: pass it through and lose the answer),
    then forwards every request to the real gateway. Records every body sent."""

    def __init__(self, faults: list[Fault | None]) -> None:
        self.faults = faults
        self.sent: list[bytes] = []
        self._real = httpx.HTTPTransport()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.sent.append(request.read())
        if not self.faults:
            return self._real.handle_request(request)
        fault = self.faults.pop(0)
        if fault is None:
            self._real.handle_request(request).read()  # done by the gateway, answer lost
            raise httpx.ReadError("connection reset", request=request)
        answer = fault(request)
        assert answer is not None
        return answer

    def close(self) -> None:
        self._real.close()


def client(
    key: Key, url: str, transport: Faulty, waits: list[float], retries: Retries = DEFAULT_RETRIES
) -> Client:
    return Client(key.key, url, transport=transport, sleep=waits.append, retries=retries)


def test_503_and_429_are_waited_out_as_retry_after_says(served: str, agent: Key) -> None:
    # A date well ahead: the waits are recorded, not slept, and a busy machine may take seconds.
    later = format_datetime(datetime.now(UTC) + timedelta(seconds=20), usegmt=True)
    transport = Faulty([busy(503, "2"), busy(429, later)])
    waits: list[float] = []
    with client(agent, served, transport, waits) as ctxgw:
        bundle = ctxgw.context("anything")
    assert bundle.receipt_id and len(transport.sent) == 3
    assert waits[0] == 2.0 and 10.0 < waits[1] <= 20.0


def test_a_retry_after_beyond_the_limit_is_raised_at_once(served: str, agent: Key) -> None:
    transport = Faulty([busy(503, "120")])
    waits: list[float] = []
    with (
        client(agent, served, transport, waits, Retries(max_wait_seconds=30)) as ctxgw,
        pytest.raises(UnavailableError) as raised,
    ):
        ctxgw.search("anything")
    assert raised.value.code == "busy" and waits == [] and len(transport.sent) == 1


def test_attempts_run_out(served: str, agent: Key) -> None:
    transport = Faulty([busy(503, "1")] * 5)
    waits: list[float] = []
    with (
        client(agent, served, transport, waits, Retries(attempts=3)) as ctxgw,
        pytest.raises(UnavailableError),
    ):
        ctxgw.search("anything")
    assert waits == [1.0, 1.0] and len(transport.sent) == 3


def test_a_write_whose_answer_was_lost_lands_once(served: str, agent: Key) -> None:
    transport = Faulty([None])
    waits: list[float] = []
    with client(agent, served, transport, waits) as ctxgw:
        written = ctxgw.write_memory("ops", "Deploy window", "Tuesdays and Thursdays.")
        found = ctxgw.search("Deploy window Tuesdays Thursdays")
    first, second = (msgspec.json.decode(body) for body in transport.sent[:2])
    assert first["idempotency_key"] == second["idempotency_key"]
    assert first["idempotency_key"].startswith("ctxgw-client-")
    # The gateway wrote it on the first attempt; the retry got that write back, not a new one.
    assert written.created is False
    assert [hit.memory_id for hit in found.results] == [written.memory_id]


def test_a_disclosure_whose_answer_was_lost_is_not_asked_again(served: str, agent: Key) -> None:
    transport = Faulty([None])
    waits: list[float] = []
    with (
        client(agent, served, transport, waits) as ctxgw,
        pytest.raises(ConnectionFailedError) as raised,
    ):
        ctxgw.context("anything")
    assert isinstance(raised.value.__cause__, httpx.ReadError) and len(transport.sent) == 1


def test_a_request_that_never_left_is_sent_again() -> None:
    waits: list[float] = []
    with (
        Client("k", "http://127.0.0.1:9", sleep=waits.append, retries=Retries(attempts=3)) as c,
        pytest.raises(ConnectionFailedError),
    ):
        c.context("anything")  # nothing listens on the discard port
    assert waits == [0.5, 1.0]  # doubling from backoff_seconds


def test_retry_after_spellings() -> None:
    now = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
    assert retry_after("5", now) == 5.0
    assert retry_after("Tue, 01 Dec 2026 12:00:30 GMT", now) == 30.0
    assert retry_after("Tue, 01 Dec 2026 11:00:00 GMT", now) == 0.0  # past: at once
    assert retry_after("soon", now) is None and retry_after(None, now) is None
