"""Memory endpoints: write, batch write, soft delete, fetch (stage 3 of disclosure)."""

from __future__ import annotations

from typing import Any

from litestar import Request, Response, delete, post
from litestar.params import FromPath

from gateway.errors import (
    ConflictError,
    FieldError,
    ForbiddenError,
    InvalidRequestError,
    NotFoundError,
)
from gateway.http.auth import RuntimeDep
from gateway.http.openapi import json_body
from gateway.http.validation import collect_errors, decode_json, decode_struct
from gateway.http.wire import BatchIn, BatchShape, DeleteIn, FetchIn, MemoryIn
from gateway.memory import MemoryDraft
from gateway.usecases import listing
from gateway.usecases.memories import WriteOutcome, delete_memory
from gateway.usecases.work import unit_of_work

__all__ = ["ROUTES"]


def _draft(item: MemoryIn, max_content_bytes: int, prefix: str = "") -> MemoryDraft:
    size = len(item.content.encode("utf-8"))
    if size > max_content_bytes:
        raise InvalidRequestError(
            f"{prefix}content: {size} bytes exceeds the limit of {max_content_bytes}",
            (
                FieldError(
                    f"{prefix}content", f"{size} bytes exceeds the limit of {max_content_bytes}"
                ),
            ),
        )
    return MemoryDraft(
        namespace=item.namespace,
        memory_type=item.memory_type,
        heading=item.heading,
        content=item.content,
        confidence=item.confidence,
        labels=tuple(sorted(set(item.labels))),
        source_type=item.source_type,
        source_ref=item.source_ref,
        claim_key=item.claim_key,
        supersedes=item.supersedes,
        expires_at=item.expires_at,
        idempotency_key=item.idempotency_key,
    )


def _content_errors(data: Any, limit: int, prefix: str) -> list[FieldError]:
    content = data.get("content") if isinstance(data, dict) else None
    if isinstance(content, str) and len(content.encode("utf-8")) > limit:
        return [FieldError(f"{prefix}content", f"exceeds the limit of {limit} bytes")]
    return []


def _written(outcome: WriteOutcome) -> dict[str, Any]:
    return {
        "memory_id": outcome.memory_id,
        "created": outcome.created,
        "supersedes": outcome.supersedes,
    }


@post(
    "/v1/memories",
    status_code=201,
    summary="Write one memory (a new immutable version)",
    operation_class=json_body(MemoryIn),
)
async def write_memory(request: Request[Any, Any, Any], runtime: RuntimeDep) -> Response[Any]:
    data = decode_json(await request.body())
    errors = collect_errors(data, MemoryIn, "") + _content_errors(
        data, runtime.settings.max_content_bytes, ""
    )
    if errors:
        raise InvalidRequestError(f"{len(errors)} invalid field(s)", tuple(errors))
    draft = _draft(decode_struct(data, MemoryIn), runtime.settings.max_content_bytes)
    async with unit_of_work(runtime.pool, request.headers.get("authorization")) as (
        conn,
        principal,
    ):
        [result] = await runtime.writer.write(conn, principal, [draft])
    if isinstance(result, Exception):
        raise result
    return Response(_written(result), status_code=201 if result.created else 200)


@post(
    "/v1/memories/batch",
    status_code=200,
    summary="Write up to 100 memories",
    operation_class=json_body(BatchShape, "each item is a memory as for POST /v1/memories"),
)
async def write_batch(request: Request[Any, Any, Any], runtime: RuntimeDep) -> dict[str, Any]:
    data = decode_json(await request.body())
    batch = decode_struct(data, BatchIn)
    limit = runtime.settings.max_content_bytes
    errors: list[FieldError] = []
    for index, item in enumerate(batch.items):
        prefix = f"items/{index}/"
        errors += collect_errors(item, MemoryIn, prefix) + _content_errors(item, limit, prefix)
    if errors:
        # All or nothing for malformed items: a client never has to untangle a half-applied batch
        # it could not have meant. Per-item results below are for state conflicts only.
        raise InvalidRequestError(f"{len(errors)} invalid field(s) in the batch", tuple(errors))
    drafts = [_draft(decode_struct(item, MemoryIn), limit) for item in batch.items]
    async with unit_of_work(runtime.pool, request.headers.get("authorization")) as (
        conn,
        principal,
    ):
        results = await runtime.writer.write(conn, principal, drafts)
    items: list[dict[str, Any]] = []
    for index, result in enumerate(results):
        if isinstance(result, ConflictError | NotFoundError | ForbiddenError):
            status = {ConflictError: 409, NotFoundError: 404, ForbiddenError: 403}[type(result)]
            items.append(
                {"index": index, "status": status, "code": result.code, "detail": result.detail}
            )
        else:
            items.append(
                {"index": index, "status": 201 if result.created else 200, **_written(result)}
            )
    written = sum(1 for item in items if item["status"] in (200, 201))
    return {"items": items, "written": written, "failed": len(items) - written}


@delete(
    "/v1/memories/{memory_id:str}",
    status_code=200,
    summary="Soft-delete a memory",
    operation_class=json_body(DeleteIn),
)
async def remove_memory(
    request: Request[Any, Any, Any], runtime: RuntimeDep, memory_id: FromPath[str]
) -> dict[str, Any]:
    body = await request.body()
    delete_in = decode_struct(decode_json(body), DeleteIn)
    async with unit_of_work(runtime.pool, request.headers.get("authorization")) as (
        conn,
        principal,
    ):
        at = await delete_memory(conn, principal, memory_id, delete_in.reason, runtime.clock())
    return {"memory_id": memory_id, "deleted_at": at.isoformat(), "reason": delete_in.reason}


@post(
    "/v1/fetch",
    status_code=200,
    summary="Stage 3: full memories by id (at most 50)",
    operation_class=json_body(FetchIn),
)
async def fetch(request: Request[Any, Any, Any], runtime: RuntimeDep) -> dict[str, Any]:
    fetch_in = decode_struct(decode_json(await request.body()), FetchIn)
    now = runtime.clock()
    async with unit_of_work(runtime.pool, request.headers.get("authorization")) as (
        conn,
        principal,
    ):
        principal.require_role("agent", "admin")
        disclosed = await listing.fetch(
            runtime.discloser, conn, principal, fetch_in.ids, fetch_in.purpose, now
        )
    return disclosed.payload


ROUTES = [write_memory, write_batch, remove_memory, fetch]
