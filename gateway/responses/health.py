"""Liveness and readiness."""

from __future__ import annotations

from typing import Literal

import msgspec

__all__ = ["Health", "Readiness"]


class Health(msgspec.Struct, frozen=True):
    """GET /healthz: the process answers."""

    status: Literal["ok"]
    version: str


class Readiness(msgspec.Struct, frozen=True):
    """GET /readyz: the database answers."""

    status: Literal["ready"]
