"""A JSON body must say it is JSON: any other declared media type is a 415 problem."""

from __future__ import annotations

from typing import Any

import pytest
from litestar.testing import TestClient

from tests.conftest import Key

BODY = b'{"namespace": "ops", "heading": "h", "content": "c"}'


@pytest.mark.parametrize(
    "content_type",
    [
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "text/json",
    ],
)
def test_json_sent_as_another_type_is_refused(
    client: TestClient[Any], agent: Key, content_type: str
) -> None:
    response = client.post(
        "/v1/memories", content=BODY, headers={**agent.headers, "content-type": content_type}
    )
    assert response.status_code == 415, response.text
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["code"] == "unsupported_media_type"
    assert content_type.partition(";")[0] in response.json()["detail"]
    listed = client.post("/v1/search", json={"query": "h"}, headers=agent.headers)
    assert listed.json()["results"] == []  # nothing was written


@pytest.mark.parametrize(
    "content_type",
    ["application/json", "application/json; charset=utf-8", "application/merge-patch+json"],
)
def test_json_by_its_names_is_read(client: TestClient[Any], agent: Key, content_type: str) -> None:
    response = client.post(
        "/v1/memories", content=BODY, headers={**agent.headers, "content-type": content_type}
    )
    assert response.status_code == 201, response.text


def test_a_policy_upload_takes_yaml_but_not_a_form(client: TestClient[Any], make_key: Any) -> None:
    admin = make_key(role="admin", agent_id=None)
    form = {**admin.headers, "content-type": "application/x-www-form-urlencoded"}
    response = client.post("/v1/policies", content=b"version: 1\n", headers=form)
    assert response.status_code == 415
    assert response.json()["code"] == "unsupported_media_type"
