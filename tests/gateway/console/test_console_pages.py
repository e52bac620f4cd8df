"""The console over real HTTP through the app (TestClient): sign-in and its cookie, revocation,
CSRF, roles, headers, every page with a real receipt, bad input as a page naming the field."""

from __future__ import annotations

import re
from typing import Any

import psycopg
from litestar.testing import TestClient

from tests.conftest import Key, KeyFactory
from tests.gateway.test_context import seed
from tests.gateway.test_replay import ASK

HTML = {"Accept": "text/html"}


def csrf_of(html: str) -> str:
    found = re.search(r'name="csrf" value="([0-9a-f]{64})"', html)
    assert found, "the page carries no CSRF token"
    return found.group(1)


def sign_in(client: TestClient[Any], key: Key) -> str:
    response = client.post("/console/sign-in", data={"key": key.key}, follow_redirects=False)
    assert response.status_code == 303, response.text
    return response.headers["set-cookie"]


def test_sign_in_sets_a_strict_httponly_cookie_and_pages_need_it(
    client: TestClient[Any], make_key: KeyFactory
) -> None:
    auditor = make_key(role="auditor", agent_id=None)
    anonymous = client.get("/console", headers=HTML)
    assert anonymous.status_code == 200 and 'name="key"' in anonymous.text
    assert client.get("/console/policies", headers=HTML).status_code == 401
    cookie = sign_in(client, auditor)
    assert (
        "HttpOnly" in cookie and "samesite=strict" in cookie.lower() and "Path=/console" in cookie
    )
    assert "Max-Age=900" in cookie and auditor.key not in cookie  # sealed, not the key itself
    listed = client.get("/console", headers=HTML)
    assert listed.status_code == 200 and "<h1>Receipts</h1>" in listed.text
    # Sign-out needs the form's token; then the cookie is gone.
    assert client.post("/console/sign-out", data={}, headers=HTML).status_code == 403
    out = client.post(
        "/console/sign-out", data={"csrf": csrf_of(listed.text)}, follow_redirects=False
    )
    assert out.status_code == 303 and 'ctxgw_console=""' in out.headers["set-cookie"]
    client.cookies.clear()
    assert 'name="key"' in client.get("/console", headers=HTML).text


def test_revoked_key_stops_the_session_at_once(
    client: TestClient[Any], make_key: KeyFactory, database_url: str
) -> None:
    auditor = make_key(role="auditor", agent_id=None)
    sign_in(client, auditor)
    assert client.get("/console/policies", headers=HTML).status_code == 200
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("UPDATE api_keys SET revoked_at = now() WHERE key_id = %s", (auditor.key_id,))
    revoked = client.get("/console/policies", headers=HTML)
    assert revoked.status_code == 401 and "revoked_credentials" in revoked.text


def test_a_forged_or_tampered_cookie_is_no_session(
    client: TestClient[Any], make_key: KeyFactory
) -> None:
    sign_in(client, make_key(role="auditor", agent_id=None))
    sealed = client.cookies["ctxgw_console"]
    client.cookies.set("ctxgw_console", sealed[:-4] + "AAAA", path="/console")
    assert client.get("/console/policies", headers=HTML).status_code == 401


def test_agent_keys_are_refused_everywhere(client: TestClient[Any], agent: Key) -> None:
    refused = client.post("/console/sign-in", data={"key": agent.key}, headers=HTML)
    assert refused.status_code == 403 and "wrong_role" in refused.text
    assert "set-cookie" not in refused.headers
    for path in ("/console", "/console/policies", "/console/agents/agent-1"):
        assert client.get(path, headers={**HTML, **agent.headers}).status_code == 403, path


def test_headers_forbid_script_and_framing(client: TestClient[Any], make_key: KeyFactory) -> None:
    auditor = make_key(role="auditor", agent_id=None)
    for path in ("/console", "/console/policies", "/console/receipts/01ARZ3NDEKTSV4RRFFQ69G5FAV"):
        response = client.get(path, headers={**HTML, **auditor.headers})
        csp = response.headers["content-security-policy"]
        assert "default-src 'none'" in csp and "script-src" not in csp, path
        assert "frame-ancestors 'none'" in csp
        assert response.headers["x-frame-options"] == "DENY"
        assert response.headers["cache-control"] == "no-store"
        assert "<script" not in response.text and " style=" not in response.text


