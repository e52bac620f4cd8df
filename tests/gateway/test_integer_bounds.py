"""Integers in queries are bounded by what a receipt can hold (RFC 8785 numbers are IEEE 754
doubles: at most 2^53 - 1) and by the log's positions: past the bound a 422 names the field,
never a 500."""

from __future__ import annotations

from typing import Any

from litestar.testing import TestClient

from tests.conftest import Key, KeyFactory
from tests.gateway.sessions_helpers import append, open_session

LARGEST = 2**53 - 1


def test_history_after_past_what_a_receipt_holds_is_a_422(
    client: TestClient[Any], agent: Key
) -> None:
    session = open_session(client, agent)["session_id"]
    assert append(client, agent, session, ("user", "hello")).status_code == 200
    turns = f"/v1/sessions/{session}/turns"
    at_bound = client.get(turns, params={"after": LARGEST}, headers=agent.headers)
    assert at_bound.status_code == 200, at_bound.text
    assert at_bound.json()["turns"] == []
    past = client.get(turns, params={"after": LARGEST + 1}, headers=agent.headers)
    assert past.status_code == 422, past.text
    assert [e["field"] for e in past.json()["errors"]] == ["after"]


def test_a_listing_cursor_past_the_log_is_a_422(
    client: TestClient[Any], make_key: KeyFactory
) -> None:
    auditor = make_key(role="auditor", agent_id=None)
    fine = client.get(
        "/v1/receipts", params={"cursor": "9999999999999999"}, headers=auditor.headers
    )
    assert fine.status_code == 200, fine.text
    past = client.get(
        "/v1/receipts", params={"cursor": "9999999999999999999"}, headers=auditor.headers
    )
    assert past.status_code == 422, past.text
    assert [e["field"] for e in past.json()["errors"]] == ["cursor"]
