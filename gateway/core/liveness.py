"""Which memory versions were live at a pinned instant.

A version is dead at ``now`` when it was erased (at any time: nothing of it is left to show), when
it was deleted or superseded at or before ``now``, or when it expired at or before ``now``. Deletion is checked first, so a version that was both superseded and
expired is reported as superseded (the more useful fact: a newer version exists). Dead versions are
still candidates so that the receipt can say why they are absent; they never reach a bundle.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from gateway.core.instants import rfc3339
from gateway.core.model import Candidate, Exclusion

__all__ = ["LivenessSplit", "dead_reason", "split_live"]


@dataclass(frozen=True, slots=True)
class LivenessSplit:
    """Candidates in their input order: the live ones, and an exclusion for each dead one."""

    live: tuple[Candidate, ...]
    dead: tuple[Exclusion, ...]


def dead_reason(candidate: Candidate, now: datetime) -> Exclusion | None:
    """The exclusion that keeps ``candidate`` out of a bundle assembled at ``now``, if any."""
    if candidate.erased_at is not None:
        return Exclusion(
            candidate.memory_id, "deleted", f"erased at {rfc3339(candidate.erased_at)}"
        )
    deleted_at = candidate.deleted_at
    if deleted_at is not None and deleted_at <= now:
        if candidate.superseded_by is not None:
            detail = f"superseded by {candidate.superseded_by} at {rfc3339(deleted_at)}"
            if candidate.superseded_decision is not None:
                detail += f" (decision {candidate.superseded_decision})"
            return Exclusion(candidate.memory_id, "superseded", detail)
        return Exclusion(candidate.memory_id, "deleted", f"deleted at {rfc3339(deleted_at)}")
    expires_at = candidate.expires_at
    if expires_at is not None and expires_at <= now:
        return Exclusion(candidate.memory_id, "expired", f"expired at {rfc3339(expires_at)}")
    return None


def split_live(candidates: Sequence[Candidate], now: datetime) -> LivenessSplit:
    """Split ``candidates`` at ``now``, keeping the input order on both sides."""
    live: list[Candidate] = []
    dead: list[Exclusion] = []
    for candidate in candidates:
        exclusion = dead_reason(candidate, now)
        if exclusion is None:
            live.append(candidate)
        else:
            dead.append(exclusion)
    return LivenessSplit(live=tuple(live), dead=tuple(dead))
