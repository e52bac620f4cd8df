"""Receipt endpoints: get, list, verify, proof, latest checkpoint, export (JSONL, streamed)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from litestar import Request, get, post
from litestar.params import FromPath
from litestar.response import Response, Stream

from gateway.errors import FieldError, InvalidRequestError, NotFoundError
from gateway.http.auth import RuntimeDep
from gateway.http.openapi import json_body, query_parameters
from gateway.http.validation import decode_json, decode_struct
from gateway.http.wire import ReceiptQuery, ReplayIn, WhatIfIn
from gateway.store import receipts as receipt_store
from gateway.store.database import transaction
from gateway.usecases.audit import export_lines, find_visible, prove, verify_stored
from gateway.usecases.checkpoints import checkpoint_tenant
from gateway.usecases.keys import authenticate
from gateway.usecases.recorded import REPLAYABLE
from gateway.usecases.refusal import REFUSAL_KIND
from gateway.usecases.what_if import what_if_window
from gateway.usecases.work import unit_of_work
from receipts import decode_body

__all__ = ["ROUTES"]


def _summary(row: receipt_store.ReceiptRow) -> dict[str, Any]:
    return {
        "receipt_id": row.receipt_id,
        "seq": row.seq,
        "kind": row.kind,
        "agent_id": row.agent_id,
        "issued_at": row.issued_at.isoformat(),
        "bundle_sha256": row.bundle_sha256,
        "policy_digest": row.policy_digest,
        "parent_receipt_id": row.parent_receipt_id,
    }


def _query(request: Request[Any, Any, Any]) -> receipt_store.ReceiptFilter:
    raw: dict[str, Any] = dict(request.query_params.items())
    if isinstance(raw.get("limit"), str) and raw["limit"].isdigit():
        raw["limit"] = int(raw["limit"])
    query = decode_struct(raw, ReceiptQuery)
    return receipt_store.ReceiptFilter(
        agent_id=query.agent_id,
        kind=query.kind,
        since=query.since,
        until=query.until,
        memory_id=query.memory_id,
        after_seq=int(query.cursor) if query.cursor else 0,
        limit=query.limit,
    )


@get(
    "/v1/receipts",
    summary="List receipts (auditor, admin)",
    operation_class=query_parameters(ReceiptQuery),
)
async def list_receipts(request: Request[Any, Any, Any], runtime: RuntimeDep) -> dict[str, Any]:
    where = _query(request)
    async with unit_of_work(runtime.pool, request.headers.get("authorization")) as (
        conn,
        principal,
    ):
        principal.require_role("auditor", "admin")
        rows = await receipt_store.list_receipts(conn, principal.tenant_id, where)
    return {
        "receipts": [_summary(r) for r in rows],
        "next_cursor": str(rows[-1].seq) if len(rows) == where.limit else None,
    }


@get(
    "/v1/receipts/export",
    summary="The receipt log as JSONL, verifiable offline",
    operation_class=query_parameters(ReceiptQuery),
)
async def export(request: Request[Any, Any, Any], runtime: RuntimeDep) -> Stream:
    where = _query(request)
    async with transaction(runtime.pool) as conn:
        principal = await authenticate(conn, request.headers.get("authorization"))
    principal.require_role("auditor", "admin")
    signer = runtime.discloser.recorder.signer

    async def lines() -> AsyncIterator[bytes]:
        async for line in export_lines(runtime.pool, signer, principal.tenant_id, where):
            yield line.encode("utf-8")

    return Stream(lines(), media_type="application/jsonl")


@get("/v1/receipts/{receipt_id:str}", summary="A receipt: decoded body and DSSE envelope")
async def get_receipt(
    request: Request[Any, Any, Any], runtime: RuntimeDep, receipt_id: FromPath[str]
) -> dict[str, Any]:
    async with unit_of_work(runtime.pool, request.headers.get("authorization")) as (
        conn,
        principal,
    ):
        row = await find_visible(conn, principal, receipt_id)
    return {**_summary(row), "body": decode_body(bytes(row.body)), "envelope": row.envelope}


@get("/v1/receipts/{receipt_id:str}/verify", summary="Verify a stored receipt")
async def verify(
    request: Request[Any, Any, Any], runtime: RuntimeDep, receipt_id: FromPath[str]
) -> dict[str, Any]:
    async with unit_of_work(runtime.pool, request.headers.get("authorization")) as (
        conn,
        principal,
    ):
        principal.require_role("auditor", "admin")
        row = await find_visible(conn, principal, receipt_id)
        checks = await verify_stored(conn, row, runtime.discloser.recorder.signer)
    return {
        "receipt_id": receipt_id,
        "valid": all(c.ok for c in checks),
        "checks": [c.to_json() for c in checks],
    }


@get("/v1/receipts/{receipt_id:str}/proof", summary="Inclusion proof to the latest checkpoint")
async def proof(
    request: Request[Any, Any, Any], runtime: RuntimeDep, receipt_id: FromPath[str]
) -> dict[str, Any]:
    async with unit_of_work(runtime.pool, request.headers.get("authorization")) as (
        conn,
        principal,
    ):
        principal.require_role("auditor", "admin")
        row = await find_visible(conn, principal, receipt_id)
        found = await prove(conn, row, runtime.discloser.recorder.signer)
    assert found is not None  # with a signer, a covering checkpoint is made on demand
    return {
        "receipt_id": receipt_id,
        "seq": row.seq,
        "leaf": bytes(row.leaf).hex(),
        **found.to_json(),
    }


@get("/v1/log/checkpoint", summary="The latest signed checkpoint (signed-note text)")
async def checkpoint(request: Request[Any, Any, Any], runtime: RuntimeDep) -> Response[str]:
    async with unit_of_work(runtime.pool, request.headers.get("authorization")) as (
        conn,
        principal,
    ):
        principal.require_role("auditor", "admin")
        latest = await checkpoint_tenant(
            conn, runtime.discloser.recorder.signer, principal.tenant_id
        )
    if latest is None:
        raise NotFoundError("the log is empty: no receipt has been written yet", code="log_empty")
    return Response(latest.note, media_type="text/plain; charset=utf-8")


@post(
    "/v1/receipts/{receipt_id:str}/replay",
    status_code=200,
    summary="Replay a bundle",
    operation_class=json_body(ReplayIn),
)
async def replay(
    request: Request[Any, Any, Any], runtime: RuntimeDep, receipt_id: FromPath[str]
) -> dict[str, Any]:
    body = decode_struct(decode_json(await request.body()), ReplayIn)
    if body.mode != "what_if" and (body.policy_digest or body.policy_yaml):
        raise InvalidRequestError(
            "a candidate policy is only used by mode what_if",
            (FieldError("mode", "use what_if to replay under another policy"),),
        )
    async with unit_of_work(runtime.pool, request.headers.get("authorization")) as (
        conn,
        principal,
    ):
        replayed = await runtime.replayer.replay(
            conn,
            principal,
            receipt_id,
            body.mode,
            runtime.clock(),
            policy_digest=body.policy_digest,
            policy_yaml=body.policy_yaml,
        )
    return replayed.payload


@post(
    "/v1/policies/what-if",
    status_code=200,
    summary="A candidate policy against past bundles and refusals",
    operation_class=json_body(WhatIfIn),
)
async def what_if(request: Request[Any, Any, Any], runtime: RuntimeDep) -> dict[str, Any]:
    body = decode_struct(decode_json(await request.body()), WhatIfIn)
    async with unit_of_work(runtime.pool, request.headers.get("authorization")) as (
        conn,
        principal,
    ):
        principal.require_role("admin", "auditor")
        policy = await runtime.replayer.candidate_policy(
            conn, principal.tenant_id, body.policy_digest, body.policy_yaml
        )
        rows = await receipt_store.recent_receipts(
            conn,
            principal.tenant_id,
            (*REPLAYABLE, REFUSAL_KIND),
            since=body.since,
            until=body.until,
            limit=body.last,
        )
        return await what_if_window(conn, principal, rows, policy)


ROUTES = [list_receipts, export, get_receipt, verify, proof, checkpoint, replay, what_if]
