"""Policy endpoints: upload (YAML) → lint → store; activate; read the active and stored bundles."""

from __future__ import annotations

from typing import Any

from litestar import Request, Response, get, post
from litestar.openapi import ResponseSpec
from litestar.params import FromPath

from gateway.http.auth import RuntimeDep
from gateway.http.openapi import DOCUMENTED, POLICIES, json_body, text_body
from gateway.http.validation import JSON_MEDIA_TYPES, decode_struct, read_json, require_media_type
from gateway.requests import ActivateIn
from gateway.responses.policies import Activated, ActivePolicy, PolicyUploaded, StoredPolicy
from gateway.usecases.access.policy_bundles import (
    activate_bundle,
    active_bundle,
    describe_bundle,
    upload_bundle,
)

__all__ = ["ROUTES"]

# YAML by any of its registered and customary names; JSON is YAML too (YAML 1.2 §1.3).
POLICY_MEDIA_TYPES = JSON_MEDIA_TYPES | {
    "application/yaml",
    "application/x-yaml",
    "text/yaml",
    "text/x-yaml",
    "text/plain",
}


@post(
    "/v1/policies",
    status_code=201,
    responses={
        200: ResponseSpec(
            PolicyUploaded, description="a bundle already stored: its digest, nothing new"
        )
    },
    summary="Upload a policy bundle (YAML); lint and store it",
    operation_class=text_body("application/yaml", "a PolicyBundle document (ARCHITECTURE §7)"),
    operation_id="uploadPolicy",
    tags=[POLICIES],
)
async def upload(request: Request[Any, Any, Any], runtime: RuntimeDep) -> Response[PolicyUploaded]:
    require_media_type(request, POLICY_MEDIA_TYPES)
    source = await request.body()
    filename = request.headers.get("x-policy-filename", "policy.yaml")[:200]
    uploaded = await upload_bundle(
        runtime.pool, request.headers.get("authorization"), source, filename
    )
    return Response(uploaded, status_code=201 if uploaded.created else 200)


@post(
    "/v1/policies/{digest:str}/activate",
    status_code=200,
    summary="Activate a stored bundle",
    operation_class=json_body(ActivateIn),
    operation_id="activatePolicy",
    tags=[POLICIES],
)
async def activate(
    request: Request[Any, Any, Any], runtime: RuntimeDep, digest: FromPath[str]
) -> Activated:
    body = decode_struct(await read_json(request), ActivateIn)
    return await activate_bundle(
        runtime.pool,
        runtime.discloser.policies,
        request.headers.get("authorization"),
        digest,
        body.mode,
        runtime.clock(),
    )


@get(
    "/v1/policies/active",
    summary="The bundle in force for this tenant",
    operation_class=DOCUMENTED,
    operation_id="getActivePolicy",
    tags=[POLICIES],
)
async def active(request: Request[Any, Any, Any], runtime: RuntimeDep) -> ActivePolicy:
    return await active_bundle(
        runtime.pool,
        runtime.discloser.policies,
        request.headers.get("authorization"),
        runtime.clock(),
    )


@get(
    "/v1/policies/{digest:str}",
    summary="A stored bundle by digest",
    operation_class=DOCUMENTED,
    operation_id="getPolicy",
    tags=[POLICIES],
)
async def by_digest(
    request: Request[Any, Any, Any], runtime: RuntimeDep, digest: FromPath[str]
) -> StoredPolicy:
    return await describe_bundle(
        runtime.pool, runtime.discloser.policies, request.headers.get("authorization"), digest
    )


ROUTES = [upload, activate, active, by_digest]
