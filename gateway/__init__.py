"""ctxgw: the auditable context gateway service."""

__version__ = "0.1.0"
