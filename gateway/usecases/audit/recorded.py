"""What a context (or replay) receipt recorded, read into what the pure core needs again: the
request, the instant, whom the policy judged, the candidates (their versions loaded by id and
checked against the recorded sha256), and the diff of a new assembly against the recorded one.
Shared by replay (`gateway.usecases.audit.replay`), the policy what-if window
(`gateway.usecases.audit.what_if`) and session replay, whose memory part is a bundle's account.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

import msgspec

from gateway.core.instants import rfc3339
from gateway.core.liveness import split_live
from gateway.core.model import Candidate, ContextRequest, candidate_of
from gateway.core.outcome import Assembly
from gateway.core.preparation import Found
from gateway.core.profile import RankingProfile
from gateway.core.ranking import pool_statistics
from gateway.core.versions import ASSEMBLERS, Assembler, UnknownVersionError
from gateway.domain.errors import InvalidRequestError
from gateway.domain.memory import MemoryVersion
from gateway.domain.principal import Principal
from gateway.responses.disclosures import DiffChange, ReplayDiff, ReplayProblem
from gateway.responses.receipt_bodies import ContextBody
from gateway.responses.receipt_parts import (
    AssemblerRecord,
    BundleMembers,
    CandidateRecord,
    RankingInputRecord,
    ReceiptHeader,
)
from gateway.store import memories as memory_store
from gateway.store import receipts as receipt_store
from gateway.store.database import Connection
from gateway.usecases.disclosure.pipeline import Makers
from gateway.usecases.disclosure.records import conflicts_of, ranking_input, request_of
from gateway.usecases.receiptlog.kinds import kind_named
from gateway.usecases.receiptlog.reading import judged_principal, read_receipt
from policies import Evaluation

__all__ = [
    "Recorded",
    "diff",
    "found_of_record",
    "makers_of_record",
    "ranking_input_drift",
    "read_recorded",
]


@dataclass(frozen=True, slots=True)
class Recorded:
    """A context or replay receipt, read into what the core needs."""

    header: ReceiptHeader
    body: ContextBody
    request: ContextRequest
    at: datetime
    subject: Principal  # whom its policy judged

    @property
    def receipt_id(self) -> str:
        return self.header.receipt_id

    @property
    def kind(self) -> str:
        return self.header.kind

    @property
    def included(self) -> list[str]:
        return [item.memory_id for item in self.body.included]


def _parse_time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def read_recorded(row: receipt_store.ReceiptRow) -> Recorded:
    """A receipt of a kind rebuilt as a bundle (`replay_as` "bundle")."""
    kind = kind_named(row.kind)
    if kind.replay_as != "bundle":
        raise InvalidRequestError(
            f"only context bundles can be replayed; receipt {row.receipt_id} is a {kind.label}",
            code="replay_unsupported",
        )
    read = read_receipt(bytes(row.body), kind)
    body: ContextBody = read.body
    request = request_of(body.request)
    # A replay's policy judged the original agent, not the auditor its `subject` names.
    judged = read.header.subject if isinstance(body.judged, msgspec.UnsetType) else body.judged
    subject = judged_principal(read.header, judged, request.namespaces)
    return Recorded(read.header, body, request, _parse_time(body.at), subject)


def makers_of_record(receipt_id: str, record: AssemblerRecord) -> Makers:
    """What made a recorded bundle (assembler, tokenizer, ranking profile, embedder), to build
    it again; a 422 `assembler_unknown` when this gateway does not build its assembler."""
    try:
        assembler = ASSEMBLERS.resolve(record.version)
    except UnknownVersionError as exc:
        raise InvalidRequestError(
            f"receipt {receipt_id} was made by {exc.kind} {exc.version}, which this gateway "
            "does not build: its bundle cannot be rebuilt",
            code="assembler_unknown",
        ) from None
    profile = msgspec.to_builtins(record.ranking_profile)
    del profile["digest"]
    return Makers(
        assembler,
        record.tokenizer,
        RankingProfile.from_canonical(profile),
        record.embedder.model,
        record.embedder.dim,
    )


async def found_of_record(
    conn: Connection, tenant_id: str, record: BundleMembers
) -> tuple[Found, list[ReplayProblem]]:
    """The candidates and index entries a bundle's account lists (a context receipt's body, or
    a session context's memory part), as the versioned store holds them today."""
    signals = {c.memory_id: c for c in record.candidates}
    index_ids = record.index_input.ids
    wanted = sorted(set(signals) | set(index_ids))
    versions = {v.memory_id: v for v in await memory_store.fetch_versions(conn, tenant_id, wanted)}
    problems: list[ReplayProblem] = []
    for memory_id in wanted:
        version = versions.get(memory_id)
        if version is None:
            problems.append(ReplayProblem("version_missing", memory_id, "no such version in the store"))  # fmt: skip
        elif version.erased_at is not None:
            problems.append(
                ReplayProblem("memory_erased", memory_id, f"erased at {rfc3339(version.erased_at)}")
            )
        elif memory_id in signals and version.content_sha256 != signals[memory_id].content_sha256:
            problems.append(
                ReplayProblem(
                    "content_mismatch", memory_id, "stored content differs from the receipt"
                )
            )

    def candidate(memory_id: str, recorded: CandidateRecord | None) -> Candidate:
        fields = {f.name: getattr(versions[memory_id], f.name) for f in _VERSION_FIELDS}
        if recorded is not None:
            fields |= {
                "vector_rank": recorded.vector_rank,
                "vector_distance": _float(recorded.vector_distance),
                "lexical_rank": recorded.lexical_rank,
                "lexical_score": _float(recorded.lexical_score),
                "neighbours": recorded.neighbours or (),
            }
        return candidate_of(fields)

    candidates = tuple(candidate(c, signals[c]) for c in sorted(signals) if c in versions)
    index = tuple(candidate(i, None) for i in index_ids if i in versions)
    found = Found(candidates, index, record.index_input.total_live, conflicts_of(record.conflicts))
    return found, problems


