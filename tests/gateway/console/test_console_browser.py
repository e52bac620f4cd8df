"""The console as a person uses it: Debian's Chromium (headless, driven by Playwright's Python
API, nothing downloaded) against the real gateway served on a loopback port.

Sign in, filter the list, open a receipt, read its ledger, replay it exactly and under a pasted
policy, open a memory's life, the agent's instant and the policies, sign out. Payloads stored in
memories, headings, tasks and agent ids must show as text and never run: each page is checked in
the browser (a global the payloads would set, the title they would change, no CSP violation
reported, which any injected element would cause). Screenshots of the main pages go to a
temporary folder, printed for a reviewer."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import Key, KeyFactory
from tests.gateway.test_policies_api import STRICT

CHROMIUM = Path("/usr/bin/chromium")
pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="needs Debian's chromium (make test installs it)"
)

SCRIPT = "<script>window.__xss = 'script'; document.title = 'pwned'</script>"
HANDLER = "<img src=x onerror=\"window.__xss = 'handler'; document.title = 'pwned'\">"
LINK = "javascript:window.__xss='link'"
AGENT = '"><svg onload="window.__xss=\'agent\'">'
TASK = f"roll back the deploy {SCRIPT}"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture
def browser_page() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with (
        tempfile.TemporaryDirectory(prefix="ctxgw-chromium-") as profile,
        sync_playwright() as playwright,
    ):
        # A fresh profile each time (Playwright passes it as --user-data-dir).
        context = playwright.chromium.launch_persistent_context(
            profile, executable_path=str(CHROMIUM), headless=True, args=ARGS
        )
        try:
            page = context.new_page()
            page.set_default_timeout(15_000)
            yield page
        finally:
            context.close()


def _seed(base: str, agent: Key, admin: Key) -> dict[str, Any]:
    items = [
        {"namespace": "ops", "memory_type": "procedural", "confidence": 0.9,
         "heading": f"Rollback {HANDLER}", "content": f"Run atlasctl rollback. {SCRIPT} {LINK}"},
        {"namespace": "ops", "memory_type": "semantic", "confidence": 0.8,
         "heading": "Deploy schedule", "content": "Deploys roll out every Tuesday."},
        {"namespace": "ops", "memory_type": "semantic", "confidence": 0.7,
         "heading": "Support hours", "content": "Support answers on weekdays."},
    ]  # fmt: skip
    with httpx.Client(base_url=base, timeout=30) as http:
        written = http.post("/v1/memories/batch", json={"items": items}, headers=agent.headers)
        assert written.status_code == 200, written.text
        ids = [item["memory_id"] for item in written.json()["items"]]
        ask = {"task": TASK, "budget_tokens": 400, "top_k": 2}
        bundle = http.post("/v1/context", json=ask, headers=agent.headers)
        assert bundle.status_code == 200, bundle.text
        upload = http.post(
            "/v1/policies",
            content=STRICT,
            headers={**admin.headers, "content-type": "application/yaml"},
        )
        assert upload.status_code in (200, 201), upload.text
    return {"ids": ids, "receipt_id": bundle.json()["receipt_id"]}


class Watch:
    """What the page's scripts could have done: a CSP violation any injected element reports,
    the global and the title the payloads set."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.violations: list[str] = []
        page.on(
            "console",
            lambda m: (
                self.violations.append(m.text) if "Content Security Policy" in m.text else None
            ),
        )

    def assert_inert(self, where: str) -> None:
        """Nothing ran, no link leads to script, and every field a person fills has a label."""
        assert self.page.evaluate("() => window.__xss === undefined"), where
        assert "pwned" not in self.page.title(), where
        assert self.violations == [], (where, self.violations)
        scripted = "els => els.filter(e => e.protocol === 'javascript:').length"
        assert self.page.eval_on_selector_all("a[href]", scripted) == 0, where
        unlabelled = "els => els.filter(e => e.labels.length === 0).map(e => e.name)"
        fields = "input:not([type=hidden]), select, textarea"
        assert self.page.eval_on_selector_all(fields, unlabelled) == [], where


