"""Issuing API keys and authenticating bearers.

A key reads `ctxgw.<tenant_id>.<key_id>.<secret>`. The tenant and key id make the lookup a primary
key read (and keep every key tenant-scoped, as sharding needs); only sha256(secret) is stored and
it is compared in constant time.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import math
import re
import secrets
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from gateway.domain.errors import InvalidRequestError, RateLimitedError, UnauthenticatedError
from gateway.domain.principal import ALL_NAMESPACES, ROLES, Principal, Role
from gateway.shell.clock import new_ulid, system_clock
from gateway.store import keys as key_store
from gateway.store.database import Connection, SyncConnection
from gateway.store.transactions import begin

__all__ = ["IssuedKey", "authenticate", "authenticated", "issue_key", "parse_bearer", "vouching"]

TENANT_PATTERN = re.compile(r"^[a-z0-9][a-z0-9_-]{0,62}$")
NAMESPACE_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$")
_KEY_PATTERN = re.compile(
    r"^ctxgw\.([a-z0-9][a-z0-9_-]{0,62})\.([0-9a-z]{26})\.([A-Za-z0-9_-]{43})$"
)


# A key's limits unless it is issued with its own (migration 0012 gave keys issued before the
# same): per key, far above what one agent's loop asks, so that only a runaway is refused.
DEFAULT_REQUESTS_PER_SECOND = 200.0
DEFAULT_WRITES_PER_SECOND = 500.0


@dataclass(frozen=True, slots=True)
class IssuedKey:
    key: str
    key_id: str
    tenant_id: str


def _digest(secret: str) -> bytes:
    return hashlib.sha256(secret.encode("ascii")).digest()


def issue_key(
    conn: SyncConnection,
    *,
    tenant_id: str,
    role: str,
    namespaces: list[str],
    agent_id: str | None = None,
    purposes: list[str] | None = None,
    requests_per_second: float | None = DEFAULT_REQUESTS_PER_SECOND,
    writes_per_second: float | None = DEFAULT_WRITES_PER_SECOND,
) -> IssuedKey:
    """Create the tenant if new and a key for it; the secret is returned once and never stored.
    A limit of None is no limit."""
    if not TENANT_PATTERN.match(tenant_id):
        raise InvalidRequestError(
            "tenant: lower-case letters, digits, '_' and '-', up to 63 characters"
        )
    if role not in ROLES:
        raise InvalidRequestError(f"role: expected one of {', '.join(ROLES)}")
    for namespace in namespaces:
        if namespace != ALL_NAMESPACES and not NAMESPACE_PATTERN.match(namespace):
            raise InvalidRequestError(f"namespaces: {namespace!r} is not a valid namespace")
    if not namespaces:
        raise InvalidRequestError("namespaces: give at least one namespace, or '*'")
    for name, limit in (("requests", requests_per_second), ("writes", writes_per_second)):
        if limit is not None and not 0 < limit <= 1_000_000:
            raise InvalidRequestError(f"{name} per second: expected 0 < n <= 1000000")
    key_id = new_ulid(system_clock()).lower()
    secret = base64.urlsafe_b64encode(secrets.token_bytes(32)).decode("ascii").rstrip("=")
    with conn.transaction():
        key_store.ensure_tenant(conn, tenant_id)
        key_store.insert_key(
            conn,
            tenant_id=tenant_id,
            key_id=key_id,
            secret_sha256=_digest(secret),
            role=role,
            agent_id=agent_id,
            namespaces=sorted(set(namespaces)),
            purposes=sorted(set(purposes)) if purposes is not None else None,
            requests_per_second=requests_per_second,
            writes_per_second=writes_per_second,
        )
    return IssuedKey(key=f"ctxgw.{tenant_id}.{key_id}.{secret}", key_id=key_id, tenant_id=tenant_id)


def parse_bearer(header: str | None) -> tuple[str, str, str]:
    """Split an Authorization header into (tenant_id, key_id, secret) or raise 401."""
    if header is None or not header.strip():
        raise UnauthenticatedError(
            "missing Authorization: Bearer <key>", code="missing_credentials"
        )
    scheme, _, token = header.strip().partition(" ")
    match = _KEY_PATTERN.match(token.strip()) if scheme.lower() == "bearer" else None
    if match is None:
        raise UnauthenticatedError("the API key is malformed", code="invalid_credentials")
    return match.group(1), match.group(2), match.group(3)


@dataclass(frozen=True, slots=True)
class _Vouch:
    tenant_id: str
    key_id: str
    secret_sha256: bytes
    principal: Principal


# A key the edge has just authenticated, for the requests it then makes in process on the same
# caller's behalf (each `/mcp` tool call is one): they are one call of the client, so they reuse
# that identification rather than look the key up again and charge its requests twice. Only code
# sets a context variable; nothing a client sends can.
_VOUCHED: ContextVar[_Vouch | None] = ContextVar("ctxgw_vouched_key", default=None)


@contextmanager
def vouching(header: str | None, principal: Principal) -> Iterator[None]:
    """Within the block, a request bearing the same key as `header` (which authenticated as
    `principal`) is not looked up again: it charges no second request, only the writes it
    makes. A key revoked meanwhile is refused from the next outer request on."""
    tenant_id, key_id, secret = parse_bearer(header)
    token = _VOUCHED.set(_Vouch(tenant_id, key_id, _digest(secret), principal))
    try:
        yield
    finally:
        _VOUCHED.reset(token)


async def authenticate(conn: Connection, header: str | None, *, writes: int = 0) -> Principal:
    """The key's principal, its rate limits charged (`gateway.store.keys.find_key`); 401 for a
    missing, malformed, unknown or revoked key, 429 when a bucket is empty."""
    tenant_id, key_id, secret = parse_bearer(header)
    digest = _digest(secret)
    vouched, requests = _vouched(tenant_id, key_id, digest, writes)
    if vouched is not None:
        return vouched
    found = await key_store.find_key(
        conn, tenant_id, key_id, secret_sha256=digest, requests=requests, writes=writes
    )
    return _principal(found, digest)


@asynccontextmanager
async def authenticated(
    conn: Connection, header: str | None, *, writes: int = 0
) -> AsyncIterator[Principal]:
    """As `authenticate`, with the request's transaction opened in the key's tenant in the same
    round trip (`gateway.store.keys.find_key_then_begin`): it commits when the block ends and
    rolls back on error, a refused key's included."""
    tenant_id, key_id, secret = parse_bearer(header)
    digest = _digest(secret)
    vouched, requests = _vouched(tenant_id, key_id, digest, writes)
    if vouched is not None:
        async with begin(conn, vouched.tenant_id):
            yield vouched
        return
    async with key_store.find_key_then_begin(
        conn, tenant_id, key_id, secret_sha256=digest, requests=requests, writes=writes
    ) as found:
        yield _principal(found, digest)


