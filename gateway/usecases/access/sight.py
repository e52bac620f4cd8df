"""What a key may see of a memory or a session outside a disclosure (need to know, §14).

A disclosure judges what it shows through its own admission (`gateway.usecases.disclosure.
pipeline`). Everything else that would name a memory or a session to a caller, or act on one
for it, asks here first: a write that retires a memory, a conflict listed or resolved, a
session read, appended to or stepped. What its key's namespaces exclude, or the policy in force
denies it, is hidden from it, and the caller is answered exactly as for an unknown id.

The policy judges each item as a disclosure would (`memory_view`, or an item's own view: a
session's), by its admission rules. Its request stage does not apply: nothing is disclosed
here for a `require` rule to refuse, and a write declares no purpose, so a bundle requiring
one would otherwise hide every memory from every writer. A rule that reads a request field the
caller did not give (a purpose) still fails closed, as it does everywhere. Auditors and admins
see whatever their namespaces hold (their answers are never narrowed, §14); so does every key
while the policy in force can neither deny nor redact (`may_deny`, `may_rewrite`), and then
nothing is judged at all.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from gateway.domain.memory import MemoryVersion
from gateway.domain.principal import ALL_NAMESPACES, Principal
from gateway.store import memories as memory_store
from gateway.store.database import Connection
from gateway.usecases.access.policy import (
    PolicyRegistry,
    may_deny,
    may_rewrite,
    memory_view,
    request_view,
    verdict_of,
)
from policies import Judgement, RequestJudgement, judge_request

__all__ = ["Sight", "sight_of"]


@dataclass(frozen=True, slots=True)
class Sight:
    """Whom the answers are for, and the policy's admission bound to their request (None when
    it denies them nothing)."""

    principal: Principal
    judging: RequestJudgement | None = None

    @property
    def judges(self) -> bool:
        """Whether the policy may hide or rewrite anything for this caller."""
        return self.judging is not None

    def judge(self, views: Sequence[Mapping[str, object]]) -> Judgement | None:
        """The policy's judgement of `views` (for the redacted texts of what is then shown);
        None when it judges nothing for this caller."""
        return None if self.judging is None or not views else self.judging.judge(views)

    def denied(self, views: Sequence[Mapping[str, object]]) -> frozenset[str]:
        """The ids of `views` (items as the policy judges them) the policy denies."""
        judgement = self.judge(views)
        return frozenset() if judgement is None else frozenset(verdict_of(judgement).denied)

    def hidden(self, versions: Sequence[MemoryVersion]) -> frozenset[str]:
        """The ids of `versions` hidden from the caller: outside its namespaces, or denied."""
        outside = {v.memory_id for v in versions if not self.principal.may_use(v.namespace)}
        inside = [memory_view(v) for v in versions if v.memory_id not in outside]
        return frozenset(outside) | self.denied(inside)

    async def hidden_ids(self, conn: Connection, ids: Collection[str]) -> frozenset[str]:
        """Of memory `ids` (in the caller's tenant), those hidden from it; an id that names no
        memory is hidden too. The policy's judgement needs the versions: read only when it may
        hide anything (the namespaces of what the callers pass are theirs to check)."""
        if not ids or self.judging is None:
            return frozenset()
        versions = await memory_store.fetch_versions(conn, self.principal.tenant_id, list(ids))
        return frozenset(set(ids) - {v.memory_id for v in versions}) | self.hidden(versions)


async def sight_of(
    conn: Connection,
    policies: PolicyRegistry,
    principal: Principal,
    at: datetime,
    *,
    namespaces: Sequence[str] = (),
    purpose: str | None = None,
) -> Sight:
    """What `principal` may see at `at` under the policy in force, for a request over
    `namespaces` declaring `purpose` (as its request view names them)."""
    if principal.role != "agent":
        return Sight(principal)
    policy = await policies.in_force(conn, principal.tenant_id, at)
    if not (may_deny(policy.bundle) or may_rewrite(policy.bundle)):
        return Sight(principal)
    admission = dataclasses.replace(
        policy.bundle, rules=tuple(r for r in policy.bundle.rules if r.stage != "request")
    )
    view = request_view(
        principal,
        purpose=purpose,
        namespaces=namespaces or (ALL_NAMESPACES,),
        budget_tokens=None,
    )
    return Sight(principal, judge_request(admission, view, at))
