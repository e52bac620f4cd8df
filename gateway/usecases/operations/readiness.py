"""Readiness: whether this process can serve requests, that is, whether its database answers
and takes receipts (a disclosure that cannot be receipted is refused, so it could not serve)."""

from __future__ import annotations

import logging

from gateway.domain.errors import UnavailableError
from gateway.responses.health import Readiness
from gateway.store.errors import DatabaseUnavailableError, ReceiptWriteError
from gateway.store.pool import Pool
from gateway.store.transactions import ping

__all__ = ["readiness"]

_log = logging.getLogger(__name__)


async def readiness(pool: Pool) -> Readiness:
    """Ready, or 503 `not_ready`; the driver's words go to the log, not to the caller."""
    try:
        await ping(pool)
    except DatabaseUnavailableError as exc:
        _log.warning("not ready: %s", exc.detail)
        raise UnavailableError("the database does not answer", code="not_ready") from exc
    except ReceiptWriteError as exc:
        _log.warning("not ready: %s", exc.detail)
        raise UnavailableError("receipts cannot be written", code="not_ready") from exc
    return Readiness(status="ready")
