"""The bundles shipped inside the package, read with importlib.resources so they load installed."""

from __future__ import annotations

from importlib import resources

from policies.lint import LoadedBundle, load_bundle

__all__ = ["SHIPPED", "default_bundle", "shipped_bundle"]

SHIPPED = ("default", "strict")


def shipped_bundle(name: str) -> LoadedBundle:
    """A shipped bundle by name (`default` or `strict`); raises PolicyLintError if it is broken."""
    if name not in SHIPPED:
        raise ValueError(f"no shipped bundle named {name!r}; choose from {', '.join(SHIPPED)}")
    source = resources.files("policies").joinpath("bundles", f"{name}.yaml").read_text("utf-8")
    return load_bundle(source, f"policies/bundles/{name}.yaml")


def default_bundle() -> LoadedBundle:
    """The bundle that applies when a tenant has activated none: allow by default, PII redaction
    recorded in log_only."""
    return shipped_bundle("default")