def _vouched(
    tenant_id: str, key_id: str, digest: bytes, writes: int
) -> tuple[Principal | None, int]:
    """The principal the edge vouched for (`vouching`) when the request needs no lookup, as it
    writes nothing; else None and the requests the lookup charges (none for a vouched key: the
    edge charged it)."""
    vouch = _VOUCHED.get()
    if (
        vouch is not None
        and (vouch.tenant_id, vouch.key_id) == (tenant_id, key_id)
        and hmac.compare_digest(vouch.secret_sha256, digest)
    ):
        return (vouch.principal if writes == 0 else None), 0
    return None, 1


def _principal(found: key_store.KeyFound | None, digest: bytes) -> Principal:
    """The principal of a key found by its id, once its secret, revocation and buckets allow."""
    row = found.key if found is not None else None
    # Compare even when the key is unknown, so that timing does not reveal which key ids exist.
    expected = row.secret_sha256 if row is not None else b"\0" * 32
    if not hmac.compare_digest(expected, digest) or row is None or found is None:
        raise UnauthenticatedError("the API key is not valid", code="invalid_credentials")
    if row.revoked_at is not None:
        raise UnauthenticatedError("the API key was revoked", code="revoked_credentials")
    if found.limited is not None:
        raise RateLimitedError(
            found.limited,
            found.limit_per_second or 0.0,
            max(1, math.ceil(found.retry_after_seconds)),
        )
    role: Role = next(r for r in ROLES if r == row.role)
    return Principal(
        tenant_id=row.tenant_id,
        key_id=row.key_id,
        role=role,
        agent_id=row.agent_id,
        namespaces=tuple(row.namespaces),
        purposes=tuple(row.purposes) if row.purposes is not None else None,
    )
