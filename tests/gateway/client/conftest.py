"""Fixtures of the client tests (`served`, the gateway over real HTTP, is in tests/conftest.py)."""

from __future__ import annotations

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
