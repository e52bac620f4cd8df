"""The policy what-if window: a candidate policy against past receipts, without writing any.

For each past bundle (context or replay receipt), the recorded candidates are assembled again
under the candidate, as exact replay would: what would change (bundles, memories newly excluded
or admitted, rule hits), and whether the candidate would refuse the request outright. For each
past refusal, the recorded request stage is judged again: would the candidate let it through?
"""

from __future__ import annotations

from collections.abc import Sequence

from gateway.domain.principal import Principal
from gateway.requests import WhatIfIn
from gateway.responses.disclosures import ReplayProblem
from gateway.responses.policies import WhatIfReceipt, WhatIfReport
from gateway.store import receipts as receipt_store
from gateway.store.database import Connection
from gateway.store.pool import Pool
from gateway.usecases.access.policy import PolicyInForce, context_view, reads_content, request_stage
from gateway.usecases.access.work import unit_of_work
from gateway.usecases.audit.recorded import (
    diff,
    found_of_record,
    makers_of_record,
    read_recorded,
)
from gateway.usecases.audit.replay import Replayer
from gateway.usecases.disclosure.pipeline import Admitted, compose
from gateway.usecases.disclosure.refusal import read_refusal
from gateway.usecases.disclosure.retrieval import without_index_content
from gateway.usecases.receiptlog.kinds import KINDS, REFUSAL, kind_named
from policies import Evaluation

__all__ = ["what_if_report", "what_if_window"]

# The past receipts a candidate policy judges again: bundles (rebuilt from their candidates)
# and refusals (their request stage).
_JUDGED_AGAIN = tuple(k.name for k in KINDS if k.replay_as in ("bundle", "refusal"))


async def what_if_report(
    pool: Pool, replayer: Replayer, authorization: str | None, ask: WhatIfIn
) -> WhatIfReport:
    """A candidate policy (stored digest or inline YAML, exactly one) against the tenant's
    recent bundles and refusals: the last `last` between `since` and `until`. Nothing is
    written."""
    async with unit_of_work(pool, authorization) as (conn, principal):
        principal.require_role("admin", "auditor")
        policy = await replayer.candidate_policy(
            conn, principal.tenant_id, ask.policy_digest, ask.policy_yaml
        )
        rows = await receipt_store.recent_receipts(
            conn,
            principal.tenant_id,
            _JUDGED_AGAIN,
            since=ask.since,
            until=ask.until,
            limit=ask.last,
        )
        return await what_if_window(conn, principal, rows, policy)


async def what_if_window(
    conn: Connection,
    principal: Principal,
    rows: Sequence[receipt_store.ReceiptRow],
    policy: PolicyInForce,
) -> WhatIfReport:
    """A candidate policy against past receipts: for bundles (their recorded candidates), what
    would change, including requests it would refuse; for refusals, which it would let through."""
    principal.require_role("admin", "auditor")
    changed = refused = lifted = refusals = 0
    rule_hits: dict[str, int] = {}
    newly_excluded: dict[str, int] = {}
    newly_admitted: dict[str, int] = {}
    per_receipt: list[WhatIfReceipt] = []
    evaluated = 0
    for row in rows:
        rebuilt = kind_named(row.kind).replay_as
        if rebuilt == "refusal":
            # A refused request, judged again: would the candidate let it through?
            refusal = read_refusal(row, "what_if")
            judged = request_stage(policy, refusal.view, refusal.at).evaluation()
            refusals += 1
            lifted += judged.refused is None
            _count_hits(judged, rule_hits)
            if len(per_receipt) < 200:
                per_receipt.append(
                    WhatIfReceipt(
                        receipt_id=refusal.receipt_id,
                        kind=REFUSAL.name,
                        refused_by=None if judged.refused is None else judged.refused.rule_id,
                    )
                )
            continue
        if rebuilt != "bundle":
            continue
        recorded = read_recorded(row)
        inputs, problems = await found_of_record(conn, row.tenant_id, recorded.body)
        if not reads_content(policy.bundle):
            inputs = without_index_content(inputs)  # as a live request under it would gather
        view = context_view(recorded.subject, recorded.request)
        admitted = Admitted(policy, request_stage(policy, view, recorded.at))
        composed = compose(
            recorded.request,
            inputs,
            admitted,
            makers_of_record(recorded.receipt_id, recorded.body.assembler),
            at=recorded.at,
        )
        assembly, evaluation = composed.assembly, composed.evaluation
        evaluated += 1
        refused += evaluation.refused is not None
        _count_hits(evaluation, rule_hits)
        found = diff(recorded, assembly, evaluation)
        is_changed = assembly.bundle_sha256 != recorded.header.bundle.sha256
        changed += is_changed
        for memory_id in found.removed:
            newly_excluded[memory_id] = newly_excluded.get(memory_id, 0) + 1
        for memory_id in found.added:
            newly_admitted[memory_id] = newly_admitted.get(memory_id, 0) + 1
        if len(per_receipt) < 200:
            per_receipt.append(
                WhatIfReceipt(
                    receipt_id=recorded.receipt_id,
                    kind=recorded.kind,
                    refused_by=None if evaluation.refused is None else evaluation.refused.rule_id,
                    changed=bool(is_changed),
                    added=list(found.added),
                    removed=list(found.removed),
                    problems=[ReplayProblem(p.code, p.memory_id, p.detail) for p in problems],
                )
            )
    return WhatIfReport(
        policy_digest=policy.digest,
        receipts_evaluated=evaluated,
        bundles_changed=changed,
        requests_refused=refused,
        refusals_evaluated=refusals,
        refusals_lifted=lifted,
        rule_hits=dict(sorted(rule_hits.items())),
        newly_excluded=dict(sorted(newly_excluded.items())),
        newly_admitted=dict(sorted(newly_admitted.items())),
        receipts=per_receipt,
    )


def _count_hits(evaluation: Evaluation, hits: dict[str, int]) -> None:
    """Count the rules that would change something: any verdict but admit, every redaction and
    every require (met or not, it was judged)."""
    for decision in evaluation.decisions:
        if decision.outcome_if_enforced != "admit" or decision.effect in ("redact", "require"):
            hits[decision.rule_id] = hits.get(decision.rule_id, 0) + 1
