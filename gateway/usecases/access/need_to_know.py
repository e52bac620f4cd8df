"""Need to know (ARCHITECTURE §14): what an agent's disclosure response may say.

The receipt is the auditor's ledger and keeps everything: every candidate, every exclusion with
its rule, every decision with its evidence. An agent's response says only what concerns what
it received: memories the policy denied or capped are not named to it (no id, no rule, no
evidence such as a label value or the field that matched), and no decision about them is
carried. Asked for such a memory by id (fetch, timeline), the agent is told it is missing, as
it would be for a memory of another tenant. Whether it learns how many were withheld is the
bundle's `withheld_count` (default `hidden`); with the count hidden and a bundle that can
withhold, the index's live total (which would count them) is not stated either.

Auditors and admins see the whole account, and a replay (an auditor's) is never narrowed. This
runs after the receipt is written, on the response alone: the receipt bytes do not change.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gateway.domain.principal import Principal
from gateway.usecases.access.policy import PolicyInForce, may_deny
from policies import Bundle

__all__ = ["POLICY_WITHHELD", "Account", "account_for", "may_withhold"]

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
    """A disclosure's response members about what was left out and why, before narrowing:
    `excluded` are exclusion records (memory_id, reason, detail) under the response's own key
    (`excluded`, or `withheld` for fetch), `missing` the ids asked for and not found (when the
    disclosure is by id), `received` every memory id the response delivers."""

    excluded_key: str
    received: Collection[str]
    missing: Sequence[str] | None = None
    requested: Sequence[str] = ()


def account_for(
    principal: Principal,
    policy: PolicyInForce,
    policy_record: Mapping[str, Any],
    payload: Mapping[str, Any],
    account: Account,
) -> dict[str, Any]:
    """The response payload as `principal` may read it, with its `policy` member."""
    excluded: list[dict[str, Any]] = list(payload[account.excluded_key])
    withheld = [e for e in excluded if e["reason"] in POLICY_WITHHELD]
    if principal.role != "agent":
        return {**payload, "policy": {**policy_record, "withheld": len(withheld)}}
    told = policy.bundle.withheld_count == "shown"
    # A capped memory may still be listed by heading in a bundle's index: the agent received
    # that line, but not the decision that kept the rest from it.
    received = set(account.received) - {e["memory_id"] for e in withheld}
    narrowed: dict[str, Any] = {
        **payload,
        account.excluded_key: [e for e in excluded if e["reason"] not in POLICY_WITHHELD],
        "policy": {
            **policy_record,
            "decisions": [
                d
                for d in policy_record["decisions"]
                if d["memory_id"] is None or d["memory_id"] in received
            ],
            "outcomes": [o for o in policy_record["outcomes"] if o["memory_id"] in received],
            "withheld": len(withheld) if told else None,
        },
    }
    if account.missing is not None:
        hidden = {e["memory_id"] for e in withheld} | set(account.missing)
        narrowed["missing"] = [i for i in dict.fromkeys(account.requested) if i in hidden]
    if "index" in payload and not told and may_withhold(policy.bundle):
        narrowed["index"] = {**payload["index"], "total_live": None}
    return narrowed
