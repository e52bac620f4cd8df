"""/schema renders on a machine without internet: the page names only the gateway's own paths,
its assets are the files the installed Swagger UI package ships, and in a real browser (Debian's
Chromium) every request the page makes stays on the gateway while the operations render."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from litestar.testing import TestClient
from swagger_ui_bundle import swagger_ui_path

from tests.gateway.console.test_console_browser import ARGS, CHROMIUM

REFERENCES = re.compile(r"""(?:src|href)="([^"]*)\"""")


def test_the_docs_page_names_no_other_host(client: TestClient[Any]) -> None:
    for path in ("/schema", "/schema/swagger"):
        page = client.get(path)
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        assert "://" not in page.text  # no absolute URL at all: no CDN, no font host
        assert "validatorUrl: null" in page.text  # no badge from the online validator
    assets = REFERENCES.findall(client.get("/schema").text)
    assert sorted(assets) == [
        "/schema/assets/favicon-32x32.png",
        "/schema/assets/swagger-ui-bundle.js",
        "/schema/assets/swagger-ui-standalone-preset.js",
        "/schema/assets/swagger-ui.css",
    ]
    types = {".js": "text/javascript", ".css": "text/css", ".png": "image/png"}
    for asset in assets:
        served = client.get(asset)
        assert served.status_code == 200, asset
        assert served.headers["content-type"].startswith(types[Path(asset).suffix])
        # The installed package's own file, byte for byte (no copy kept in this repository).
        assert served.content == (Path(str(swagger_ui_path)) / Path(asset).name).read_bytes()


def test_only_the_assets_the_page_needs_are_served(client: TestClient[Any]) -> None:
    # The package's index.html would load a demo document from a public host.
    for name in ("index.html", "swagger-initializer.js", "..%2Fpyproject.toml", "nothing.js"):
        assert client.get(f"/schema/assets/{name}").status_code == 404, name
    assert client.get("/schema/openapi.json").json()["info"]["title"] == "ctxgw"


@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium (make test installs it)")
def test_the_docs_render_offline_in_a_browser(served: str) -> None:
    from playwright.sync_api import Route, sync_playwright

    gateway = urlsplit(served).netloc
    elsewhere: list[str] = []
    errors: list[str] = []

    def offline(route: Route) -> None:
        # As on a machine without internet: anything not bound for the gateway fails.
        if urlsplit(route.request.url).netloc == gateway:
            route.continue_()
        else:
            elsewhere.append(route.request.url)
            route.abort()

    with (
        tempfile.TemporaryDirectory(prefix="ctxgw-chromium-") as profile,
        sync_playwright() as playwright,
    ):
        context = playwright.chromium.launch_persistent_context(
            profile, executable_path=str(CHROMIUM), headless=True, args=ARGS
        )
        try:
            context.route("**/*", offline)
            page = context.new_page()
            page.set_default_timeout(20_000)
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(f"{served}/schema")
            page.wait_for_selector("#operations-tag-memories")
            tags = page.locator(".opblock-tag").all_inner_texts()
            assert [t.split("\n")[0] for t in tags][:2] == ["memories", "disclosure"]
            assert page.locator(".opblock-summary-operation-id", has_text="getContext").count()
            # The key goes where the document says: the Authorize dialog offers bearerAuth.
            page.click("button.authorize")
            assert page.locator(".auth-container", has_text="bearerAuth").count() == 1
        finally:
            context.close()
    assert elsewhere == [] and errors == []
    # And the document the page rendered is the one the gateway serves.
    assert httpx.get(f"{served}/schema/openapi.json").json()["paths"]["/v1/context"]
