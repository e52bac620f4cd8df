"""Session endpoints (ARCHITECTURE §11): create, append turns, build a context, read the session
and page its history."""

from __future__ import annotations

from typing import Any

from litestar import Request, Response, get, post, route
from litestar.openapi import ResponseSpec
from litestar.params import FromPath

from gateway.domain.errors import FieldError, InvalidRequestError
from gateway.http.auth import RuntimeDep
from gateway.http.openapi import DOCUMENTED, SESSIONS, json_body, query_parameters
from gateway.http.validation import collect_errors, decode_struct, read_json
from gateway.http.wire import TurnsIn
from gateway.requests import (
    EraseIn,
    HistoryQuery,
    SessionContextIn,
    SessionIn,
    TurnIn,
    TurnsShape,
)
from gateway.responses.memories import Erased
from gateway.responses.sessions import Appended, HistoryPage, SessionContext, SessionInfo

__all__ = ["ROUTES"]


def _require_text(value: str | None, field: str) -> list[FieldError]:
    if value is not None and not value.strip():
        return [FieldError(field, "must contain more than whitespace")]
    return []


def _raise(errors: list[FieldError]) -> None:
    if errors:
        raise InvalidRequestError(f"{len(errors)} invalid field(s)", tuple(errors))


@post(
    "/v1/sessions",
    status_code=201,
    responses={
        200: ResponseSpec(
            SessionInfo,
            description="the same idempotency key and body again: the session created before",
        )
    },
    summary="Open a session: its namespace, pinned task, prompt and budget",
    operation_class=json_body(SessionIn, also=(409,)),
    operation_id="createSession",
    tags=[SESSIONS],
)
async def create_session(
    request: Request[Any, Any, Any], runtime: RuntimeDep
) -> Response[SessionInfo]:
    body = decode_struct(await read_json(request), SessionIn)
    _raise(_require_text(body.task, "task"))
    info = await runtime.sessions.create(request.headers.get("authorization"), body)
    return Response(info, status_code=201 if info.created else 200)


@post(
    "/v1/sessions/{session_id:str}/turns",
    status_code=200,
    summary="Append up to 100 turns to a session's history",
    operation_class=json_body(TurnsShape, "each turn: role, content, name?, occurred_at?"),
    operation_id="appendTurns",
    tags=[SESSIONS],
)
async def append_turns(
    request: Request[Any, Any, Any], runtime: RuntimeDep, session_id: FromPath[str]
) -> Appended:
    batch = decode_struct(await read_json(request), TurnsIn)
    limit = runtime.settings.max_content_bytes
    errors: list[FieldError] = []
    for index, item in enumerate(batch.turns):
        prefix = f"turns/{index}/"
        errors += collect_errors(item, TurnIn, prefix)
        content = item.get("content")
        if isinstance(content, str):
            size = len(content.encode("utf-8"))
            if size > limit:
                errors.append(
                    FieldError(f"{prefix}content", f"{size} bytes exceeds the limit of {limit}")
                )
            elif content and not content.strip():
                errors.append(FieldError(f"{prefix}content", "must contain more than whitespace"))
    _raise(errors)
    turns = [decode_struct(item, TurnIn) for item in batch.turns]
    ask = TurnsShape(turns, batch.idempotency_key)
    return await runtime.sessions.append(request.headers.get("authorization"), session_id, ask)


@post(
    "/v1/sessions/{session_id:str}/context",
    status_code=200,
    summary="What the model sees this step: prompt, task, summary, recent turns, memories",
    operation_class=json_body(SessionContextIn),
    operation_id="getSessionContext",
    tags=[SESSIONS],
)
async def session_context(
    request: Request[Any, Any, Any], runtime: RuntimeDep, session_id: FromPath[str]
) -> SessionContext:
    body = decode_struct(await read_json(request), SessionContextIn)
    _raise(_require_text(body.query, "query"))
    return await runtime.session_contexts.context(
        request.headers.get("authorization"), session_id, body
    )


@get(
    "/v1/sessions/{session_id:str}",
    summary="A session: its settings, turn count and latest summary",
    operation_class=DOCUMENTED,
    operation_id="getSession",
    tags=[SESSIONS],
)
async def get_session(
    request: Request[Any, Any, Any], runtime: RuntimeDep, session_id: FromPath[str]
) -> SessionInfo:
    return await runtime.sessions.get(request.headers.get("authorization"), session_id)


def _history_query(request: Request[Any, Any, Any]) -> HistoryQuery:
    raw: dict[str, Any] = dict(request.query_params.items())
    for name in ("after", "limit"):
        value = raw.get(name)
        if isinstance(value, str) and value.isdigit():
            raw[name] = int(value)
    return decode_struct(raw, HistoryQuery)


@get(
    "/v1/sessions/{session_id:str}/turns",
    summary="A session's history, paged; receipted (kind history)",
    operation_class=query_parameters(HistoryQuery),
    operation_id="listTurns",
    tags=[SESSIONS],
)
async def history(
    request: Request[Any, Any, Any], runtime: RuntimeDep, session_id: FromPath[str]
) -> HistoryPage:
    return await runtime.sessions.history(
        request.headers.get("authorization"), session_id, _history_query(request)
    )


@route("/v1/sessions/{session_id:str}/turns", http_method="OPTIONS", include_in_schema=False)
async def turns_options() -> Response[None]:
    """Litestar (2.25) answers a path's OPTIONS with the methods of the handler registered
    first for it; this path has two (found by tests/gateway/test_fuzz.py), so it says so
    itself."""
    return Response(None, status_code=204, headers={"Allow": "GET, OPTIONS, POST"})


@post(
    "/v1/sessions/{session_id:str}/turns/{seq:int}/erase",
    status_code=200,
    summary="Erase a turn's text and what was derived from it (admin); receipted (kind erasure)",
    operation_class=json_body(EraseIn, also=(409,)),
    operation_id="eraseTurn",
    tags=[SESSIONS],
)
async def erase_turn(
    request: Request[Any, Any, Any],
    runtime: RuntimeDep,
    session_id: FromPath[str],
    seq: FromPath[int],
) -> Erased:
    erase_in = decode_struct(await read_json(request), EraseIn)
    return await runtime.eraser.erase_turn(
        request.headers.get("authorization"), session_id, seq, erase_in.reason
    )


# turns_options first: registered before the path's other methods, it is the path's OPTIONS.
ROUTES = [
    turns_options,
    create_session,
    append_turns,
    session_context,
    get_session,
    history,
    erase_turn,
]
