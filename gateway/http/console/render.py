"""HTML out: the Jinja2 templates (autoescaped: memory, heading, task and agent text is untrusted
and is only ever text in the page), the headers every console response carries, and errors as
pages (the problem the API would send, rendered)."""

from __future__ import annotations

import functools
from decimal import Decimal
from importlib.resources import files
from typing import Any
from urllib.parse import quote

import jinja2
import msgspec
from litestar import Request, Response
from litestar.exceptions import HTTPException

from gateway.domain.errors import GatewayError
from gateway.http.problems import EXCEPTION_HANDLERS
from gateway.responses.problems import Problem

__all__ = ["HEADERS", "console_error", "page", "stylesheet"]

HTML = "text/html"  # Litestar adds the charset (utf-8)
# No script at all, from anywhere; styles and images only from the gateway itself; forms post
# only back to it; no framing (CSP frame-ancestors, and X-Frame-Options for older browsers).
CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'"
)
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",  # pages show memory text: no shared or back-button copies
}


def _micros(value: int | None) -> str:
    """Fixed-point millionths, as receipts record scores, printed as the decimal they are."""
    return "" if value is None else str(Decimal(value).scaleb(-6))


def _given(value: object, otherwise: object) -> object:
    """A member a response leaves unset (msgspec.UNSET) reads as `otherwise`."""
    return otherwise if value is msgspec.UNSET else value


def _segment(value: object) -> str:
    """A path segment: everything but unreserved characters percent-encoded, '/' included."""
    return quote(str(value), safe="")


@functools.cache
def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("gateway.http.console", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["micros"] = _micros
    env.filters["segment"] = _segment
    env.filters["given"] = _given
    return env


def page(template: str, status: int = 200, **values: Any) -> Response[str]:
    html = _environment().get_template(template).render(**values)
    return Response(html, status_code=status, media_type=HTML, headers=HEADERS)


@functools.cache
def stylesheet() -> str:
    return (files("gateway.http.console") / "static" / "console.css").read_text("utf-8")


def _wants_html(request: Request[Any, Any, Any]) -> bool:
    """A page unless the client asks for JSON (a script reading a console path)."""
    return "json" not in request.headers.get("accept", "")


def console_error(request: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
    """The API's one mapping of errors to problems, shown as a page to a browser (a 401 as the
    sign-in form) and sent as problem+json to a client that asks for JSON."""
    handler = EXCEPTION_HANDLERS[
        GatewayError
        if isinstance(exc, GatewayError)
        else HTTPException
        if isinstance(exc, HTTPException)
        else Exception
    ]
    response: Response[Any] = handler(request, exc)
    if not _wants_html(request):
        response.headers.update(HEADERS)
        return response
    problem = response.content
    assert isinstance(problem, Problem)
    # Without a session (401), or when the key given at sign-in is refused: the form again.
    form = problem.status == 401 or request.url.path.endswith("/sign-in")
    return page(
        "sign_in.html" if form else "error.html",
        problem.status,
        problem=problem,
        signed_in=not form,
    )
