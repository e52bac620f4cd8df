"""HTML out: the Jinja2 templates (autoescaped: memory, heading, task and agent text is untrusted
and is only ever text in the page), the headers every console response carries, and errors as
pages (the problem the API would send, rendered)."""

from __future__ import annotations

import functools
from datetime import UTC, datetime
from decimal import Decimal
from importlib.resources import files
from typing import Any
from urllib.parse import quote, urlsplit

import jinja2
import msgspec
from litestar import Request, Response
from litestar.exceptions import HTTPException

from gateway.domain.errors import GatewayError
from gateway.http.problems import EXCEPTION_HANDLERS
from gateway.responses.problems import Problem
from gateway.usecases.receiptlog.kinds import KINDS

__all__ = ["HEADERS", "console_error", "console_page", "page", "page_asked", "stylesheet"]

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


def _instant(value: datetime | str) -> datetime:
    moment = datetime.fromisoformat(value) if isinstance(value, str) else value
    return moment.astimezone(UTC)


def _when(value: datetime | str | None) -> str:
    """Every instant the console shows, one way: UTC to the second (`2026-12-04 09:30:05 UTC`);
    the full precision stays in the `<time datetime>` beside it (`_iso`)."""
    return "–" if value is None else f"{_instant(value):%Y-%m-%d %H:%M:%S} UTC"


def _iso(value: datetime | str) -> str:
    """RFC 3339 in UTC, as receipts spell instants (for `<time datetime>` and links)."""
    return _instant(value).isoformat().replace("+00:00", "Z")


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
    env.filters["when"] = _when
    env.filters["iso"] = _iso
    # What each kind of receipt records, in words, from the registry of kinds.
    env.globals["kind_labels"] = {kind.name: kind.label for kind in KINDS}
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
    # Without a session (401), or when the key given at sign-in is refused: the form again,
    # which then leads back to the page asked for.
    signing_in = request.url.path.endswith("/sign-in")
    form = problem.status == 401 or signing_in
    asked = request.query_params.get("next") if signing_in else page_asked(request)
    return page(
        "sign_in.html" if form else "error.html",
        problem.status,
        problem=problem,
        signed_in=not form,
        next_page=console_page(asked),
    )


def page_asked(request: Request[Any, Any, Any]) -> str | None:
    """The console page a browser asked for (path and query), to return to after signing in."""
    if request.method != "GET":
        return None  # a form posted without a session is not repeated
    query = request.url.query
    return f"{request.url.path}?{query}" if query else request.url.path


def console_page(target: str | None) -> str | None:
    """`target` when it is a page of this console (a path under /console, no scheme, no host),
    else None: a sign-in never sends a browser anywhere else (no open redirect)."""
    if not target:
        return None
    parts = urlsplit(target)
    local = not parts.scheme and not parts.netloc and "\\" not in target
    inside = parts.path == "/console" or parts.path.startswith("/console/")
    return target if local and inside and not target.startswith("//") else None
