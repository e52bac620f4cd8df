"""Policy bundles: upload, activation, the stored and the active bundle, the what-if window."""

from __future__ import annotations

from typing import Literal

import msgspec
from msgspec import UNSET, UnsetType

from gateway.responses.disclosures import ReplayProblem
from gateway.responses.timestamps import Timestamp

__all__ = [
    "Activated",
    "ActivePolicy",
    "PolicyUploaded",
    "StoredPolicy",
    "WhatIfReceipt",
    "WhatIfReport",
]

Mode = Literal["enforce", "log_only"]


class PolicyUploaded(msgspec.Struct, frozen=True):
    """POST /v1/policies: 201 when stored now, 200 when the same meaning was stored before."""

    digest: str
    warnings: list[str]
    created: bool


class Activated(msgspec.Struct, frozen=True):
    """POST /v1/policies/{digest}/activate."""

    digest: str
    mode: Mode
    activated_at: Timestamp


class StoredPolicy(msgspec.Struct, frozen=True):
    """GET /v1/policies/{digest}: a stored bundle, its YAML source as uploaded."""

    digest: str
    name: str
    revision: str | None
    source: str
    uploaded_at: Timestamp
    uploaded_by: str


class ActivePolicy(StoredPolicy, frozen=True):
    """GET /v1/policies/active: the bundle in force and its mode; `activated` false while the
    shipped default applies (no activation yet)."""

    mode: Mode
    activated: bool


class WhatIfReceipt(msgspec.Struct, frozen=True):
    """One past receipt under the candidate. A refusal carries whether the candidate would
    refuse it too; a bundle also what would change."""

    receipt_id: str
    kind: str
    refused_by: str | None
    changed: bool | UnsetType = UNSET
    added: list[str] | UnsetType = UNSET
    removed: list[str] | UnsetType = UNSET
    problems: list[ReplayProblem] | UnsetType = UNSET


class WhatIfReport(msgspec.Struct, frozen=True):
    """POST /v1/policies/what-if: a candidate policy against past bundles and refusals."""

    policy_digest: str
    receipts_evaluated: int
    bundles_changed: int
    requests_refused: int  # requests the candidate would refuse outright (a `require` not met)
    refusals_evaluated: int
    refusals_lifted: int  # past refusals the candidate would let through
    rule_hits: dict[str, int]
    newly_excluded: dict[str, int]
    newly_admitted: dict[str, int]
    receipts: list[WhatIfReceipt]  # the first 200
