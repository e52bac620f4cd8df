"""Policy bundles as stored objects: upload (lint, then store by digest), activation, and the
reads of a stored or active bundle for admins and auditors (ARCHITECTURE §7, /v1/policies).
The bundle in force for a disclosure is `gateway.usecases.access.policy`'s."""

from __future__ import annotations

from datetime import datetime

import msgspec

from gateway.domain.errors import InvalidRequestError, NotFoundError, PayloadTooLargeError
from gateway.domain.principal import Principal
from gateway.responses.policies import Activated, ActivePolicy, PolicyUploaded, StoredPolicy
from gateway.store import policies as policy_store
from gateway.store.database import Connection
from gateway.store.pool import Pool
from gateway.usecases.access.policy import Mode, PolicyRegistry, lint_or_reject
from gateway.usecases.access.work import unit_of_work
from gateway.usecases.receiptlog.recorder import rfc3339

__all__ = ["activate_bundle", "active_bundle", "describe_bundle", "upload_bundle"]

# A policy is configuration, not data: a generous bound that still keeps lint time small.
MAX_POLICY_BYTES = 256 * 1024


async def upload_bundle(
    pool: Pool, authorization: str | None, source: bytes, filename: str
) -> PolicyUploaded:
    """Lint and store a bundle, content-addressed; the same meaning uploaded twice is one row."""
    async with unit_of_work(pool, authorization) as (conn, principal):
        principal.require_role("admin")
        if len(source) > MAX_POLICY_BYTES:
            raise PayloadTooLargeError(
                f"a policy bundle may be at most {MAX_POLICY_BYTES} bytes; "
                f"this one is {len(source)}"
            )
        try:
            text = source.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidRequestError(
                f"the bundle is not UTF-8: {exc}", code="policy_invalid"
            ) from None
        loaded = lint_or_reject(text, filename)
        created = await policy_store.insert_bundle(
            conn,
            principal.tenant_id,
            digest=loaded.digest,
            canonical=loaded.canonical,
            source=loaded.source,
            name=loaded.bundle.name,
            revision=loaded.bundle.revision or None,
            uploaded_by=principal.key_id,
        )
    return PolicyUploaded(loaded.digest, [str(w) for w in loaded.warnings], created)


async def activate_bundle(
    pool: Pool,
    registry: PolicyRegistry,
    authorization: str | None,
    digest: str,
    mode: Mode,
    at: datetime,
) -> Activated:
    async with unit_of_work(pool, authorization) as (conn, principal):
        principal.require_role("admin")
        await registry.bundle(conn, principal.tenant_id, digest)  # 404 unless the tenant's
        if digest == registry.shipped.digest:
            await registry.store_default(conn, principal.tenant_id)
        await policy_store.insert_activation(
            conn, principal.tenant_id, digest, mode, principal.key_id, at
        )
    return Activated(digest=digest, mode=mode, activated_at=rfc3339(at))


async def describe_bundle(
    pool: Pool, registry: PolicyRegistry, authorization: str | None, digest: str
) -> StoredPolicy:
    """A bundle the tenant stored (the shipped default counts once it served the tenant)."""
    async with unit_of_work(pool, authorization) as (conn, principal):
        principal.require_role("admin", "auditor")
        return await _stored(conn, principal, registry, digest)


async def active_bundle(
    pool: Pool, registry: PolicyRegistry, authorization: str | None, at: datetime
) -> ActivePolicy:
    """The bundle in force for the tenant at `at`, with its mode."""
    async with unit_of_work(pool, authorization) as (conn, principal):
        principal.require_role("admin", "auditor")
        in_force = await registry.in_force(conn, principal.tenant_id, at)
        stored = await _stored(conn, principal, registry, in_force.digest)
    return ActivePolicy(
        **msgspec.structs.asdict(stored), mode=in_force.mode, activated=in_force.activated
    )


async def _stored(
    conn: Connection, principal: Principal, registry: PolicyRegistry, digest: str
) -> StoredPolicy:
    if digest == registry.shipped.digest:
        await registry.store_default(conn, principal.tenant_id)
    row = await policy_store.find_bundle(conn, principal.tenant_id, digest)
    if row is None:
        raise NotFoundError(f"policy bundle {digest} not found", code="policy_not_found")
    return StoredPolicy(
        digest=row.digest,
        name=row.name,
        revision=row.revision,
        source=row.source,
        uploaded_at=rfc3339(row.uploaded_at),
        uploaded_by=row.uploaded_by,
    )
