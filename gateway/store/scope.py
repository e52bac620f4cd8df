"""What every candidate query is made of: the request's `Scope` (which memories it may see, as
SQL conditions and liveness) and the columns a `Candidate` is read from."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from psycopg import sql

from gateway.domain.memory import MemoryType

__all__ = ["CANDIDATE_COLUMNS", "HEADING_COLUMNS", "Created", "Scope"]


_OTHER_COLUMNS = (
    "m.confidence::float8 AS confidence, m.labels, m.source_type, m.source_ref, m.created_at, "
    "m.expires_at, m.deleted_at, m.superseded_by, m.content_sha256, m.tokens, m.heading_tokens, "
    "m.erased_at, m.superseded_decision, m.claim_key, m.valid_from"
)
CANDIDATE_COLUMNS = sql.SQL(
    "m.memory_id, m.namespace, m.memory_type, m.heading, m.content, " + _OTHER_COLUMNS
)
# Index lines show headings only: without a policy that reads content, none is fetched for them.
HEADING_COLUMNS = sql.SQL(
    "m.memory_id, m.namespace, m.memory_type, m.heading, ''::text AS content, " + _OTHER_COLUMNS
)


# How a query states the scope's `created_at <= as_of`: as a condition an index may serve
# ("indexed"); as a check of the rows another index found, which no btree can serve ("checked",
# the same truth value: WHERE keeps only true either way); or not at all, where the query's other
# conditions imply it ("implied"). "checked" is for the full-text probes: a pooled connection runs
# the recall statement on a generic plan after ten executions (psycopg prepares it after five, then
# PostgreSQL plans five custom before it compares), and a generic plan cannot see that as_of is
# now, guesses the bound keeps a third of the tenant, and ANDs each GIN bitmap with a scan of the
# tenant's whole memories_created range (0.5 ms a probe at 10k memories, linear in the tenant).
Created = Literal["indexed", "checked", "implied"]


@dataclass(frozen=True, slots=True)
class Scope:
    """Which memories a request may see: a tenant, its namespaces (None = all), optional types,
    and the instant `as_of` (versions created later do not exist yet)."""

    tenant_id: str
    namespaces: tuple[str, ...] | None
    memory_types: tuple[MemoryType, ...] | None
    as_of: datetime
    # True when `as_of` is in the past: versions retired since then were live at `as_of`. False
    # for the present, where only never-retired versions are live, which lets the partial
    # indexes (WHERE deleted_at IS NULL) serve the index and the count.
    historical: bool = False

    def live(self) -> sql.Composable:
        return _LIVE_THEN if self.historical else _LIVE_NOW

    def filters(self, alias: str = "m", *, created: Created = "indexed") -> sql.Composed:
        """The scope's conditions on `alias`, with ``created_at <= as_of`` as `created` says."""
        parts = [sql.SQL("{}.tenant_id = %(tenant_id)s").format(sql.Identifier(alias))]
        if self.namespaces is not None:
            parts.append(
                sql.SQL("{}.namespace = ANY(%(namespaces)s)").format(sql.Identifier(alias))
            )
        if self.memory_types is not None:
            parts.append(
                sql.SQL("{}.memory_type = ANY(%(memory_types)s)").format(sql.Identifier(alias))
            )
        if created == "checked" and self.namespaces is not None:
            # The full-text index's second column (migration 0025): the index scan keeps the
            # scope's namespaces itself.
            parts.append(
                sql.SQL("{}.scope_key @@ %(scope_keys)s::tsquery").format(sql.Identifier(alias))
            )
        if created == "indexed":
            parts.append(sql.SQL("{}.created_at <= %(as_of)s").format(sql.Identifier(alias)))
        elif created == "checked":
            parts.append(
                sql.SQL("({}.created_at <= %(as_of)s) IS TRUE").format(sql.Identifier(alias))
            )
        return sql.SQL(" AND ").join(parts)

    def params(self) -> dict[str, Any]:
        return {
            "tenant_id": self.tenant_id,
            "namespaces": list(self.namespaces) if self.namespaces is not None else None,
            "memory_types": list(self.memory_types) if self.memory_types is not None else None,
            "as_of": self.as_of,
            "scope_keys": None if self.namespaces is None else _scope_keys(self),
        }


def _scope_keys(scope: Scope) -> str:
    """The tsquery text matching `scope_key` in any of the scope's namespaces: each key a quoted
    lexeme (a quote doubled, a backslash escaped, as tsquery input reads them)."""
    assert scope.namespaces is not None
    keys = (f"{scope.tenant_id}/{namespace}" for namespace in scope.namespaces)
    return " | ".join("'" + k.replace("\\", "\\\\").replace("'", "''") + "'" for k in keys)


_LIVE_THEN = sql.SQL(
    "(m.deleted_at IS NULL OR m.deleted_at > %(as_of)s) "
    "AND (m.expires_at IS NULL OR m.expires_at > %(as_of)s) AND m.erased_at IS NULL"
)
_LIVE_NOW = sql.SQL(
    "m.deleted_at IS NULL "
    "AND (m.expires_at IS NULL OR m.expires_at > %(as_of)s) AND m.erased_at IS NULL"
)