def test_bearer_reads_every_page_of_a_real_receipt(
    client: TestClient[Any], agent: Key, make_key: KeyFactory
) -> None:
    ids = seed(client, agent)
    original = client.post("/v1/context", json=ASK, headers=agent.headers).json()
    auditor = make_key(role="auditor", agent_id=None)
    headers = {**HTML, **auditor.headers}
    listed = client.get("/console", headers=headers).text
    assert original["receipt_id"] in listed
    page = client.get(f"/console/receipts/{original['receipt_id']}", headers=headers).text
    assert "Integrity, checked now: valid" in page
    for memory_id in [i["memory_id"] for i in original["included"]] + [
        e["memory_id"] for e in original["excluded"]
    ]:
        assert memory_id in page
    assert "below_top_k" in page and original["bundle_sha256"] in page
    # A bearer caller posts without a CSRF token (no ambient credential to abuse).
    replayed = client.post(
        f"/console/receipts/{original['receipt_id']}/replay",
        data={"mode": "exact"},
        headers=headers,
    )
    assert replayed.status_code == 200, replayed.text
    assert "exact replay: identical" in replayed.text
    assert "matches the receipt: these are the bytes delivered" in replayed.text
    life = client.get(f"/console/memories/{ids[0]}", headers=headers)
    assert life.status_code == 200 and "Rollback procedure" in life.text
    assert original["receipt_id"] in life.text
    agent_page = client.get("/console/agents/agent-1", headers=headers).text
    assert original["receipt_id"] in agent_page and str(ASK["task"]).replace("?", "") in agent_page
    policies = client.get("/console/policies", headers=headers).text
    assert "In force now" in policies


def test_bad_filters_are_a_4xx_naming_the_field(
    client: TestClient[Any], make_key: KeyFactory
) -> None:
    auditor = make_key(role="auditor", agent_id=None)
    headers = {**HTML, **auditor.headers}
    bad = client.get("/console?memory_id=nope&policy_digest=sha1:x&cursor=-1", headers=headers)
    assert bad.status_code == 422
    for field in ("memory_id", "policy_digest", "cursor"):
        assert f"<code>{field}</code>" in bad.text
    as_json = client.get(
        "/console?since=yesterday", headers={"Accept": "application/json", **auditor.headers}
    )
    assert as_json.status_code == 422
    assert as_json.headers["content-type"].startswith("application/problem+json")
    assert as_json.json()["errors"][0]["field"] == "since"
    unknown = client.get("/console?evil=1", headers=headers)
    assert unknown.status_code == 422 and "evil" in unknown.text
    missing = client.get("/console/receipts/01ARZ3NDEKTSV4RRFFQ69G5FAV", headers=headers)
    assert missing.status_code == 404


def test_the_list_pages_newest_first_and_filters_by_policy(
    client: TestClient[Any], agent: Key, make_key: KeyFactory
) -> None:
    seed(client, agent)
    made = [
        client.post("/v1/context", json={**ASK, "task": f"roll back {n}"}, headers=agent.headers).json()["receipt_id"]
        for n in range(3)
    ]  # fmt: skip
    auditor = make_key(role="auditor", agent_id=None)
    headers = {**HTML, **auditor.headers}
    listed = client.get("/console", headers=headers).text
    positions = [listed.index(r) for r in made]
    assert positions == sorted(positions, reverse=True)  # newest first
    digest = client.get("/v1/receipts", headers=auditor.headers).json()["receipts"][0][
        "policy_digest"
    ]
    same = client.get(f"/console?policy_digest={digest}", headers=headers).text
    assert all(r in same for r in made)
    other = client.get("/console?policy_digest=sha256:" + "0" * 64, headers=headers).text
    assert not any(r in other for r in made) and "No receipts." in other


