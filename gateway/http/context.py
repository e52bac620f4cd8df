"""Disclosure endpoints: context bundles and progressive disclosure (search, timeline)."""

from __future__ import annotations

from typing import Any

from litestar import Request, post

from gateway.core.model import ContextRequest
from gateway.errors import FieldError, InvalidRequestError
from gateway.http.auth import RuntimeDep
from gateway.http.openapi import json_body
from gateway.http.validation import decode_json, decode_struct
from gateway.http.wire import ContextIn, SearchIn, TimelineIn
from gateway.usecases import listing
from gateway.usecases.context import check_as_of, resolve_namespaces
from gateway.usecases.work import unit_of_work

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
async def context(request: Request[Any, Any, Any], runtime: RuntimeDep) -> dict[str, Any]:
    body = decode_struct(decode_json(await request.body()), ContextIn)
    _require_text(body.task, "task")
    now = runtime.clock()
    async with unit_of_work(runtime.pool, request.headers.get("authorization")) as (
        conn,
        principal,
    ):
        if body.as_of is None:
            principal.require_role("agent", "admin")
        else:
            principal.require_role("auditor", "admin")
            await check_as_of(conn, principal.tenant_id, body.as_of, now)
        context_request = ContextRequest(
            task=body.task,
            namespaces=resolve_namespaces(principal, body.namespaces),
            budget_tokens=body.budget_tokens or runtime.settings.default_budget(principal.role),
            top_k=body.top_k,
            memory_types=tuple(sorted(set(body.memory_types))) if body.memory_types else None,
            purpose=body.purpose,
            include_index=body.include_index,
            index_budget_tokens=body.index_budget_tokens,
            fill=body.fill,
        )
        disclosed = await runtime.discloser.context(
            conn, principal, context_request, now, as_of=body.as_of
        )
    return disclosed.payload


@post(
    "/v1/search",
    status_code=200,
    summary="Stage 1: pointers to the best matches",
    operation_class=json_body(SearchIn),
)
async def search_memories(request: Request[Any, Any, Any], runtime: RuntimeDep) -> dict[str, Any]:
    body = decode_struct(decode_json(await request.body()), SearchIn)
    _require_text(body.query, "query")
    now = runtime.clock()
    async with unit_of_work(runtime.pool, request.headers.get("authorization")) as (
        conn,
        principal,
    ):
        principal.require_role("agent", "admin")
        disclosed = await listing.search(
            runtime.discloser,
            conn,
            principal,
            query=body.query,
            namespaces=resolve_namespaces(principal, body.namespaces),
            memory_types=tuple(sorted(set(body.memory_types))) if body.memory_types else None,
            limit=body.limit,
            purpose=body.purpose,
            now=now,
        )
    return disclosed.payload


@post(
    "/v1/timeline",
    status_code=200,
    summary="Stage 2: version history of memories by id",
    operation_class=json_body(TimelineIn),
)
async def memory_timeline(request: Request[Any, Any, Any], runtime: RuntimeDep) -> dict[str, Any]:
    body = decode_struct(decode_json(await request.body()), TimelineIn)
    now = runtime.clock()
    async with unit_of_work(runtime.pool, request.headers.get("authorization")) as (
        conn,
        principal,
    ):
        principal.require_role("agent", "admin")
        disclosed = await listing.timeline(
            runtime.discloser, conn, principal, body.ids, body.purpose, now
        )
    return disclosed.payload


ROUTES = [context, search_memories, memory_timeline]
