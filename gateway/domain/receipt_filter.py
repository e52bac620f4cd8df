"""Which receipts an auditor asks for: the filter of a listing or an export, parsed at the edge
and applied by the store (ARCHITECTURE §5, GET /v1/receipts)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

__all__ = ["ReceiptFilter"]


@dataclass(frozen=True, slots=True)
class ReceiptFilter:
    agent_id: str | None = None
    kind: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    memory_id: str | None = None
    policy_digest: str | None = None
    after_seq: int = 0  # the cursor: receipts after this position in the log
    limit: int = 100
    # The console reads the log backwards, newest first; its cursor is then the position the
    # next page starts below (None: from the head).
    newest_first: bool = False
    before_seq: int | None = None
