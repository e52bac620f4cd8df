"""The API's documentation page at `/schema`: Swagger UI, served from the files the
`swagger-ui-bundle-v2` package installs, so that it renders on a machine without internet.

Litestar's render plugins point the browser at a CDN by default (the script, the stylesheet, fonts,
a favicon). Here the page names only paths of this gateway: the document (`/schema/openapi.json`)
and the few Swagger UI files it needs (`/schema/assets/...`), read from the installed package
(`swagger_ui_bundle.swagger_ui_path`), never from a copy kept in this repository. Swagger UI's
online validator badge, which would call out to a public service, is switched off.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from litestar import Request, get
from litestar.enums import MediaType
from litestar.exceptions import NotFoundException
from litestar.openapi.plugins import OpenAPIRenderPlugin
from litestar.params import FromPath
from litestar.response import File
from swagger_ui_bundle import swagger_ui_path

__all__ = ["ASSETS", "SwaggerPage", "swagger_asset"]

SCHEMA_PATH = "/schema"
ASSETS = f"{SCHEMA_PATH}/assets"
# The files the page loads, by name, with their media types; nothing else of the package is served
# (its index.html would load a demo document from a public host).
_SERVED = {
    "swagger-ui.css": "text/css; charset=utf-8",
    "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
    "swagger-ui-standalone-preset.js": "text/javascript; charset=utf-8",
    "favicon-32x32.png": "image/png",
    "favicon-16x16.png": "image/png",
}


def _page(title: str) -> bytes:
    # `url` (not an inline `spec`): the document is fetched as JSON, so nothing of it is ever
    # parsed as HTML. `validatorUrl: null`: no badge fetched from the online validator.
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<link rel="icon" type="image/png" href="{ASSETS}/favicon-32x32.png">
<link rel="stylesheet" href="{ASSETS}/swagger-ui.css">
<script src="{ASSETS}/swagger-ui-bundle.js"></script>
<script src="{ASSETS}/swagger-ui-standalone-preset.js"></script>
<style>body {{ margin: 0; padding: 0 }}</style>
</head>
<body>
<div id="swagger-ui"></div>
<script>
window.ui = SwaggerUIBundle({{
  url: "{SCHEMA_PATH}/openapi.json",
  dom_id: "#swagger-ui",
  deepLinking: true,
  displayOperationId: true,
  validatorUrl: null,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
  layout: "BaseLayout"
}});
</script>
</body>
</html>
""".encode()


class SwaggerPage(OpenAPIRenderPlugin):
    """Swagger UI at `/schema` (and `/schema/swagger`), from local assets only."""

    def __init__(self) -> None:
        super().__init__(path=["/", "/swagger"], media_type=MediaType.HTML, favicon="", style="")

    def render(self, request: Request[Any, Any, Any], openapi_schema: dict[str, Any]) -> bytes:
        return _page(str(openapi_schema["info"]["title"]))


@get(f"{ASSETS}/{{name:str}}", include_in_schema=False, cache=False)
async def swagger_asset(name: FromPath[str]) -> File:
    """One of the Swagger UI files the page loads; the files change only with the package."""
    media_type = _SERVED.get(name)
    if media_type is None:
        raise NotFoundException(f"no asset {name}")
    return File(
        Path(str(swagger_ui_path)) / name,
        media_type=media_type,
        content_disposition_type="inline",
        headers={"Cache-Control": "public, max-age=86400"},
    )
