"""The console's pages (ARCHITECTURE §13): sign-in and sign-out, the receipts list, one receipt
with its replay panel, an agent at an instant, a memory's life, the policies. Each handler finds
the caller's credentials (a bearer header, or the session cookie), parses the form, calls use
cases and renders; nothing here reads the database but through them."""

from __future__ import annotations

import functools
from typing import Any
from urllib.parse import quote

from litestar import Request, Response, Router, get, post
from litestar.datastructures import Cookie
from litestar.params import FromPath
from litestar.response import Redirect

from gateway.domain.errors import ForbiddenError, UnauthenticatedError
from gateway.domain.receipt_filter import ReceiptFilter
from gateway.http.auth import RuntimeDep
from gateway.http.console.forms import (
    CSRF_FIELD,
    AgentPick,
    AgentQuery,
    AsOfForm,
    ListQuery,
    ReplayForm,
    WhatIfForm,
    decode_form,
)
from gateway.http.console.render import (
    HEADERS,
    console_error,
    console_page,
    page,
    page_asked,
    stylesheet,
)
from gateway.http.console.session import COOKIE, SESSION_SECONDS, Credentials, SessionSealer
from gateway.http.problems import EXCEPTION_HANDLERS
from gateway.requests import ContextIn, ReplayIn, WhatIfIn
from gateway.responses.disclosures import ContextBundle, ContextReplay, RefusalReplay
from gateway.responses.policies import WhatIfReport
from gateway.responses.sessions import SessionContextReplay
from gateway.shell.runtime import Runtime
from gateway.usecases.audit import console
from gateway.usecases.audit.what_if import what_if_report
from gateway.usecases.receiptlog.kinds import KINDS
from receipts import Signer

__all__ = ["CONSOLE"]

Req = Request[Any, Any, Any]
Replayed = ContextReplay | RefusalReplay | SessionContextReplay
_MAX_KEY = 200  # a key is ~110 characters; anything longer is not one


@functools.cache
def _sealer(signer: Signer) -> SessionSealer:
    return SessionSealer(signer)


def _signer(runtime: Runtime) -> Signer:
    return runtime.discloser.recorder.signer


def _session(request: Req, runtime: Runtime) -> Credentials | None:
    return _sealer(_signer(runtime)).credentials(
        request.headers.get("authorization"), request.cookies.get(COOKIE)
    )


def _credentials(request: Req, runtime: Runtime) -> Credentials:
    found = _session(request, runtime)
    if found is None:
        raise UnauthenticatedError(
            f"sign in with an auditor or admin key (sessions last {SESSION_SECONDS // 60} minutes)",
            code="missing_credentials",
        )
    return found


async def _form(request: Req, runtime: Runtime, credentials: Credentials) -> list[tuple[str, str]]:
    """The posted fields, once the CSRF token is checked (a cookie session's forms only)."""
    form = await request.form()
    items = [(k, v) for k, v in form.multi_items() if isinstance(v, str)]
    token = next((v for k, v in items if k == CSRF_FIELD), None)
    if not _sealer(_signer(runtime)).csrf_ok(credentials, token):
        raise ForbiddenError("the form's CSRF token is missing or stale", code="csrf_failed")
    return items


@get("/static/console.css", include_in_schema=False)
async def css() -> Response[str]:
    return Response(
        stylesheet(), media_type="text/css", headers={**HEADERS, "Cache-Control": "max-age=3600"}
    )


@get("/", include_in_schema=False)
async def receipts_list(request: Req, runtime: RuntimeDep) -> Response[str]:
    """The sign-in form, or once signed in the receipts, newest first, filtered."""
    found = _session(request, runtime)
    if found is None:
        back = console_page(page_asked(request))
        return page("sign_in.html", problem=None, signed_in=False, next_page=back)
    query = decode_form(request.query_params.items(), ListQuery)
    where = ReceiptFilter(
        agent_id=query.agent_id,
        kind=query.kind,
        since=query.since,
        until=query.until,
        memory_id=query.memory_id,
        policy_digest=query.policy_digest,
        limit=console.PAGE,
        newest_first=True,
        before_seq=int(query.cursor) if query.cursor else None,
    )
    listing = await console.receipt_list(runtime.pool, found.authorization, where)
    filters = {k: v for k, v in request.query_params.items() if k != "cursor" and v}
    return page(
        "receipts.html",
        listing=listing,
        query=query,
        filters=filters,
        kinds=KINDS,
        csrf=found.csrf,
        signed_in=True,
    )


