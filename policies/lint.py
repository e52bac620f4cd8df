"""The front door: `lint` reports every finding, `load_bundle` returns a usable bundle or raises.

    source ─▶ loader (YAML events → positioned nodes, YAML-level checks)
           ─▶ lint_rules / lint_conditions (schema, types, operators, limits)
           ─▶ Bundle (rules compiled) ─▶ canonical bytes and digest

Everything runs in time bounded by the input limits: size (`MAX_SOURCE_BYTES`), YAML depth
and node count, rule count (`MAX_RULES`), condition depth and size, pattern length.
"""

from __future__ import annotations

from dataclasses import dataclass

from policies.digest import canonical_bytes, digest_of
from policies.issues import IssueLog, LintIssue, PolicyLintError
from policies.lint_rules import build_bundle
from policies.loader import parse_yaml
from policies.model import Bundle

__all__ = ["LoadedBundle", "lint", "load_bundle"]


@dataclass(frozen=True, slots=True)
class LoadedBundle:
    """A bundle that passed lint, with what is needed to store and cite it."""

    bundle: Bundle
    digest: str
    canonical: bytes
    source: str
    warnings: tuple[LintIssue, ...]


def lint(source: str | bytes, filename: str = "<policy>") -> tuple[LintIssue, ...]:
    """Every finding in `source`, errors and warnings, sorted by position. Never raises."""
    _, log = _build(source, filename)
    return log.issues()


def load_bundle(source: str | bytes, filename: str = "<policy>") -> LoadedBundle:
    """Parse, lint and compile a bundle. Raises PolicyLintError listing every finding."""
    bundle, log = _build(source, filename)
    if bundle is None or log.has_errors:
        raise PolicyLintError(log.issues())
    canonical = canonical_bytes(bundle)
    text = source if isinstance(source, str) else source.decode("utf-8")
    return LoadedBundle(
        bundle=bundle,
        digest=digest_of(canonical),
        canonical=canonical,
        source=text.removeprefix("\ufeff"),
        warnings=log.issues(),
    )


def _build(source: str | bytes, filename: str) -> tuple[Bundle | None, IssueLog]:
    log = IssueLog(filename)
    root = parse_yaml(source, log)
    if root is None:
        return None, log
    return build_bundle(root, log), log
