"""A filtered export checked against the whole log: that it left out nothing its filter selects.

A filtered export (an *extract*: the receipts of one agent, one kind, one memory, a time window)
proves each of its lines is in the log, through inclusion proofs, but not that the filter missed
none: the gateway selects by index columns stored beside the signed bodies. `verify_extract`
takes the whole log as well (a complete export), applies the filter to the signed bodies
themselves and requires the extract to hold exactly the receipts that match, up to the extract's
checkpoint: one left out is ``incomplete``, one that does not match is ``malformed``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from receipts.canonical import decode_body
from receipts.errors import IncompleteError, MalformedError
from receipts.export import ExportedReceipt, parse_line
from receipts.keyring import Keyring
from receipts.verify import VerifyReport, verify_export

__all__ = ["ExtractFilter", "verify_extract"]


@dataclass(frozen=True, slots=True)
class ExtractFilter:
    """The filter of GET /v1/receipts/export, judged on a signed body: `since` inclusive,
    `until` exclusive, `memory_id` among the body's `disclosed_ids`."""

    agent_id: str | None = None
    kind: str | None = None
    memory_id: str | None = None
    since: datetime | None = None
    until: datetime | None = None

    def matches(self, body: dict[str, Any]) -> bool:
        subject = body.get("subject") or {}
        issued = datetime.fromisoformat(str(body["issued_at"]).replace("Z", "+00:00"))
        return (
            (self.agent_id is None or subject.get("agent_id") == self.agent_id)
            and (self.kind is None or body.get("kind") == self.kind)
            and (self.memory_id is None or self.memory_id in (body.get("disclosed_ids") or []))
            and (self.since is None or issued >= self.since)
            and (self.until is None or issued < self.until)
        )


def verify_extract(
    extract: Iterable[str], full: Iterable[str], keyring: Keyring, where: ExtractFilter
) -> VerifyReport:
    """Verify both exports (`verify_export`), the full one as a whole log, then the extract's
    receipts against what `where` selects from the full one's bodies; the extract's report."""
    extract_lines, full_lines = list(extract), list(full)
    whole = verify_export(full_lines, keyring)
    if not whole.complete:
        raise IncompleteError("the full export is not a whole log (its root was not recomputed)")
    report = verify_export(extract_lines, keyring, tenant_id=whole.tenant_id)
    size = report.checkpoint.size if report.checkpoint is not None else 0
    if whole.checkpoint is None or whole.checkpoint.size < size:
        raise IncompleteError("the full export is older than the extract's checkpoint")
    selected = {seq for seq, body in _bodies(full_lines) if seq <= size and where.matches(body)}
    held = {seq for seq, _ in _bodies(extract_lines)}
    if selected - held:
        missing = sorted(selected - held)
        raise IncompleteError(
            f"the extract leaves out {len(missing)} receipts its filter selects",
            seq=missing[0],
        )
    if held - selected:
        raise MalformedError(
            "the extract holds receipts its filter does not select", seq=min(held - selected)
        )
    return report


def _bodies(lines: list[str]) -> list[tuple[int, dict[str, Any]]]:
    found = []
    for line in lines:
        if line.strip():
            item = parse_line(line)
            if isinstance(item, ExportedReceipt):
                found.append((item.seq, decode_body(item.envelope.payload)))
    return found
