"""The console as an auditor reads it: receipts an auditor's or admin's request wrote are
labelled as theirs, the ledger names each memory by its heading, every instant is written one
way, the kind filter lists the registry's kinds, signing in returns to the page asked for (and
nowhere else), and in a real browser a replay's result is on screen when the page opens."""

from __future__ import annotations

import re
import tempfile
from collections.abc import Iterator
from datetime import UTC, datetime
from html import unescape
from typing import Any
from urllib.parse import quote

import pytest
from litestar.testing import TestClient

from gateway.usecases.receiptlog.kinds import KINDS
from tests.conftest import Key, KeyFactory
from tests.gateway.console.test_console_browser import ARGS, CHROMIUM
from tests.gateway.console.test_console_pages import HTML
from tests.gateway.test_context import seed
from tests.gateway.test_replay import ASK

INSTANT = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC")
OTHER_INSTANTS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d|\+00:00")


def _text(html: str) -> str:
    """What a reader sees: the page without its tags (attributes hold machine forms)."""
    return unescape(re.sub(r"<[^>]*>", " ", html))


@pytest.fixture
def auditor(make_key: KeyFactory) -> Key:
    return make_key(role="auditor", agent_id=None)


@pytest.fixture
def receipts(client: TestClient[Any], agent: Key, auditor: Key) -> dict[str, str]:
    """An agent's bundle, an auditor's as-of bundle of the same task, and an auditor's replay."""
    ids = seed(client, agent)
    bundle = client.post("/v1/context", json=ASK, headers=agent.headers).json()
    as_of = {**ASK, "as_of": datetime.now(UTC).isoformat()}
    audited = client.post("/v1/context", json=as_of, headers=auditor.headers)
    assert audited.status_code == 200, audited.text
    replayed = client.post(
        f"/v1/receipts/{bundle['receipt_id']}/replay",
        json={"mode": "exact"},
        headers=auditor.headers,
    )
    assert replayed.status_code == 200, replayed.text
    return {
        "agent": bundle["receipt_id"],
        "as_of": audited.json()["receipt_id"],
        "replay": replayed.json()["receipt_id"],
        "memory": ids[0],
    }


def _row(listing: str, receipt_id: str) -> str:
    found = re.search(rf"<tr>(?:(?!</tr>).)*{receipt_id}(?:(?!</tr>).)*</tr>", listing, re.S)
    assert found, receipt_id
    return _text(found.group(0))


def test_an_auditor_s_receipts_are_labelled_as_theirs(
    client: TestClient[Any], auditor: Key, receipts: dict[str, str]
) -> None:
    listing = client.get("/console", headers={**HTML, **auditor.headers}).text
    assert "by an auditor" not in _row(listing, receipts["agent"])
    assert "context bundle" in _row(listing, receipts["agent"])
    assert "by an auditor" in _row(listing, receipts["as_of"])
    replay = _row(listing, receipts["replay"])
    assert "replay of a bundle" in replay and "by an auditor" in replay
    page = client.get(f"/console/receipts/{receipts['as_of']}", headers={**HTML, **auditor.headers})
    assert "context bundle" in page.text and "by an auditor" in page.text


def test_the_ledger_names_each_memory_by_its_heading(
    client: TestClient[Any], auditor: Key, receipts: dict[str, str]
) -> None:
    page = client.get(f"/console/receipts/{receipts['agent']}", headers={**HTML, **auditor.headers})
    rows = re.findall(r"<tr class=\"(?:in|out)\">(.*?)</tr>", page.text, re.S)
    assert rows
    for row in rows:
        memory_id, heading = re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)[1:3]
        assert _text(memory_id).strip() and _text(heading).strip(), row
    assert "Rollback procedure" in _text(page.text)


def test_every_instant_is_written_one_way(
    client: TestClient[Any], auditor: Key, receipts: dict[str, str]
) -> None:
    headers = {**HTML, **auditor.headers}
    for path in (
        "/console",
        f"/console/receipts/{receipts['agent']}",
        f"/console/memories/{receipts['memory']}",
        f"/console/agents/agent-1?at={quote(datetime.now(UTC).isoformat(), safe='')}",
        "/console/policies",
    ):
        page = client.get(path, headers=headers)
        assert page.status_code == 200, path
        shown = _text(page.text)
        assert not OTHER_INSTANTS.search(shown), (path, OTHER_INSTANTS.search(shown))
        assert INSTANT.search(shown), path
        # The machine form, full precision, stays in the markup for whoever reads it.
        assert re.search(r'<time datetime="\d{4}-\d\d-\d\dT[0-9:.]+Z">', page.text), path