@post("/sign-in", include_in_schema=False, status_code=303)
async def sign_in(request: Req, runtime: RuntimeDep) -> Response[Any]:
    _refuse_cross_site(request)
    form = await request.form()
    key = form.get("key")
    key = key.strip() if isinstance(key, str) else ""
    if not key or len(key) > _MAX_KEY:
        raise UnauthenticatedError(
            "key: paste an auditor or admin API key", code="missing_credentials"
        )
    await console.console_principal(runtime.pool, f"Bearer {key}")
    sealed = _sealer(_signer(runtime)).seal(key)
    cookie = Cookie(
        key=COOKIE,
        value=sealed,
        path="/console",
        max_age=SESSION_SECONDS,
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )
    # Back to the page that asked for a session (checked to be the console's own), or the list.
    back = console_page(request.query_params.get("next")) or "/console"
    return Redirect(back, status_code=303, cookies=[cookie], headers=HEADERS)


def _refuse_cross_site(request: Req) -> None:
    """Sign-in has no session yet, so no CSRF token: a form posted from another site (which
    would sign the browser in with the other site's key: login CSRF) is refused by the
    headers browsers set and pages cannot, as OWASP's CSRF cheat sheet advises: Fetch
    Metadata's `Sec-Fetch-Site` where the browser sends it, else `Origin` (which the console's
    `no-referrer` policy makes `null` on a POST, so only a named origin can be checked). A
    client that sends neither (a script) is not a browser a page can drive."""
    site = request.headers.get("sec-fetch-site")
    origin = request.headers.get("origin")
    if site is not None:
        refused = site not in ("same-origin", "none")
    else:
        refused = origin is not None and origin != f"{request.url.scheme}://{request.url.netloc}"
    if refused:
        raise ForbiddenError("sign-in from another site is refused", code="csrf_failed")


@post("/sign-out", include_in_schema=False, status_code=303)
async def sign_out(request: Req, runtime: RuntimeDep) -> Response[Any]:
    await _form(request, runtime, _credentials(request, runtime))
    response: Response[Any] = Redirect("/console", status_code=303, headers=HEADERS)
    response.delete_cookie(COOKIE, path="/console")
    return response


async def _receipt_page(
    runtime: Runtime,
    credentials: Credentials,
    receipt_id: str,
    replay: Replayed | None = None,
    form: ReplayForm | None = None,
) -> Response[str]:
    screen = await console.receipt_screen(
        runtime.pool, _signer(runtime), credentials.authorization, receipt_id
    )
    # A bundle's or a session context's replay carries the rebuilt text; a refusal's has none.
    bundle = (
        replay.replayed.bundle
        if isinstance(replay, ContextReplay)
        else replay.text
        if isinstance(replay, SessionContextReplay)
        else None
    )
    return page(
        "receipt.html",
        screen=screen,
        replay=replay,
        replay_form=form,
        replayed_bundle=bundle,
        replayed_sha256=console.sha256_hex(bundle) if isinstance(bundle, str) else None,
        csrf=credentials.csrf,
        signed_in=True,
    )


@get("/receipts/{receipt_id:str}", include_in_schema=False)
async def receipt(request: Req, runtime: RuntimeDep, receipt_id: FromPath[str]) -> Response[str]:
    return await _receipt_page(runtime, _credentials(request, runtime), receipt_id)


@post("/receipts/{receipt_id:str}/replay", include_in_schema=False, status_code=200)
async def replay(request: Req, runtime: RuntimeDep, receipt_id: FromPath[str]) -> Response[str]:
    """Replay (exact, current, what-if) and show the diff beside the receipt. The replay writes
    its own receipt, as through the API."""
    credentials = _credentials(request, runtime)
    form = decode_form(await _form(request, runtime, credentials), ReplayForm)
    ask = ReplayIn(
        form.mode,
        form.policy_digest if form.mode == "what_if" else None,
        form.policy_yaml if form.mode == "what_if" else None,
    )
    result = await runtime.disclosures.replay(credentials.authorization, receipt_id, ask)
    return await _receipt_page(runtime, credentials, receipt_id, result, form)


