"""Memory endpoints: write, batch write, soft delete, fetch (stage 3 of disclosure) by id or by
claim key."""

from __future__ import annotations

from typing import Any

from litestar import Request, Response, delete, post
from litestar.openapi import ResponseSpec
from litestar.params import FromPath

from gateway.domain.errors import FieldError, InvalidRequestError
from gateway.domain.memory import MemoryDraft
from gateway.http.auth import RuntimeDep
from gateway.http.openapi import DISCLOSURE, MEMORIES, json_body
from gateway.http.validation import collect_errors, decode_struct, read_json
from gateway.http.wire import BatchIn, BatchShape
from gateway.requests import DeleteIn, EraseIn, FetchClaimsIn, FetchIn, MemoryIn
from gateway.responses.disclosures import FetchedMemories
from gateway.responses.memories import BatchWrite, Deleted, Erased, Written
from gateway.usecases.memories import writer as memories

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


@post(
    "/v1/memories",
    status_code=201,
    responses={
        200: ResponseSpec(
            Written,
            description="the same idempotency key and body again: the memory written before",
        )
    },
    summary="Write one memory (a new immutable version)",
    operation_class=json_body(MemoryIn, also=(404, 409)),
    operation_id="writeMemory",
    tags=[MEMORIES],
)
async def write_memory(request: Request[Any, Any, Any], runtime: RuntimeDep) -> Response[Written]:
    data = await read_json(request)
    errors = collect_errors(data, MemoryIn, "") + _content_errors(
        data, runtime.settings.max_content_bytes, ""
    )
    if errors:
        raise InvalidRequestError(f"{len(errors)} invalid field(s)", tuple(errors))
    draft = _draft(decode_struct(data, MemoryIn), runtime.settings.max_content_bytes)
    written = await memories.write_memory(
        runtime.pool, runtime.writer, request.headers.get("authorization"), draft
    )
    return Response(written, status_code=201 if written.created else 200)


@post(
    "/v1/memories/batch",
    status_code=200,
    summary="Write up to 100 memories",
    operation_class=json_body(BatchShape, "each item is a memory as for POST /v1/memories"),
    operation_id="writeMemories",
    tags=[MEMORIES],
)
async def write_batch(request: Request[Any, Any, Any], runtime: RuntimeDep) -> BatchWrite:
    data = await read_json(request)
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
    return await memories.write_batch(
        runtime.pool, runtime.writer, request.headers.get("authorization"), drafts
    )


@delete(
    "/v1/memories/{memory_id:str}",
    status_code=200,
    summary="Soft-delete a memory",
    operation_class=json_body(DeleteIn, also=(409,)),
    operation_id="deleteMemory",
    tags=[MEMORIES],
)
async def remove_memory(
    request: Request[Any, Any, Any], runtime: RuntimeDep, memory_id: FromPath[str]
) -> Deleted:
    delete_in = decode_struct(await read_json(request), DeleteIn)
    return await memories.delete_memory(
        runtime.pool,
        runtime.discloser.policies,
        request.headers.get("authorization"),
        memory_id,
        delete_in.reason,
        runtime.clock(),
    )


@post(
    "/v1/memories/{memory_id:str}/erase",
    status_code=200,
    summary="Erase a memory version's text (admin); receipted (kind erasure)",
    operation_class=json_body(EraseIn, also=(409,)),
    operation_id="eraseMemory",
    tags=[MEMORIES],
)
async def erase_memory(
    request: Request[Any, Any, Any], runtime: RuntimeDep, memory_id: FromPath[str]
) -> Erased:
    erase_in = decode_struct(await read_json(request), EraseIn)
    return await runtime.eraser.erase_memory(
        request.headers.get("authorization"), memory_id, erase_in.reason
    )


@post(
    "/v1/fetch",
    status_code=200,
    summary="Stage 3: full memories by id (at most 50)",
    operation_class=json_body(FetchIn),
    operation_id="fetchMemories",
    tags=[DISCLOSURE],
)
async def fetch(request: Request[Any, Any, Any], runtime: RuntimeDep) -> FetchedMemories:
    fetch_in = decode_struct(await read_json(request), FetchIn)
    return await runtime.disclosures.fetch(request.headers.get("authorization"), fetch_in)


@post(
    "/v1/fetch/claims",
    status_code=200,
    summary="Stage 3 by claim key: the live memories of a namespace that hold them (at most 50 keys)",
    operation_class=json_body(FetchClaimsIn),
    operation_id="fetchMemoriesByClaim",
    tags=[DISCLOSURE],
)
async def fetch_claims(request: Request[Any, Any, Any], runtime: RuntimeDep) -> FetchedMemories:
    claims_in = decode_struct(await read_json(request), FetchClaimsIn)
    return await runtime.disclosures.fetch_claims(request.headers.get("authorization"), claims_in)


ROUTES = [write_memory, write_batch, remove_memory, erase_memory, fetch, fetch_claims]
