"""RFC 9457 problem details, as every error response carries them (`application/problem+json`)."""

from __future__ import annotations

import msgspec
from msgspec import UNSET, UnsetType

__all__ = ["FieldProblem", "Problem"]


class FieldProblem(msgspec.Struct, frozen=True):
    """One bad field: a JSON-pointer-like path (`items/3/heading`) and what is wrong with it."""

    field: str
    message: str


class Problem(msgspec.Struct, frozen=True):
    """A problem with a stable `code` (clients switch on it, never on `detail`).

    `errors` is there for validation failures (every bad field); `receipt_id` for a policy
    refusal (its receipt, null when it could not be written). Absent otherwise."""

    type: str
    title: str
    status: int
    code: str
    detail: str
    instance: str | UnsetType = UNSET
    errors: list[FieldProblem] | UnsetType = UNSET
    receipt_id: str | UnsetType | None = UNSET