async def _agent_page(
    request: Req,
    runtime: Runtime,
    agent_id: str,
    bundle: ContextBundle | None = None,
    form: AsOfForm | None = None,
) -> Response[str]:
    credentials = _credentials(request, runtime)
    at = form.at if form is not None else decode_form(request.query_params.items(), AgentQuery).at
    instant = await console.agent_at(
        runtime.pool, credentials.authorization, agent_id, at or runtime.clock()
    )
    return page(
        "agent.html",
        instant=instant,
        bundle=bundle,
        form=form,
        csrf=credentials.csrf,
        signed_in=True,
    )


@get("/agents", include_in_schema=False, status_code=303)
async def pick_agent(request: Req, runtime: RuntimeDep) -> Response[Any]:
    """A form cannot put a field into a path: this sends it on to the agent's page."""
    _credentials(request, runtime)
    picked = decode_form(request.query_params.items(), AgentPick)
    at = f"?at={quote(picked.at.isoformat(), safe='')}" if picked.at else ""
    target = f"/console/agents/{quote(picked.agent_id, safe='')}{at}"
    return Redirect(target, status_code=303, headers=HEADERS)


@get("/agents/{agent_id:str}", include_in_schema=False)
async def agent(request: Req, runtime: RuntimeDep, agent_id: FromPath[str]) -> Response[str]:
    return await _agent_page(request, runtime, agent_id)


@post("/agents/{agent_id:str}/bundle", include_in_schema=False, status_code=200)
async def agent_bundle(request: Req, runtime: RuntimeDep, agent_id: FromPath[str]) -> Response[str]:
    """The bundle the task would have got at the instant (`as_of`), receipted as the API's."""
    credentials = _credentials(request, runtime)
    form = decode_form(await _form(request, runtime, credentials), AsOfForm)
    ask = ContextIn(
        task=form.task,
        namespaces=form.namespaces,
        budget_tokens=form.budget_tokens,
        top_k=form.top_k,
        as_of=form.at,
    )
    bundle = await runtime.disclosures.context(credentials.authorization, ask)
    return await _agent_page(request, runtime, agent_id, bundle, form)


@get("/memories/{memory_id:str}", include_in_schema=False)
async def memory(request: Req, runtime: RuntimeDep, memory_id: FromPath[str]) -> Response[str]:
    credentials = _credentials(request, runtime)
    life = await console.memory_life(runtime.pool, credentials.authorization, memory_id)
    return page("memory.html", life=life, csrf=credentials.csrf, signed_in=True)


async def _policies_page(
    runtime: Runtime,
    credentials: Credentials,
    report: WhatIfReport | None = None,
    form: WhatIfForm | None = None,
) -> Response[str]:
    view = await console.policies_view(
        runtime.pool, runtime.discloser.policies, credentials.authorization, runtime.clock()
    )
    return page(
        "policies.html", view=view, report=report, form=form, csrf=credentials.csrf, signed_in=True
    )


@get("/policies", include_in_schema=False)
async def policies(request: Req, runtime: RuntimeDep) -> Response[str]:
    return await _policies_page(runtime, _credentials(request, runtime))


@post("/policies/what-if", include_in_schema=False, status_code=200)
async def policies_what_if(request: Req, runtime: RuntimeDep) -> Response[str]:
    credentials = _credentials(request, runtime)
    form = decode_form(await _form(request, runtime, credentials), WhatIfForm)
    ask = WhatIfIn(policy_digest=form.policy_digest, policy_yaml=form.policy_yaml, last=form.last)
    report = await what_if_report(runtime.pool, runtime.replayer, credentials.authorization, ask)
    return await _policies_page(runtime, credentials, report, form)


CONSOLE = Router(
    path="/console",
    route_handlers=[
        css,
        receipts_list,
        sign_in,
        sign_out,
        receipt,
        replay,
        pick_agent,
        agent,
        agent_bundle,
        memory,
        policies,
        policies_what_if,
    ],
    # The same keys as the app's mapping, so that this layer's handler is the one chosen.
    exception_handlers=dict.fromkeys(EXCEPTION_HANDLERS, console_error),
    include_in_schema=False,
)
