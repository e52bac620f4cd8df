"""Instants at the edge of the calendar cannot poison a namespace.

PostgreSQL stores years up to 294276 and before year 1; Python's `datetime` (and so psycopg)
holds only years 1..9999. A client instant is bounded to what both can hold (422 naming the
field), and a row already stored with an extreme value reads as the nearest bound, so every
read of its namespace still answers.
"""

from __future__ import annotations

from typing import Any

import psycopg
import pytest
from litestar.testing import TestClient

from tests.conftest import Key
from tests.gateway.test_bad_input import error_fields
from tests.gateway.test_memories_write import memory, write

# Valid RFC 3339, but one minute past 9999-12-31 and one minute before 0001-01-01 in UTC.
TOO_LATE = "9999-12-31T23:59:59-00:01"
TOO_EARLY = "0001-01-01T00:00:00+23:59"


@pytest.mark.parametrize("instant", [TOO_LATE, TOO_EARLY, "9999-12-31T12:00:00Z"])
def test_a_memory_expiring_beyond_the_calendar_is_422_naming_the_field(
    client: TestClient[Any], agent: Key, instant: str
) -> None:
    response = write(client, agent, expires_at=instant)
    assert response.status_code == 422, response.text
    assert "expires_at" in error_fields(response)
    assert "between" in error_fields(response)["expires_at"]


def test_a_batch_item_beyond_the_calendar_names_the_item(
    client: TestClient[Any], agent: Key
) -> None:
    items = [memory(), memory(expires_at=TOO_LATE)]
    response = client.post("/v1/memories/batch", json={"items": items}, headers=agent.headers)
    assert response.status_code == 422, response.text
    assert "items/1/expires_at" in error_fields(response)


def test_instants_in_queries_are_bounded(client: TestClient[Any], make_key: Any) -> None:
    auditor = make_key(role="auditor", agent_id=None)
    context = client.post(
        "/v1/context", json={"task": "anything", "as_of": TOO_EARLY}, headers=auditor.headers
    )
    assert context.status_code == 422, context.text
    assert "as_of" in error_fields(context)
    listed = client.get("/v1/receipts", params={"until": TOO_LATE}, headers=auditor.headers)
    assert listed.status_code == 422, listed.text
    assert "until" in error_fields(listed)


def test_the_latest_instant_allowed_is_stored_and_read_back(
    client: TestClient[Any], agent: Key
) -> None:
    response = write(client, agent, expires_at="9999-12-30T00:00:00Z")
    assert response.status_code == 201, response.text
    fetched = client.post(
        "/v1/fetch", json={"ids": [response.json()["memory_id"]]}, headers=agent.headers
    )
    assert fetched.json()["memories"][0]["expires_at"].startswith("9999-12-30")


@pytest.mark.parametrize(
    "stored", ["10000-01-01 00:00:59+00", "0001-12-31 00:01:00+00 BC", "infinity", "-infinity"]
)
def test_a_row_already_stored_with_an_extreme_instant_does_not_poison_reads(
    client: TestClient[Any], agent: Key, database_url: str, stored: str
) -> None:
    good = write(client, agent, heading="Rollback procedure", content="Run rollback, page on-call")
    poisoned = write(client, agent, heading="Rollback notes", content="Rollback needs a ticket")
    ids = [good.json()["memory_id"], poisoned.json()["memory_id"]]
    with psycopg.connect(database_url, autocommit=True) as conn:
        # As an older version or a repair by hand could have: past the immutability trigger.
        conn.execute("ALTER TABLE memories DISABLE TRIGGER USER")
        conn.execute(
            "UPDATE memories SET expires_at = %(at)s::timestamptz WHERE memory_id = %(id)s",
            {"at": stored, "id": ids[1]},
        )
        conn.execute("ALTER TABLE memories ENABLE TRIGGER USER")
    asks = [
        ("/v1/context", {"task": "how do I roll back?"}),
        ("/v1/search", {"query": "rollback"}),
        ("/v1/fetch", {"ids": ids}),
        ("/v1/timeline", {"ids": ids}),
    ]
    for path, body in asks:
        response = client.post(path, json=body, headers=agent.headers)
        assert response.status_code == 200, (path, response.text)
    fetched = client.post("/v1/fetch", json={"ids": ids}, headers=agent.headers).json()
    shown = {m["memory_id"] for m in fetched["memories"]}
    # A past instant reads as the earliest bound (expired); a future one as the latest (live).
    assert (ids[1] in shown) is (not stored.startswith(("-", "0001")))
    assert ids[0] in shown
