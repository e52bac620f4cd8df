"""Disclosure endpoints: context bundles and progressive disclosure (search, timeline)."""

from __future__ import annotations

from typing import Any

from litestar import Request, post

from gateway.domain.errors import FieldError, InvalidRequestError
from gateway.http.auth import RuntimeDep
from gateway.http.openapi import json_body
from gateway.http.validation import decode_struct, read_json
from gateway.http.wire import ContextIn, SearchIn, TimelineIn
from gateway.responses.disclosures import ContextBundle, SearchResults, Timeline
from gateway.usecases.disclosure.requests import ContextAsk, IdsAsk, SearchAsk

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
)
async def context(request: Request[Any, Any, Any], runtime: RuntimeDep) -> ContextBundle:
    body = decode_struct(await read_json(request), ContextIn)
    _require_text(body.task, "task")
    ask = ContextAsk(
        task=body.task,
        namespaces=body.namespaces,
        budget_tokens=body.budget_tokens,
        top_k=body.top_k,
        memory_types=body.memory_types,
        purpose=body.purpose,
        include_index=body.include_index,
        index_budget_tokens=body.index_budget_tokens,
        fill=body.fill,
        as_of=body.as_of,
    )
    return await runtime.disclosures.context(request.headers.get("authorization"), ask)


@post(
    "/v1/search",
    status_code=200,
    summary="Stage 1: pointers to the best matches",
    operation_class=json_body(SearchIn),
)
async def search_memories(request: Request[Any, Any, Any], runtime: RuntimeDep) -> SearchResults:
    body = decode_struct(await read_json(request), SearchIn)
    _require_text(body.query, "query")
    ask = SearchAsk(body.query, body.namespaces, body.memory_types, body.limit, body.purpose)
    return await runtime.disclosures.search(request.headers.get("authorization"), ask)


@post(
    "/v1/timeline",
    status_code=200,
    summary="Stage 2: version history of memories by id",
    operation_class=json_body(TimelineIn),
)
async def memory_timeline(request: Request[Any, Any, Any], runtime: RuntimeDep) -> Timeline:
    body = decode_struct(await read_json(request), TimelineIn)
    ask = IdsAsk(body.ids, body.purpose)
    return await runtime.disclosures.timeline(request.headers.get("authorization"), ask)


ROUTES = [context, search_memories, memory_timeline]
