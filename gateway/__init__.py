"""ctxgw: the auditable context gateway service."""

# The distribution's one version: hatch reads it at build time (pyproject.toml, [tool.hatch.version]).
__version__ = "0.1.0"
