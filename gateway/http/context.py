"""Disclosure endpoints: context bundles and progressive disclosure (search, timeline)."""

from __future__ import annotations

from typing import Any

from litestar import Request, post

from gateway.core.model import ContextRequest, Exclusion
from gateway.core.outcome import Assembly
from gateway.core.render import one_line
from gateway.errors import FieldError, InvalidRequestError
from gateway.http.auth import RuntimeDep, unit_of_work
from gateway.http.validation import decode_json, decode_struct
from gateway.http.wire import ContextIn, SearchIn, TimelineIn
from gateway.usecases.context import (
    build_context,
    gather_context,
    resolve_namespaces,
    search,
    timeline,
)

__all__ = ["ROUTES"]

SNIPPET_CHARS = 120


def _require_text(value: str, field: str) -> None:
    if not value.strip():
        raise InvalidRequestError(
            f"{field}: must contain more than whitespace",
            (FieldError(field, "must contain more than whitespace"),),
        )


def exclusion_json(exclusion: Exclusion) -> dict[str, Any]:
    return {
        "memory_id": exclusion.memory_id,
        "reason": exclusion.reason,
        "detail": exclusion.detail,
    }


def context_json(assembly: Assembly) -> dict[str, Any]:
    return {
        "bundle": assembly.bundle,
        "bundle_sha256": assembly.bundle_sha256,
        "tokens_used": assembly.tokens_used,
        "budget_tokens": assembly.budget_tokens,
        "utilization": round(assembly.utilization, 4),
        "tokenizer": assembly.tokenizer,
        "ranking_profile": assembly.ranking_profile.to_record(),
        "index": {
            "entries": list(assembly.index.entries),
            "shown": assembly.index.shown,
            "total_live": assembly.index.total_live,
            "tokens": assembly.index.tokens,
        },
        "included": [
            {
                "memory_id": item.memory_id,
                "content_sha256": item.content_sha256,
                "tokens": item.tokens,
                "score": item.score,
                "signals": item.signals,
            }
            for item in assembly.included
        ],
        "excluded": [exclusion_json(e) for e in assembly.excluded],
    }


@post("/v1/context", status_code=200, summary="A token-bounded context bundle for a task")
async def context(request: Request[Any, Any, Any], runtime: RuntimeDep) -> dict[str, Any]:
    body = decode_struct(decode_json(await request.body()), ContextIn)
    _require_text(body.task, "task")
    now = runtime.clock()
    async with unit_of_work(request, runtime) as (conn, principal):
        principal.require_role("agent", "admin")
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
        inputs = await gather_context(conn, runtime.embedder, principal, context_request, now)
        assembly = build_context(
            context_request, inputs, tokenizer_name=runtime.tokenizer.name, now=now
        )
    return context_json(assembly)


@post("/v1/search", status_code=200, summary="Stage 1: pointers to the best matches")
async def search_memories(request: Request[Any, Any, Any], runtime: RuntimeDep) -> dict[str, Any]:
    body = decode_struct(decode_json(await request.body()), SearchIn)
    _require_text(body.query, "query")
    now = runtime.clock()
    async with unit_of_work(request, runtime) as (conn, principal):
        principal.require_role("agent", "admin")
        outcome = await search(
            conn,
            runtime.embedder,
            principal,
            query=body.query,
            namespaces=resolve_namespaces(principal, body.namespaces),
            memory_types=tuple(sorted(set(body.memory_types))) if body.memory_types else None,
            limit=body.limit,
            now=now,
        )
    return {
        "results": [
            {
                "memory_id": hit.candidate.memory_id,
                "heading": hit.candidate.heading,
                "snippet": one_line(hit.candidate.content)[:SNIPPET_CHARS],
                "memory_type": hit.candidate.memory_type,
                "confidence": hit.candidate.confidence,
                "distance": hit.candidate.vector_distance,
                "score": hit.score,
            }
            for hit in outcome.hits
        ],
        "excluded": [exclusion_json(e) for e in outcome.excluded],
    }


@post("/v1/timeline", status_code=200, summary="Stage 2: version history of memories by id")
async def memory_timeline(request: Request[Any, Any, Any], runtime: RuntimeDep) -> dict[str, Any]:
    body = decode_struct(decode_json(await request.body()), TimelineIn)
    async with unit_of_work(request, runtime) as (conn, principal):
        principal.require_role("agent", "admin")
        outcome = await timeline(conn, principal, body.ids)
    return {
        "entries": [
            {
                "memory_id": v.memory_id,
                "namespace": v.namespace,
                "memory_type": v.memory_type,
                "created_at": v.created_at.isoformat(),
                "supersedes": v.supersedes,
                "superseded_by": v.superseded_by,
                "deleted_at": v.deleted_at.isoformat() if v.deleted_at else None,
                "deleted_reason": v.deleted_reason,
                "expires_at": v.expires_at.isoformat() if v.expires_at else None,
            }
            for v in outcome.entries
        ],
        "missing": outcome.missing,
    }


ROUTES = [context, search_memories, memory_timeline]
