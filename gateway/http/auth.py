"""The runtime dependency handlers receive; the unit of work itself is a use case's
(`gateway.usecases.access.work`)."""

from __future__ import annotations

from litestar.di import NamedDependency
from litestar.params import SkipValidation

from gateway.shell.runtime import Runtime

__all__ = ["RuntimeDep"]

# The runtime is ours, not client input: skip the signature model, which cannot (and need not)
# describe it.
RuntimeDep = NamedDependency[SkipValidation[Runtime]]
