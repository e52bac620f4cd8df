"""The pure core has one error root: every error class it defines is a `CoreError`."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import gateway.core
from gateway.core.errors import CoreError


def test_every_error_the_core_defines_is_a_core_error() -> None:
    found = {
        cls
        for info in pkgutil.walk_packages(gateway.core.__path__, "gateway.core.")
        for _, cls in inspect.getmembers(importlib.import_module(info.name), inspect.isclass)
        if issubclass(cls, BaseException) and cls.__module__.startswith("gateway.core")
    }
    assert len(found) >= 6  # the root and the five it gathers
    assert all(issubclass(cls, CoreError) for cls in found), sorted(map(str, found))
