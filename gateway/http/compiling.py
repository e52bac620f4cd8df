"""Compile and conflict endpoints (ARCHITECTURE §12)."""

from __future__ import annotations

from typing import Any

from litestar import Request, Response, get, post
from litestar.openapi import ResponseSpec
from litestar.params import FromPath

from gateway.http.auth import RuntimeDep
from gateway.http.openapi import COMPILING, DOCUMENTED, json_body, query_parameters
from gateway.http.validation import decode_json, decode_struct
from gateway.requests import CompileIn, ConflictsQuery, ResolveIn
from gateway.responses.compiling import (
    CompileAccepted,
    CompileJob,
    CompileResult,
    ConflictEntry,
    ConflictPage,
)

__all__ = ["ROUTES"]


@post(
    "/v1/compile",
    status_code=200,
    responses={
        202: ResponseSpec(
            CompileAccepted,
            description=(
                "`async: true`, or a scope of more episodes than one request compiles "
                "(5,000): the job is queued; poll its job_id (the Location header)"
            ),
        )
    },
    summary="Compile a session's turns or a namespace's episodes into typed facts",
    operation_class=json_body(CompileIn, also=(404,)),
    operation_id="compileFacts",
    tags=[COMPILING],
)
async def compile_scope(
    request: Request[Any, Any, Any], runtime: RuntimeDep
) -> Response[CompileResult]:
    body = decode_struct(decode_json(await request.body()), CompileIn)
    job = await runtime.compiler.start(request.headers.get("authorization"), body)
    if job.status == "pending":  # queued: asked to, or too large a scope for one request
        # (documented as the 202 response above; the annotation names the 200 one)
        return Response(
            CompileAccepted(job.job_id, job.status),  # type: ignore[arg-type]
            status_code=202,
            headers={"Location": f"/v1/compile/{job.job_id}"},
        )
    counts = job.counts
    result = CompileResult(
        job.job_id,
        job.status,
        counts.created,
        counts.superseded,
        counts.conflicts,
        counts.skipped,
        job.error,
    )
    return Response(result, status_code=200)


@get(
    "/v1/compile/{job_id:str}",
    summary="A compile job: status, counts, error",
    operation_class=DOCUMENTED,
    operation_id="getCompileJob",
    tags=[COMPILING],
)
async def compile_status(
    request: Request[Any, Any, Any], runtime: RuntimeDep, job_id: FromPath[str]
) -> CompileJob:
    return await runtime.compiler.status(request.headers.get("authorization"), job_id)


def _conflicts_query(request: Request[Any, Any, Any]) -> ConflictsQuery:
    raw: dict[str, Any] = dict(request.query_params.items())
    limit = raw.get("limit")
    if isinstance(limit, str) and limit.isdigit():
        raw["limit"] = int(limit)
    return decode_struct(raw, ConflictsQuery)


@get(
    "/v1/conflicts",
    summary="Conflicting facts (open by default), paged by conflict id",
    operation_class=query_parameters(ConflictsQuery),
    operation_id="listConflicts",
    tags=[COMPILING],
)
async def list_conflicts(request: Request[Any, Any, Any], runtime: RuntimeDep) -> ConflictPage:
    return await runtime.conflicts.page(
        request.headers.get("authorization"), _conflicts_query(request)
    )


@post(
    "/v1/conflicts/{conflict_id:str}/resolve",
    status_code=200,
    summary="Resolve a conflict: the winner supersedes the other side",
    operation_class=json_body(ResolveIn, also=(409,)),
    operation_id="resolveConflict",
    tags=[COMPILING],
)
async def resolve_conflict(
    request: Request[Any, Any, Any], runtime: RuntimeDep, conflict_id: FromPath[str]
) -> ConflictEntry:
    body = decode_struct(decode_json(await request.body()), ResolveIn)
    return await runtime.conflicts.resolve(request.headers.get("authorization"), conflict_id, body)


ROUTES = [compile_scope, compile_status, list_conflicts, resolve_conflict]