def test_the_kind_filter_lists_the_registry_s_kinds(client: TestClient[Any], auditor: Key) -> None:
    listing = client.get("/console", headers={**HTML, **auditor.headers}).text
    select = re.search(r'<select id="f-kind" name="kind">(.*?)</select>', listing, re.S)
    assert select
    options = re.findall(r'<option value="([^"]*)"[^>]*>([^<]*)</option>', select.group(1))
    assert options == [("", "any"), *((k.name, k.label) for k in KINDS)]
    chosen = client.get("/console?kind=replay", headers={**HTML, **auditor.headers}).text
    assert '<option value="replay" selected>' in chosen


def test_signing_in_returns_to_the_page_asked_for(
    client: TestClient[Any], auditor: Key, receipts: dict[str, str]
) -> None:
    asked = f"/console/receipts/{receipts['agent']}"
    refused = client.get(asked, headers=HTML)
    assert refused.status_code == 401
    action = re.search(r'<form method="post" action="([^"]+)"', refused.text)
    assert action and unescape(action.group(1)) == f"/console/sign-in?next={quote(asked, safe='/')}"
    signed = client.post(
        unescape(action.group(1)), data={"key": auditor.key}, follow_redirects=False
    )
    assert signed.status_code == 303 and signed.headers["location"] == asked
    assert "Integrity, checked now" in client.get(asked, headers=HTML).text
    client.cookies.clear()
    # A query is kept; a wrong key keeps the way back on the form shown again.
    listing = "/console?kind=replay"
    form = client.get(listing, headers=HTML).text
    assert f"/console/sign-in?next={quote(listing, safe='/')}" in unescape(form)
    wrong = client.post(
        f"/console/sign-in?next={quote(listing, safe='/')}", data={"key": "nope"}, headers=HTML
    )
    assert wrong.status_code == 401 and f"next={quote(listing, safe='/')}" in unescape(wrong.text)


@pytest.mark.parametrize(
    "elsewhere",
    ["https://evil.example/console", "//evil.example/console", "/v1/receipts", "/consolex",
     "/\\evil.example", "javascript:alert(1)"],
)  # fmt: skip
def test_signing_in_sends_nowhere_but_the_console(
    client: TestClient[Any], auditor: Key, elsewhere: str
) -> None:
    signed = client.post(
        f"/console/sign-in?next={quote(elsewhere, safe='')}",
        data={"key": auditor.key},
        follow_redirects=False,
    )
    assert signed.status_code == 303 and signed.headers["location"] == "/console"


@pytest.fixture
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with (
        tempfile.TemporaryDirectory(prefix="ctxgw-chromium-") as profile,
        sync_playwright() as playwright,
    ):
        context = playwright.chromium.launch_persistent_context(
            profile,
            executable_path=str(CHROMIUM),
            headless=True,
            args=ARGS,
            viewport={"width": 1280, "height": 800},
        )
        try:
            page = context.new_page()
            page.set_default_timeout(15_000)
            yield page
        finally:
            context.close()


@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium (make test installs it)")
def test_a_replay_s_result_is_in_view_when_its_page_opens(
    served: str, agent: Key, auditor: Key, browser: Any
) -> None:
    import httpx

    with httpx.Client(base_url=served) as http:
        seed(http, agent)  # type: ignore[arg-type]  # the same calls over real HTTP
        receipt_id = http.post("/v1/context", json=ASK, headers=agent.headers).json()["receipt_id"]
    page = browser
    page.goto(f"{served}/console/receipts/{receipt_id}")
    page.get_by_label("API key").fill(auditor.key)
    page.get_by_role("button", name="Sign in").click()
    # Back on the receipt asked for, not the list.
    page.get_by_role("heading", name="Integrity, checked now: valid").wait_for()
    assert page.url == f"{served}/console/receipts/{receipt_id}"
    page.get_by_role("button", name="Replay").click()
    result = page.locator("#replay-result")
    result.wait_for()
    assert page.url.endswith("#replay-result")
    box = result.bounding_box()
    height = page.viewport_size["height"]
    assert box is not None and 0 <= box["y"] < height, (box, height)
    assert page.evaluate("() => window.scrollY") > 1000  # the page opened far down, at it
