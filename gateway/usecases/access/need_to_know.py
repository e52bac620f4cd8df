"""Need to know (ARCHITECTURE §14): what an agent's disclosure response may say.

The receipt is the auditor's ledger and keeps everything: every candidate, every exclusion with
its rule, every decision with its evidence. An agent's response says only what concerns what
it received: memories the policy denied or capped are not named to it (no id, no rule, no
evidence such as a label value or the field that matched), and no decision about them is
carried. Asked for such a memory by id (fetch, timeline), the agent is told it is missing, as
it would be for a memory of another tenant. Whether it learns how many were withheld is the
bundle's `withheld_count` (default `hidden`); with the count hidden and a bundle that can
withhold, the index's live total (which would count them) is not stated either.

The same holds of memories that are no longer live: a superseded, deleted or expired version
the policy would deny (`Account.unseen`) is not named to the agent either (asked for by id, it
is missing), and where the policy can withhold at all, an exclusion's detail names a newer
version only when the response names that version too, as received or excluded: otherwise
the superseded exclusion says when, not by what.

Auditors and admins see the whole account, and a replay (an auditor's) is never narrowed. This
runs after the receipt is written, on the response alone: the receipt bytes do not change.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

import msgspec

from gateway.domain.principal import Principal
from gateway.responses.disclosures import Excluded, PolicyReport
from gateway.responses.receipt_parts import PolicyRecord
from gateway.usecases.access.policy import PolicyInForce, may_deny
from policies import Bundle

__all__ = ["POLICY_WITHHELD", "Account", "Told", "account_for", "may_withhold"]

# The exclusion reasons that speak of the policy's judgement of a memory (ARCHITECTURE §5).
POLICY_WITHHELD = frozenset({"policy_denied", "policy_capped"})


def may_withhold(bundle: Bundle) -> bool:
    """Whether the bundle can withhold memories from an agent at all (an enforced deny or cap);
    judged from its shape, so acting on it says nothing about the data."""
    return may_deny(bundle) or any(
        rule.effect == "cap" and bundle.effective_mode(rule) == "enforce" for rule in bundle.rules
    )


@dataclass(frozen=True, slots=True)
class Account:
    """What a disclosure's response would say about what was left out, before narrowing:
    `received` every memory id the response delivers, `missing` the ids asked for and not found
    (when the disclosure is by id) out of those `requested`."""

    received: Collection[str]
    missing: Sequence[str] | None = None
    requested: Sequence[str] = ()
    # Memories no longer live that the policy would deny: named as the denied ones are.
    unseen: Collection[str] = frozenset()


@dataclass(frozen=True, slots=True)
class Told:
    """What the response may say: the policy's report, the exclusions, the ids missing (when
    the disclosure is by id), and whether the index's live total must go unstated."""

    policy: PolicyReport
    excluded: list[Excluded]
    missing: list[str] | None
    total_live_hidden: bool


def account_for(
    principal: Principal,
    policy: PolicyInForce,
    record: PolicyRecord,
    excluded: Sequence[Excluded],
    account: Account,
) -> Told:
    """The response's account of what was left out, as `principal` may read it."""
    withheld = [e for e in excluded if e.reason in POLICY_WITHHELD]
    whole = msgspec.structs.asdict(record)
    if principal.role != "agent":
        missing = None if account.missing is None else list(account.missing)
        return Told(PolicyReport(**whole, withheld=len(withheld)), list(excluded), missing, False)
    told = policy.bundle.withheld_count == "shown"
    # A capped memory may still be listed by heading in a bundle's index: the agent received
    # that line, but not the decision that kept the rest from it.
    received = set(account.received) - {e.memory_id for e in withheld}
    report = PolicyReport(
        **{
            **whole,
            "decisions": [
                d for d in record.decisions if d.memory_id is None or d.memory_id in received
            ],
            "outcomes": [o for o in record.outcomes if o.memory_id in received],
        },
        withheld=len(withheld) if told else None,
    )
    unseen = set(account.unseen)
    missing = None
    if account.missing is not None:
        hidden = {e.memory_id for e in withheld} | unseen | set(account.missing)
        missing = [i for i in dict.fromkeys(account.requested) if i in hidden]
    shown = [e for e in excluded if e.reason not in POLICY_WITHHELD and e.memory_id not in unseen]
    withholds = may_withhold(policy.bundle)
    if withholds:
        named = {*received, *(e.memory_id for e in shown)}
        shown = [_unnamed_successor(e, named) for e in shown]
    return Told(report, shown, missing, not told and withholds)


# How `gateway.core.liveness.dead_reason` details a superseded version.
_SUPERSEDED_BY = "superseded by "


def _unnamed_successor(exclusion: Excluded, named: Collection[str]) -> Excluded:
    """`exclusion`, its detail naming no newer version that the response does not name (it may
    be one the policy denies): "superseded at <instant>" instead of "superseded by <id> at …"."""
    if exclusion.reason != "superseded" or not exclusion.detail.startswith(_SUPERSEDED_BY):
        return exclusion
    successor, _, rest = exclusion.detail.removeprefix(_SUPERSEDED_BY).partition(" ")
    if successor in named:
        return exclusion
    return Excluded(exclusion.memory_id, exclusion.reason, f"superseded {rest}")
