"""The bad-input sweep of bench.bad_input against the served app: every hostile request is a 4xx
RFC 9457 problem (none a 5xx, none a success), and none wrote anything."""

from __future__ import annotations

import psycopg

from bench.bad_input import Keys, try_all
from tests.conftest import KeyFactory


def test_every_hostile_request_is_a_4xx_problem(
    served: str, make_key: KeyFactory, database_url: str
) -> None:
    keys = Keys(
        agent=make_key().key,
        admin=make_key(role="admin", agent_id=None).key,
        auditor=make_key(role="auditor", agent_id=None).key,
        foreign_admin=make_key(tenant="globex", role="admin", agent_id=None).key,
    )
    results = try_all(served, keys)
    wrong = [(a.what, status, code) for a, status, code in results if not 400 <= status < 500]
    assert wrong == []
    assert all(code != "?" and not code.startswith("{") for _, _, code in results)
    with psycopg.connect(database_url) as conn:
        written = conn.execute(
            "SELECT (SELECT count(*) FROM memories) + (SELECT count(*) FROM erasures)"
        ).fetchone()
    assert written == (0,)
