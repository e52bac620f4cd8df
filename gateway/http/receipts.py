"""Receipt endpoints: get, list, verify, proof, latest checkpoint, export (JSONL, streamed)."""

from __future__ import annotations

from typing import Any

from litestar import Request, get, post
from litestar.params import FromPath
from litestar.response import Response, Stream

from gateway.domain.errors import FieldError, InvalidRequestError
from gateway.domain.receipt_filter import ReceiptFilter
from gateway.http.auth import RuntimeDep
from gateway.http.openapi import (
    POLICIES,
    RECEIPTS,
    TextResponse,
    documented,
    json_body,
    query_parameters,
    text_response,
)
from gateway.http.validation import decode_struct, read_json
from gateway.http.wire import ReceiptQuery
from gateway.requests import ReplayIn, WhatIfIn
from gateway.responses.disclosures import ContextReplay, RefusalReplay
from gateway.responses.policies import WhatIfReport
from gateway.responses.receipts import InclusionProof, ReceiptDetail, ReceiptPage, Verification
from gateway.responses.sessions import SessionContextReplay
from gateway.usecases.audit import requests as inspection
from gateway.usecases.audit.what_if import what_if_report

__all__ = ["ROUTES"]

JSONL = "application/jsonl"


def _query(request: Request[Any, Any, Any]) -> ReceiptFilter:
    raw: dict[str, Any] = dict(request.query_params.items())
    if isinstance(raw.get("limit"), str) and raw["limit"].isdigit():
        raw["limit"] = int(raw["limit"])
    query = decode_struct(raw, ReceiptQuery)
    return ReceiptFilter(
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
    operation_class=query_parameters(ReceiptQuery, also=(409,)),
    operation_id="listReceipts",
    tags=[RECEIPTS],
)
async def list_receipts(request: Request[Any, Any, Any], runtime: RuntimeDep) -> ReceiptPage:
    return await inspection.page_of_receipts(
        runtime.pool, runtime.replica, request.headers.get("authorization"), _query(request)
    )


@get(
    "/v1/receipts/export",
    summary="The receipt log as JSONL, verifiable offline",
    media_type=JSONL,
    operation_class=query_parameters(
        ReceiptQuery,
        TextResponse(
            JSONL,
            "one receipt envelope per line (with its proof when filtered), "
            "then the signed checkpoint",
        ),
        also=(409,),
    ),
    operation_id="exportReceipts",
    tags=[RECEIPTS],
)
async def export(request: Request[Any, Any, Any], runtime: RuntimeDep) -> Stream:
    lines = await inspection.export_receipts(
        runtime.pool,
        runtime.replica,
        runtime.discloser.recorder.signer,
        request.headers.get("authorization"),
        _query(request),
    )
    return Stream(lines, media_type=JSONL)


@get(
    "/v1/receipts/{receipt_id:str}",
    summary="A receipt: decoded body and DSSE envelope",
    operation_class=documented(also=(409,)),
    operation_id="getReceipt",
    tags=[RECEIPTS],
)
async def get_receipt(
    request: Request[Any, Any, Any], runtime: RuntimeDep, receipt_id: FromPath[str]
) -> ReceiptDetail:
    return await inspection.read_receipt(
        runtime.pool, runtime.replica, request.headers.get("authorization"), receipt_id
    )


@get(
    "/v1/receipts/{receipt_id:str}/verify",
    summary="Verify a stored receipt",
    operation_class=documented(also=(409,)),
    operation_id="verifyReceipt",
    tags=[RECEIPTS],
)
async def verify(
    request: Request[Any, Any, Any], runtime: RuntimeDep, receipt_id: FromPath[str]
) -> Verification:
    return await inspection.verify_receipt(
        runtime.pool,
        runtime.replica,
        runtime.discloser.recorder.signer,
        request.headers.get("authorization"),
        receipt_id,
    )


@get(
    "/v1/receipts/{receipt_id:str}/proof",
    summary="Inclusion proof to the latest checkpoint",
    operation_class=documented(also=(409,)),
    operation_id="getReceiptProof",
    tags=[RECEIPTS],
)
async def proof(
    request: Request[Any, Any, Any], runtime: RuntimeDep, receipt_id: FromPath[str]
) -> InclusionProof:
    return await inspection.prove_receipt(
        runtime.pool,
        runtime.discloser.recorder.signer,
        request.headers.get("authorization"),
        receipt_id,
    )


@get(
    "/v1/log/checkpoint",
    summary="The latest signed checkpoint (signed-note text)",
    media_type="text/plain",
    operation_class=text_response(
        "text/plain", "the checkpoint as a signed note (C2SP)", also=(404, 409)
    ),
    operation_id="getCheckpoint",
    tags=[RECEIPTS],
)
async def checkpoint(request: Request[Any, Any, Any], runtime: RuntimeDep) -> Response[str]:
    note = await inspection.latest_checkpoint(
        runtime.pool, runtime.discloser.recorder.signer, request.headers.get("authorization")
    )
    return Response(note, media_type="text/plain")


@post(
    "/v1/receipts/{receipt_id:str}/replay",
    status_code=200,
    summary="Replay a bundle",
    operation_class=json_body(ReplayIn, also=(409,)),
    operation_id="replayReceipt",
    tags=[RECEIPTS],
)
async def replay(
    request: Request[Any, Any, Any], runtime: RuntimeDep, receipt_id: FromPath[str]
) -> ContextReplay | RefusalReplay | SessionContextReplay:
    body = decode_struct(await read_json(request), ReplayIn)
    if body.mode != "what_if" and (body.policy_digest or body.policy_yaml):
        raise InvalidRequestError(
            "a candidate policy is only used by mode what_if",
            (FieldError("mode", "use what_if to replay under another policy"),),
        )
    return await runtime.disclosures.replay(request.headers.get("authorization"), receipt_id, body)


@post(
    "/v1/policies/what-if",
    status_code=200,
    summary="A candidate policy against past bundles and refusals",
    operation_class=json_body(WhatIfIn, also=(404, 409)),
    operation_id="whatIfPolicy",
    tags=[POLICIES],
)
async def what_if(request: Request[Any, Any, Any], runtime: RuntimeDep) -> WhatIfReport:
    body = decode_struct(await read_json(request), WhatIfIn)
    return await what_if_report(
        runtime.pool, runtime.replayer, request.headers.get("authorization"), body
    )


ROUTES = [list_receipts, export, get_receipt, verify, proof, checkpoint, replay, what_if]