def test_cursor_paging_walks_back_through_the_log(
    client: TestClient[Any], agent: Key, make_key: KeyFactory, monkeypatch: Any
) -> None:
    from gateway.usecases.audit import console

    monkeypatch.setattr(console, "PAGE", 2)
    seed(client, agent)
    made = [
        client.post("/v1/context", json={**ASK, "task": f"roll back {n}"}, headers=agent.headers).json()["receipt_id"]
        for n in range(3)
    ]  # fmt: skip
    headers = {**HTML, **make_key(role="auditor", agent_id=None).headers}
    first = client.get("/console?kind=context", headers=headers).text
    assert made[2] in first and made[1] in first and made[0] not in first
    older = re.search(r'rel="next" href="([^"]+)"', first)
    assert older is not None
    second = client.get(older.group(1).replace("&amp;", "&"), headers=headers).text
    assert made[0] in second and made[1] not in second and 'rel="next"' not in second


def test_a_cookie_session_cannot_replay_without_the_form_token(
    client: TestClient[Any], agent: Key, make_key: KeyFactory
) -> None:
    seed(client, agent)
    receipt_id = client.post("/v1/context", json=ASK, headers=agent.headers).json()["receipt_id"]
    sign_in(client, make_key(role="auditor", agent_id=None))
    page = client.get(f"/console/receipts/{receipt_id}", headers=HTML).text
    path = f"/console/receipts/{receipt_id}/replay"
    forged = client.post(path, data={"mode": "exact", "csrf": "0" * 64}, headers=HTML)
    assert forged.status_code == 403 and "csrf_failed" in forged.text
    assert client.post(path, data={"mode": "exact"}, headers=HTML).status_code == 403
    done = client.post(path, data={"mode": "exact", "csrf": csrf_of(page)}, headers=HTML)
    assert done.status_code == 200 and "exact replay: identical" in done.text
    bad = client.post(path, data={"mode": "sideways", "csrf": csrf_of(page)}, headers=HTML)
    assert bad.status_code == 422 and "<code>mode</code>" in bad.text


def test_a_memory_s_life_shows_versions_deletion_and_erasure(
    client: TestClient[Any], agent: Key, make_key: KeyFactory, database_url: str
) -> None:
    ids = seed(client, agent)
    receipt_id = client.post("/v1/context", json=ASK, headers=agent.headers).json()["receipt_id"]
    newer = client.post(
        "/v1/memories",
        json={"namespace": "ops", "heading": "Rollback procedure v2", "memory_type": "semantic",
              "content": "Run atlasctl rollback --to <sha> --safe.", "supersedes": ids[0]},
        headers=agent.headers,
    ).json()["memory_id"]  # fmt: skip
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute(
            "SELECT erase_memory(%s, %s, 'subject request 42', now())", (agent.tenant_id, ids[0])
        )
    headers = {**HTML, **make_key(role="auditor", agent_id=None).headers}
    for asked in (ids[0], newer):  # the same life from either end
        life = client.get(f"/console/memories/{asked}", headers=headers).text
        assert "2 versions" in life and ids[0] in life and newer in life
        assert (
            "subject request 42" in life
            and "Run atlasctl rollback --to &lt;sha&gt; --safe." in life
        )
        assert "page the on-call engineer" not in life  # erased: the text is gone
        assert receipt_id in life  # which receipts used it
        assert "Supersession decisions" in life and "<td>explicit</td>" in life
    missing = client.get("/console/memories/01ARZ3NDEKTSV4RRFFQ69G5FAV", headers=headers)
    assert missing.status_code == 404


def test_a_session_context_receipt_reads_and_replays_on_its_page(
    client: TestClient[Any], agent: Key, make_key: KeyFactory
) -> None:
    from tests.gateway.sessions_helpers import append, context, open_session

    session = open_session(client, agent)
    turn = "<img src=x onerror=alert(1)> I want to see the tiles museum."
    assert append(client, agent, session["session_id"], ("user", turn)).status_code == 200
    made = context(client, agent, session["session_id"]).json()
    headers = {**HTML, **make_key(role="auditor", agent_id=None).headers}
    page = client.get(f"/console/receipts/{made['receipt_id']}", headers=headers)
    assert page.status_code == 200 and "Integrity, checked now: valid" in page.text
    replayed = client.post(
        f"/console/receipts/{made['receipt_id']}/replay", data={"mode": "exact"}, headers=headers
    )
    assert replayed.status_code == 200, replayed.text
    assert "exact replay: identical" in replayed.text and "text sha256 after" in replayed.text
    assert "&lt;img src=x onerror=alert(1)&gt; I want to see" in replayed.text
    assert "<img src=x" not in replayed.text


