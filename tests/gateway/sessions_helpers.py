"""Shared helpers for the session tests: open a session, append turns, ask for a context."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from litestar.testing import TestClient

from tests.conftest import Key, KeyFactory


def open_session(client: TestClient[Any], key: Key, **body: Any) -> dict[str, Any]:
    payload = {"namespace": "chat", "task": "Help the user plan a trip to Lisbon.", **body}
    response = client.post("/v1/sessions", json=payload, headers=key.headers)
    assert response.status_code == 201, response.text
    result: dict[str, Any] = response.json()
    return result


def append(
    client: TestClient[Any], key: Key, session_id: str, *turns: tuple[str, str], **body: Any
) -> Any:
    payload = {"turns": [{"role": r, "content": c} for r, c in turns], **body}
    return client.post(f"/v1/sessions/{session_id}/turns", json=payload, headers=key.headers)


def context(client: TestClient[Any], key: Key, session_id: str, **body: Any) -> Any:
    return client.post(f"/v1/sessions/{session_id}/context", json=body, headers=key.headers)


def receipt_body(client: TestClient[Any], make_key: KeyFactory, receipt_id: str) -> Any:
    """A receipt's signed body, read as an auditor (the owning agent reads its row alone)."""
    response = client.get(f"/v1/receipts/{receipt_id}", headers=make_key(role="auditor").headers)
    assert response.status_code == 200, response.text
    return response.json()["body"]


@contextmanager
def session_contexts_as(client: TestClient[Any], **changes: Any) -> Iterator[None]:
    """The block's session contexts built with `changes` to the gateway's (an earlier layout,
    another discloser), as a gateway of that version would build them."""
    state = client.app.state
    current = state.runtime
    changed = dataclasses.replace(current.session_contexts, **changes)
    state.runtime = dataclasses.replace(current, session_contexts=changed)
    try:
        yield
    finally:
        state.runtime = current
