"""Disclosure endpoints: context bundles and progressive disclosure (search, timeline)."""

from __future__ import annotations

from typing import Any

from litestar import Request, post

from gateway.domain.errors import FieldError, InvalidRequestError
from gateway.http.auth import RuntimeDep
from gateway.http.openapi import DISCLOSURE, json_body
from gateway.http.validation import decode_struct, read_json
from gateway.requests import ContextIn, SearchIn, TimelineIn
from gateway.responses.disclosures import ContextBundle, SearchResults, Timeline

__all__ = ["ROUTES"]


def _require_text(value: str, field: str) -> None:
    if not value.strip():
        raise InvalidRequestError(
            f"{field}: must contain more than whitespace",
            (FieldError(field, "must contain more than whitespace"),),
        )


@post(
    "/v1/context",
    status_code=200,
    summary="A token-bounded context bundle for a task",
    operation_class=json_body(ContextIn),
    operation_id="getContext",
    tags=[DISCLOSURE],
)
async def context(request: Request[Any, Any, Any], runtime: RuntimeDep) -> ContextBundle:
    body = decode_struct(await read_json(request), ContextIn)
    _require_text(body.task, "task")
    return await runtime.disclosures.context(request.headers.get("authorization"), body)


@post(
    "/v1/search",
    status_code=200,
    summary="Stage 1: pointers to the best matches",
    operation_class=json_body(SearchIn),
    operation_id="searchMemories",
    tags=[DISCLOSURE],
)
async def search_memories(request: Request[Any, Any, Any], runtime: RuntimeDep) -> SearchResults:
    body = decode_struct(await read_json(request), SearchIn)
    _require_text(body.query, "query")
    return await runtime.disclosures.search(request.headers.get("authorization"), body)


@post(
    "/v1/timeline",
    status_code=200,
    summary="Stage 2: version history of memories by id",
    operation_class=json_body(TimelineIn),
    operation_id="getTimeline",
    tags=[DISCLOSURE],
)
async def memory_timeline(request: Request[Any, Any, Any], runtime: RuntimeDep) -> Timeline:
    body = decode_struct(await read_json(request), TimelineIn)
    return await runtime.disclosures.timeline(request.headers.get("authorization"), body)


ROUTES = [context, search_memories, memory_timeline]
