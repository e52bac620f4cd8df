"""Who is asking: decided by the API key alone, never by request fields."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from gateway.domain.errors import ForbiddenError

__all__ = ["ALL_NAMESPACES", "ROLES", "Principal", "Role"]

Role = Literal["agent", "auditor", "admin"]
ROLES: tuple[Role, ...] = ("agent", "auditor", "admin")

ALL_NAMESPACES = "*"


@dataclass(frozen=True, slots=True)
class Principal:
    tenant_id: str
    key_id: str
    role: Role
    agent_id: str | None
    namespaces: tuple[str, ...]
    purposes: tuple[str, ...] | None

    @property
    def all_namespaces(self) -> bool:
        return ALL_NAMESPACES in self.namespaces

    def may_use(self, namespace: str) -> bool:
        return self.all_namespaces or namespace in self.namespaces

    def require_role(self, *roles: Role) -> None:
        if self.role not in roles:
            raise ForbiddenError(
                f"this operation needs the role {' or '.join(roles)}; the key has {self.role}",
                code="wrong_role",
            )

    def require_purpose(self, purpose: str | None) -> None:
        """A key issued for some purposes may declare only those (declaring none is allowed; a
        policy may still require one)."""
        if purpose is not None and self.purposes is not None and purpose not in self.purposes:
            raise ForbiddenError(
                f"purpose: the key may not declare {purpose!r}", code="purpose_forbidden"
            )

    def namespaces_read(self, requested: Sequence[str] | None) -> tuple[str, ...]:
        """The namespaces a request reads: the ones asked for (each must be allowed, else 403
        naming it), or by default every namespace the key may read (`("*",)` = all of the
        tenant's)."""
        if requested is None:
            return (ALL_NAMESPACES,) if self.all_namespaces else tuple(sorted(self.namespaces))
        for index, namespace in enumerate(requested):
            self.require_namespace(namespace, f"namespaces/{index}")
        return tuple(sorted(set(requested)))

    def require_namespace(self, namespace: str, field: str = "namespace") -> None:
        if not self.may_use(namespace):
            raise ForbiddenError(
                f"{field}: the key may not use namespace {namespace!r}", code="namespace_forbidden"
            )