def test_a_refusal_reads_and_replays_on_its_page(
    client: TestClient[Any], agent: Key, make_key: KeyFactory
) -> None:
    from tests.gateway.test_policies_api import STRICT, activate
    from tests.gateway.test_refusals import LENIENT

    seed(client, agent)
    activate(client, make_key(role="admin"), STRICT, "enforce")
    refused = client.post("/v1/context", json={"task": "roll back"}, headers=agent.headers)
    assert refused.status_code == 403
    receipt_id = refused.json()["receipt_id"]
    headers = {**HTML, **make_key(role="auditor", agent_id=None).headers}
    listed = client.get("/console?kind=refusal", headers=headers).text
    assert receipt_id in listed
    page = client.get(f"/console/receipts/{receipt_id}", headers=headers)
    assert page.status_code == 200 and "Integrity, checked now: valid" in page.text
    path = f"/console/receipts/{receipt_id}/replay"
    exact = client.post(path, data={"mode": "exact"}, headers=headers)
    assert exact.status_code == 200 and "exact replay: identical" in exact.text
    what_if = client.post(
        path, data={"mode": "what_if", "policy_yaml": LENIENT.decode()}, headers=headers
    )
    assert what_if.status_code == 200 and "what_if replay: different" in what_if.text
    current = client.post(path, data={"mode": "current"}, headers=headers)
    assert current.status_code == 422 and "replay_unsupported" in current.text
    bad_yaml = client.post(
        path, data={"mode": "what_if", "policy_yaml": "spec: ["}, headers=headers
    )
    assert bad_yaml.status_code == 422 and "policy_yaml" in bad_yaml.text


def test_the_agent_form_leads_to_the_agent_at_its_instant(
    client: TestClient[Any], agent: Key, make_key: KeyFactory
) -> None:
    seed(client, agent)
    receipt_id = client.post("/v1/context", json=ASK, headers=agent.headers).json()["receipt_id"]
    headers = {**HTML, **make_key(role="auditor", agent_id=None).headers}
    sent = client.get(
        "/console/agents?agent_id=agent-1&at=2999-01-01T00:00:00",
        headers=headers,
        follow_redirects=False,
    )
    assert sent.status_code == 303
    assert (
        sent.headers["location"] == "/console/agents/agent-1?at=2999-01-01T00%3A00%3A00%2B00%3A00"
    )
    page = client.get(sent.headers["location"], headers=headers)
    assert page.status_code == 200 and receipt_id in page.text
    before = client.get("/console/agents/agent-1?at=2001-01-01T00:00:00", headers=headers).text
    assert receipt_id in before  # listed after the instant, not before it
    assert before.index(receipt_id) > before.index("after the instant")
    assert client.get("/console/agents?at=2001-01-01", headers=headers).status_code == 422


def test_a_sign_in_posted_from_another_site_is_refused(
    client: TestClient[Any], make_key: KeyFactory
) -> None:
    # Login CSRF: another site's page posting its own key would sign this browser in as that
    # key. Sign-in has no session, so no token: the browser's own headers decide.
    auditor = make_key(role="auditor", agent_id=None)
    for headers in (
        {"Origin": "https://evil.example"},
        {"Sec-Fetch-Site": "cross-site"},
        {"Sec-Fetch-Site": "same-site", "Origin": "http://testserver.local"},
    ):
        refused = client.post(
            "/console/sign-in",
            data={"key": auditor.key},
            headers={**HTML, **headers},
            follow_redirects=False,
        )
        assert refused.status_code == 403, headers
        assert "csrf_failed" in refused.text and "set-cookie" not in refused.headers
    same = client.post(
        "/console/sign-in",
        data={"key": auditor.key},
        headers={"Origin": "http://testserver.local", "Sec-Fetch-Site": "same-origin"},
        follow_redirects=False,
    )
    assert same.status_code == 303 and "ctxgw_console=" in same.headers["set-cookie"]
