"""How a bundle is written down: the typed members of its receipt (`gateway.responses.
receipt_bodies`: no floats) and its response (which may carry floats, and says what need to
know lets it: `gateway.usecases.access.need_to_know`), built from the core's values, and the
core's values read back from a receipt's members for replay."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from msgspec import UNSET, UnsetType

from gateway.core.instants import rfc3339
from gateway.core.model import (
    Candidate,
    ConflictSide,
    ContextRequest,
    Exclusion,
    MemoryId,
    OpenConflict,
)
from gateway.core.outcome import Assembly
from gateway.core.preparation import Found
from gateway.responses.disclosures import (
    ContextBundle,
    Excluded,
    IncludedMemory,
    IndexReport,
    RankingProfileRef,
)
from gateway.responses.receipt_parts import (
    BudgetRecord,
    BundleMembers,
    CandidateRecord,
    ConflictRecord,
    ConflictSideRecord,
    ContextRequestRecord,
    EarlierValueRecord,
    ExclusionRecord,
    IncludedRecord,
    IndexInput,
    IndexRecord,
    RankingInputRecord,
)
from gateway.responses.sessions import MemoryPart
from gateway.usecases.access.need_to_know import Told

__all__ = [
    "bundle_members",
    "candidate_record",
    "conflicts_of",
    "context_bundle",
    "context_request",
    "excluded",
    "exclusion_record",
    "float_text",
    "memory_part",
    "request_of",
]


def float_text(value: float | None) -> str | None:
    """A float as the shortest decimal that reads back to the same float (Python's repr); receipt
    bodies carry no JSON floats, and replay needs the exact value back."""
    return None if value is None else repr(float(value))


def candidate_record(c: Candidate) -> CandidateRecord:
    return CandidateRecord(
        memory_id=c.memory_id,
        content_sha256=c.content_sha256,
        vector_rank=c.vector_rank,
        vector_distance=float_text(c.vector_distance),
        lexical_rank=c.lexical_rank,
        lexical_score=float_text(c.lexical_score),
        # Only the strongest hits have neighbours looked up; a record without any keeps the
        # form receipts had before the context signal, so their bytes do not change.
        neighbours=list(c.neighbours) if c.neighbours else UNSET,
    )


def _conflict_records(conflicts: Sequence[OpenConflict]) -> list[ConflictRecord] | UnsetType:
    """The open conflicts a bundle was assembled with (the assembler renders them from these
    values, so a replay reads them back); absent when there were none."""
    if not conflicts:
        return UNSET
    return [
        ConflictRecord(
            claim_key=c.claim_key,
            sides=[
                ConflictSideRecord(
                    memory_id=s.memory_id, agent_id=s.agent_id, key_id=s.key_id, at=rfc3339(s.at)
                )
                for s in c.sides
            ],
        )
        for c in conflicts
    ]


def conflicts_of(records: list[ConflictRecord] | UnsetType) -> tuple[OpenConflict, ...]:
    """The open conflicts a receipt (or a session context's memory part) records."""

    def side(record: ConflictSideRecord) -> ConflictSide:
        at = datetime.fromisoformat(record.at.replace("Z", "+00:00"))
        return ConflictSide(MemoryId(record.memory_id), record.agent_id, record.key_id, at)

    if isinstance(records, UnsetType):
        return ()
    return tuple(OpenConflict(c.claim_key, (side(c.sides[0]), side(c.sides[1]))) for c in records)


def excluded(e: Exclusion) -> Excluded:
    """An exclusion as a response names it."""
    return Excluded(e.memory_id, e.reason, e.detail)


def exclusion_record(e: Exclusion, *, extra: bool = False) -> ExclusionRecord:
    """An exclusion as a receipt records it; a bundle's names what decided it (`extra`), the
    list disclosures' never did."""
    kept = {k: e.extra[k] for k in sorted(e.extra)} if extra and e.extra else UNSET
    return ExclusionRecord(memory_id=e.memory_id, reason=e.reason, detail=e.detail, extra=kept)


def context_request(request: ContextRequest, as_of: datetime | None) -> ContextRequestRecord:
    return ContextRequestRecord(
        as_of=rfc3339(as_of) if as_of else None,
        task=request.task,
        namespaces=list(request.namespaces),
        budget_tokens=request.budget_tokens,
        top_k=request.top_k,
        memory_types=list(request.memory_types) if request.memory_types else None,
        purpose=request.purpose,
        include_index=request.include_index,
        index_budget_tokens=request.index_budget_tokens,
        fill=request.fill,
    )


def request_of(r: ContextRequestRecord) -> ContextRequest:
    """The context request a receipt records (`context_request` read back)."""
    return ContextRequest(
        task=r.task,
        namespaces=tuple(r.namespaces),
        budget_tokens=r.budget_tokens,
        top_k=r.top_k,
        memory_types=tuple(r.memory_types) if r.memory_types else None,  # type: ignore[arg-type]
        purpose=r.purpose,
        include_index=r.include_index,
        index_budget_tokens=r.index_budget_tokens,
        fill="stop" if r.fill == "stop" else "skip",
    )


def bundle_members(
    request: ContextRequest, as_of: datetime | None, found: Found, assembly: Assembly
) -> BundleMembers:
    """A bundle's account in its receipt: the request (at `as_of`, an auditor's), every
    candidate with its raw signals, the index it was offered, and what became of each."""
    return BundleMembers(
        request=context_request(request, as_of),
        candidates=sorted(
            (candidate_record(c) for c in found.candidates), key=lambda r: r.memory_id
        ),
        index_input=IndexInput(
            ids=[c.memory_id for c in found.index_entries], total_live=found.total_live
        ),
        included=[
            IncludedRecord(
                memory_id=item.memory_id,
                content_sha256=item.content_sha256,
                tokens=item.tokens,
                score_micros=item.score_micros,
                signals_micros={k: item.signal_micros[k] for k in sorted(item.signal_micros)},
                rewritten=item.rewritten,
                ref=item.ref,
            )
            for item in assembly.included
        ],
        excluded=[exclusion_record(e, extra=True) for e in assembly.excluded],
        index=IndexRecord(
            entries=list(assembly.index.entries),
            shown=assembly.index.shown,
            total_live=assembly.index.total_live,
            tokens=assembly.index.tokens,
            count_withheld=assembly.index.count_withheld,
        ),
        refs=dict(assembly.refs),
        # The statistics of the candidates the ranking profile's adaptive priors read: derived
        # from the recorded candidates, recorded so that a replay can be checked against them.
        ranking_input=ranking_input(assembly),
        budget=BudgetRecord(
            budget_tokens=assembly.budget_tokens,
            tokens_used=assembly.tokens_used,
            utilization_bp=assembly.utilization_bp,
            prefix_bytes=len(assembly.prefix.encode("utf-8")),
        ),
        conflicts=_conflict_records(found.conflicts),
        earlier_values=_earlier_records(assembly),
    )


def _earlier_records(assembly: Assembly) -> list[EarlierValueRecord] | UnsetType:
    """The decisions that left out a memory stating an earlier value of a claim another states
    newer (replay makes them again from the same candidates); absent when there were none."""
    if not assembly.earlier:
        return UNSET
    return [
        EarlierValueRecord(
            rule=d.rule,
            current=d.current,
            earlier=d.earlier,
            claim_key=d.claim_key,
            score=str(float_text(d.score)),
        )
        for d in assembly.earlier
    ]


def ranking_input(assembly: Assembly) -> RankingInputRecord:
    newest = assembly.ranking_input.newest_created_at
    return RankingInputRecord(
        median_tokens=assembly.ranking_input.median_tokens,
        newest_created_at=None if newest is None else rfc3339(newest),
    )


def context_bundle(assembly: Assembly, told: Told, receipt_id: str) -> ContextBundle:
    """The response for a bundle receipted as `receipt_id`, saying what `told` may."""
    return ContextBundle(
        bundle=assembly.bundle,
        bundle_sha256=assembly.bundle_sha256,
        tokens_used=assembly.tokens_used,
        budget_tokens=assembly.budget_tokens,
        utilization=round(assembly.utilization, 4),
        tokenizer=assembly.tokenizer,
        ranking_profile=RankingProfileRef(
            assembly.ranking_profile.version, assembly.ranking_profile.digest
        ),
        index=_index_report(assembly, told.total_live_hidden),
        included=_included_memories(assembly),
        excluded=told.excluded,
        # The per-bundle references in the text (``m3``) and the memories they name.
        refs=dict(assembly.refs),
        policy=told.policy,
        receipt_id=receipt_id,
    )


def memory_part(assembly: Assembly, told: Told) -> MemoryPart:
    """A session context's memory part: the bundle shown beside the conversation, saying what
    `told` may (its policy report is the session context's)."""
    return MemoryPart(
        included=_included_memories(assembly),
        excluded=told.excluded,
        index=_index_report(assembly, told.total_live_hidden),
        tokens=assembly.tokens_used,
    )


def _included_memories(assembly: Assembly) -> list[IncludedMemory]:
    """The memories in full as a response names them (scores and signals as floats)."""
    return [
        IncludedMemory(
            memory_id=item.memory_id,
            content_sha256=item.content_sha256,
            tokens=item.tokens,
            score=item.score,
            signals=item.signals,
            ref=item.ref,
        )
        for item in assembly.included
    ]


def _index_report(assembly: Assembly, total_live_hidden: bool) -> IndexReport:
    index = assembly.index
    return IndexReport(
        entries=list(index.entries),
        shown=index.shown,
        total_live=None if total_live_hidden else index.total_live,
        tokens=index.tokens,
        count_withheld=index.count_withheld,
    )
