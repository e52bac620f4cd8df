"""Spies that cannot go quietly blind.

A spy set on one module attribute sees only the calls made through that attribute. Code that
took the function under its own name (`from gateway.store.log_tree import leaves`), or a
package that re-exports it, holds the real function, and a test asserting "never called" would
pass for the wrong reason. `spy_on` replaces the function wherever a module holds it, and
refuses to spy when it is held where it cannot be replaced (a class attribute, a default
argument). Tests still pair each "never called" with a count of a call that must happen.
"""

from __future__ import annotations

import sys
from types import ModuleType
from typing import Any

import pytest

__all__ = ["spy_on"]


def _held(
    function: object, packages: tuple[str, ...]
) -> tuple[list[tuple[ModuleType, str]], list[str]]:
    """Where modules of `packages` hold `function`: (module, global name) pairs, which can be
    replaced, and the places that cannot (class attributes, default arguments)."""
    globals_: list[tuple[ModuleType, str]] = []
    fixed: list[str] = []
    for name, module in sorted(sys.modules.items()):
        if not name.startswith(packages):
            continue
        for attribute, value in list(vars(module).items()):
            if value is function:
                globals_.append((module, attribute))
            elif isinstance(value, type) and value.__module__ == name:
                fixed += [
                    f"{name}.{attribute}.{k}" for k, v in vars(value).items() if v is function
                ]
            elif callable(value) and getattr(value, "__module__", None) == name:
                defaults = (
                    *(getattr(value, "__defaults__", None) or ()),
                    *(getattr(value, "__kwdefaults__", None) or {}).values(),
                )
                if any(d is function for d in defaults):
                    fixed.append(f"{name}.{attribute} (a default argument)")
    return globals_, fixed


def spy_on(
    patch: pytest.MonkeyPatch,
    module: ModuleType,
    name: str,
    replacement: Any,
    *,
    packages: tuple[str, ...] = ("gateway", "receipts", "policies"),
) -> None:
    """Replace the function `module.name` with `replacement` everywhere a module of `packages`
    holds it by name; fail if one holds it where it cannot be replaced."""
    globals_, fixed = _held(getattr(module, name), packages)
    assert not fixed, (
        f"{module.__name__}.{name} is also held by {', '.join(fixed)}: a spy would not see "
        "calls made through those"
    )
    for holder, attribute in globals_:
        patch.setattr(holder, attribute, replacement)
