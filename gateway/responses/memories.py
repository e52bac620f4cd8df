"""Memory writes and deletes."""

from __future__ import annotations

import msgspec
from msgspec import UNSET, UnsetType

from gateway.responses.timestamps import Timestamp

__all__ = ["BatchItem", "BatchWrite", "Deleted", "Erased", "Written"]


class Written(msgspec.Struct, frozen=True):
    """POST /v1/memories: 201 when a version was created, 200 for an idempotent retry."""

    memory_id: str
    created: bool
    supersedes: str | None


class BatchItem(msgspec.Struct, frozen=True):
    """One item of a batch: written (201) or found written before (200), with the write's
    members; or refused by the state (403, 404, 409), with the problem's `code` and `detail`,
    and nothing of it kept. (One Struct with optional members, not a union: msgspec encodes and
    documents untagged unions of Structs only with a tag member, which would change the body.)"""

    index: int
    status: int
    memory_id: str | UnsetType = UNSET
    created: bool | UnsetType = UNSET
    supersedes: str | UnsetType | None = UNSET
    code: str | UnsetType = UNSET
    detail: str | UnsetType = UNSET


class BatchWrite(msgspec.Struct, frozen=True):
    """POST /v1/memories/batch: per-item results in request order."""

    items: list[BatchItem]
    written: int
    failed: int


class Deleted(msgspec.Struct, frozen=True):
    """DELETE /v1/memories/{id}: the version is retired; its row stays for audit and replay."""

    memory_id: str
    deleted_at: Timestamp
    reason: str


class Erased(msgspec.Struct, frozen=True):
    """POST /v1/memories/{id}/erase and /v1/sessions/{id}/turns/{seq}/erase: every id whose
    text was blanked (a turn takes the summaries covering it and the memories remembered from
    either; a memory, the compiled facts derived from it), and the signed `erasure` receipt that
    names them all."""

    erased_at: Timestamp
    reason: str
    receipt_id: str
    turns: list[str]
    summaries: list[str]
    memories: list[str]
