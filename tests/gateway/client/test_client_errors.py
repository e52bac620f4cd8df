"""Problems come back as typed errors carrying code, status and every bad field; an answer outside
the contract raises rather than returning garbage."""

from __future__ import annotations

import httpx
import pytest

from gateway.client import (
    Client,
    InvalidRequestError,
    NotFoundError,
    ProblemError,
    UnauthenticatedError,
    UnexpectedResponseError,
)
from gateway.responses.problems import FieldProblem
from tests.conftest import Key, KeyFactory


def test_a_validation_problem_names_every_bad_field(served: str, agent: Key) -> None:
    with Client(agent.key, served) as ctxgw, pytest.raises(InvalidRequestError) as raised:
        ctxgw.write_memory("bad namespace!", "", "x", confidence=2.0)
    error = raised.value
    assert (error.status, error.code) == (422, "invalid_request")
    assert {e.field for e in error.errors} == {"namespace", "heading", "confidence"}
    assert all(isinstance(e, FieldProblem) and e.message for e in error.errors)


def test_unknown_keys_and_other_tenants_objects(
    served: str, agent: Key, make_key: KeyFactory
) -> None:
    with Client("ctxgw_not_a_key", served) as stranger, pytest.raises(UnauthenticatedError) as e:
        stranger.search("anything")
    assert e.value.status == 401 and e.value.errors == ()
    with Client(agent.key, served) as ctxgw:
        receipt_id = ctxgw.search("anything").receipt_id
    with (
        Client(make_key(tenant="globex", role="auditor").key, served) as other,
        pytest.raises(NotFoundError) as missing,
    ):
        other.receipt(receipt_id)
        assert missing.value.code == "not_found"
        # An id that would leave its path segment stays in it.
        with pytest.raises(ProblemError) as traversal:
            other.receipt("../memories")
        assert traversal.value.status == 404


def _answering(status: int, content_type: str, body: bytes) -> httpx.MockTransport:
    return httpx.MockTransport(
        lambda _: httpx.Response(status, headers={"content-type": content_type}, content=body)
    )


@pytest.mark.parametrize(
    ("status", "content_type", "body", "reason"),
    [
        (502, "text/html", b"<html>Bad gateway</html>", "an error without a problem body"),
        (403, "application/problem+json", b'{"oops": 1}', "a malformed problem body"),
        (200, "application/json", b'{"status": "fine"}', "the body is not the contract's"),
        (200, "application/json", b"not json", "the body is not the contract's"),
    ],
)
def test_an_answer_outside_the_contract_raises(
    status: int, content_type: str, body: bytes, reason: str
) -> None:
    with (
        Client("k", transport=_answering(status, content_type, body)) as ctxgw,
        pytest.raises(UnexpectedResponseError) as raised,
    ):
        ctxgw.health()
    assert raised.value.status == status and raised.value.reason.startswith(reason)
    assert raised.value.body == body