_VERSION_FIELDS = dataclasses.fields(MemoryVersion)


def ranking_input_drift(
    recorded: Recorded, found: Found, assembler: Assembler, rebuilt: Assembly
) -> list[ReplayProblem]:
    """A problem when the statistics the ranking read from the recorded candidates differ from
    the ones the receipt recorded (a version missing or changed since), so that a replay says
    why its order moved. Under an assembler that ranks only what the policy admits, the
    candidates read are those the receipt does not record as denied: a what-if policy that
    denies others moves the statistics of its own ranking, which is no drift of the store."""
    before, after = recorded.body.ranking_input, ranking_input(rebuilt)
    if assembler.rank_admitted:
        denied = {e.memory_id for e in recorded.body.excluded if e.reason == "policy_denied"}
        admitted = [c for c in found.candidates if c.memory_id not in denied]
        statistics = pool_statistics(
            split_live(list({c.memory_id: c for c in admitted}.values()), recorded.at).live
        )
        newest = statistics.newest_created_at
        after = RankingInputRecord(
            median_tokens=statistics.median_tokens,
            newest_created_at=None if newest is None else rfc3339(newest),
        )
    if before == after:
        return []
    return [
        ReplayProblem(
            "ranking_input_changed",
            None,
            f"the candidates' statistics were {msgspec.to_builtins(before)}, rebuilt from the "
            f"store {msgspec.to_builtins(after)}",
        )
    ]


def _float(text: str | None) -> float | None:
    return None if text is None else float(text)


def diff(original: Recorded, replayed: Assembly, evaluation: Evaluation) -> ReplayDiff:
    before = original.included
    after = [item.memory_id for item in replayed.included]
    common = [m for m in before if m in after]
    reordered = common != [m for m in after if m in before]
    old_outcomes = {o.memory_id: o.outcome for o in original.body.policy.outcomes}
    new_outcomes = {o.memory_id: o.outcome for o in evaluation.outcomes}
    old_reasons = {e.memory_id: e.reason for e in original.body.excluded}
    new_reasons: dict[str, str] = {e.memory_id: e.reason for e in replayed.excluded}
    return ReplayDiff(
        added=[m for m in after if m not in before],
        removed=[m for m in before if m not in after],
        reordered=reordered,
        decision_changes=_changes(old_outcomes, new_outcomes),
        exclusion_changes=_changes(old_reasons, new_reasons),
        token_delta=replayed.tokens_used - original.body.budget.tokens_used,
    )


def _changes(before: Mapping[str, str], after: Mapping[str, str]) -> list[DiffChange]:
    return [
        DiffChange(memory_id=m, before=before.get(m), after=after.get(m))
        for m in sorted(set(before) | set(after))
        if before.get(m) != after.get(m)
    ]