def test_an_auditor_works_through_the_console_in_a_browser(
    served: str, make_key: KeyFactory, browser_page: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    page = browser_page
    agent = make_key(role="agent", agent_id=AGENT)
    admin = make_key(role="admin", agent_id=None)
    auditor = make_key(role="auditor", agent_id=None)
    seeded = _seed(served, agent, admin)
    shots = Path(tempfile.mkdtemp(prefix="ctxgw-console-screenshots-"))
    with capsys.disabled():
        print(f"\nconsole screenshots: {shots}")
    watch = Watch(page)

    # Sign in: the form is labelled, and an agent's key is refused.
    page.goto(f"{served}/console")
    page.get_by_label("API key").fill(agent.key)
    page.get_by_role("button", name="Sign in").click()
    assert page.get_by_role("alert").inner_text().count("wrong_role") == 1
    page.get_by_label("API key").fill(auditor.key)
    page.get_by_label("API key").press("Enter")
    page.get_by_role("heading", name="Receipts").wait_for()
    cookies = {c["name"]: c for c in page.context.cookies()}
    session = cookies["ctxgw_console"]
    assert session["httpOnly"] and session["sameSite"] == "Strict"
    assert page.evaluate("() => document.cookie") == ""  # HttpOnly: scripts cannot read it
    page.screenshot(path=str(shots / "1-receipts.png"), full_page=True)
    watch.assert_inert("receipts list")

    # Keyboard: skip link first, then the navigation, then the filter form, in reading order.
    page.locator("body").focus()
    order = []
    for _ in range(6):
        page.keyboard.press("Tab")
        order.append(
            page.evaluate(
                "() => document.activeElement.id || document.activeElement.textContent.trim()"
            )
        )
    assert order == [
        "Skip to content",
        "ctxgw console",
        "Receipts",
        "Policies",
        "Sign out",
        "f-agent",
    ]
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Shift+Tab")
    assert page.evaluate("() => document.activeElement.textContent.trim()") == "Skip to content"
    page.keyboard.press("Enter")
    assert page.evaluate("() => document.activeElement.id") == "main"

    # Filter by the agent (its id is the payload) and kind: only its context receipt is listed.
    page.get_by_label("Agent", exact=True).fill(AGENT)
    page.get_by_label("Kind").select_option("context")
    page.get_by_role("button", name="Filter").click()
    page.get_by_role("heading", name="Receipts").wait_for()
    rows = page.locator("table.receipts tbody tr")
    assert rows.count() == 1 and AGENT in rows.first.inner_text()
    watch.assert_inert("filtered list")

    # One receipt: integrity valid, every candidate in the ledger with a reason.
    page.get_by_role("link", name=seeded["receipt_id"]).click()
    page.get_by_role("heading", name="Integrity, checked now: valid").wait_for()
    ledger = page.locator("table.ledger tbody tr")
    assert ledger.count() == 3
    assert page.locator("ul.counts").inner_text().split() == ["included", "2", "below_top_k", "1"]
    assert TASK in page.locator("dd.text").first.inner_text()
    page.screenshot(path=str(shots / "2-receipt.png"), full_page=True)
    watch.assert_inert("receipt")

    # Exact replay: identical, the bytes rebuilt and their sha256 recomputed to the receipt's.
    page.get_by_label("exact: the recorded candidates, versions and policy").check()
    page.get_by_role("button", name="Replay").click()
    page.get_by_role("heading", name="exact replay: identical").wait_for()
    assert "matches the receipt" in page.locator("#recomputed").inner_text()
    assert f"Rollback {HANDLER}" in page.locator("#bundle-bytes").inner_text()  # index: text
    page.screenshot(path=str(shots / "3-exact-replay.png"), full_page=True)
    watch.assert_inert("exact replay")

    # What-if under a pasted policy: the diff is shown and the replay is itself receipted.
    page.get_by_label("what-if: the recorded candidates under another policy").check()
    page.get_by_label("or candidate policy YAML (what-if)").fill(STRICT.decode())
    page.get_by_role("button", name="Replay").click()
    result = page.locator("#replay-result")
    assert result.locator("h3").inner_text() == "what_if replay: different"
    assert "bundle sha256 after" in result.inner_text()
    assert "Decision changes" in result.inner_text()  # strict.yaml judges what the default did not
    page.screenshot(path=str(shots / "4-what-if.png"), full_page=True)
    watch.assert_inert("what-if replay")

    # A memory's life: the payload heading is text; the receipt that disclosed it is listed.
    page.get_by_role("link", name=seeded["ids"][0]).first.click()
    page.get_by_role("heading", name="The life of memory").wait_for()
    assert page.locator("dd.heading").inner_text() == f"Rollback {HANDLER}"
    assert SCRIPT in page.locator("pre.content").inner_text()
    assert page.get_by_role("link", name=seeded["receipt_id"]).count() == 1
    page.screenshot(path=str(shots / "5-memory.png"), full_page=True)
    watch.assert_inert("memory life")

    # The agent at an instant, and its as-of bundle assembled from the last request's defaults.
    page.get_by_role("link", name=seeded["receipt_id"]).click()
    page.get_by_role("link", name=AGENT).first.click()
    page.get_by_role("heading", name="What did").wait_for()
    assert page.get_by_label("Task").input_value() == TASK
    page.get_by_role("button", name="Assemble as of the instant").click()
    assert "Rollback" in page.locator("#asof-result pre").inner_text()
    page.screenshot(path=str(shots / "6-agent.png"), full_page=True)
    watch.assert_inert("agent at an instant")

    # Policies: the stored bundle with its source, and a what-if over recent receipts.
    page.get_by_role("link", name="Policies").click()
    page.get_by_role("heading", name="Stored bundles").wait_for()
    page.get_by_label("or candidate YAML").fill(STRICT.decode())
    page.get_by_role("button", name="Run what-if").click()
    assert "receipts evaluated" in page.locator("#whatif-result").inner_text()
    page.screenshot(path=str(shots / "7-policies.png"), full_page=True)
    watch.assert_inert("policies")

    # Sign out: the session is gone; pages ask for a key again.
    page.get_by_role("button", name="Sign out").click()
    page.get_by_label("API key").wait_for()
    assert "ctxgw_console" not in {c["name"] for c in page.context.cookies()}
    response = page.goto(f"{served}/console/policies")
    assert response is not None and response.status == 401
    assert sorted(p.name for p in shots.iterdir())[0] == "1-receipts.png"
