"""Policy endpoints: upload (YAML) → lint → store; activate; read the active and stored bundles."""

from __future__ import annotations

from typing import Any

from litestar import Request, Response, get, post
from litestar.params import FromPath

from gateway.http.auth import RuntimeDep
from gateway.http.openapi import json_body, text_body
from gateway.http.validation import decode_json, decode_struct
from gateway.http.wire import ActivateIn
from gateway.usecases.policy import activate_bundle, describe_bundle, upload_bundle
from gateway.usecases.work import unit_of_work

__all__ = ["ROUTES"]


@post(
    "/v1/policies",
    status_code=201,
    summary="Upload a policy bundle (YAML); lint and store it",
    operation_class=text_body("application/yaml", "a PolicyBundle document (ARCHITECTURE §7)"),
)
async def upload(request: Request[Any, Any, Any], runtime: RuntimeDep) -> Response[Any]:
    source = await request.body()
    filename = request.headers.get("x-policy-filename", "policy.yaml")[:200]
    async with unit_of_work(runtime.pool, request.headers.get("authorization")) as (
        conn,
        principal,
    ):
        uploaded = await upload_bundle(conn, principal, source, filename)
    return Response(
        {
            "digest": uploaded.digest,
            "warnings": list(uploaded.warnings),
            "created": uploaded.created,
        },
        status_code=201 if uploaded.created else 200,
    )


@post(
    "/v1/policies/{digest:str}/activate",
    status_code=200,
    summary="Activate a stored bundle",
    operation_class=json_body(ActivateIn),
)
async def activate(
    request: Request[Any, Any, Any], runtime: RuntimeDep, digest: FromPath[str]
) -> dict[str, Any]:
    body = decode_struct(decode_json(await request.body()), ActivateIn)
    now = runtime.clock()
    registry = runtime.discloser.policies
    async with unit_of_work(runtime.pool, request.headers.get("authorization")) as (
        conn,
        principal,
    ):
        await activate_bundle(conn, principal, registry, digest, body.mode, now)
    return {"digest": digest, "mode": body.mode, "activated_at": now.isoformat()}


@get("/v1/policies/active", summary="The bundle in force for this tenant")
async def active(request: Request[Any, Any, Any], runtime: RuntimeDep) -> dict[str, Any]:
    registry = runtime.discloser.policies
    async with unit_of_work(runtime.pool, request.headers.get("authorization")) as (
        conn,
        principal,
    ):
        principal.require_role("admin", "auditor")
        in_force = await registry.in_force(conn, principal.tenant_id, runtime.clock())
        described = await describe_bundle(conn, principal, registry, in_force.digest)
    return {**described, "mode": in_force.mode, "activated": in_force.activated}


@get("/v1/policies/{digest:str}", summary="A stored bundle by digest")
async def by_digest(
    request: Request[Any, Any, Any], runtime: RuntimeDep, digest: FromPath[str]
) -> dict[str, Any]:
    async with unit_of_work(runtime.pool, request.headers.get("authorization")) as (
        conn,
        principal,
    ):
        return await describe_bundle(conn, principal, runtime.discloser.policies, digest)


ROUTES = [upload, activate, active, by_digest]
