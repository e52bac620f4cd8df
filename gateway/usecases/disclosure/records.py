"""How disclosures are written down: the JSON records of requests, candidates, payloads and
memories, shared by responses and receipt bodies (records carry no floats; payloads may)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from gateway.core.model import (
    Candidate,
    ConflictSide,
    ContextRequest,
    Exclusion,
    MemoryId,
    OpenConflict,
)
from gateway.core.outcome import Assembly
from gateway.domain.memory import MemoryVersion
from gateway.usecases.receiptlog.recorder import float_text, rfc3339

__all__ = [
    "assembly_members",
    "candidate_record",
    "conflicts_member",
    "conflicts_of_record",
    "context_payload",
    "context_request",
    "exclusion",
    "memory_payload",
    "timeline_entry",
]


def candidate_record(c: Candidate) -> dict[str, Any]:
    record: dict[str, Any] = {
        "memory_id": c.memory_id,
        "content_sha256": c.content_sha256,
        "vector_rank": c.vector_rank,
        "vector_distance": float_text(c.vector_distance),
        "lexical_rank": c.lexical_rank,
        "lexical_score": float_text(c.lexical_score),
    }
    # Only the strongest hits have neighbours looked up; a record without any keeps the form
    # receipts had before the context signal, so their bytes do not change.
    if c.neighbours:
        record["neighbours"] = list(c.neighbours)
    return record


def conflicts_member(conflicts: Sequence[OpenConflict]) -> dict[str, Any]:
    """The receipt member naming the open conflicts a bundle was assembled with (the assembler
    renders them from these values, so a replay reads them back); none when there were none."""
    if not conflicts:
        return {}
    return {
        "conflicts": [
            {
                "claim_key": c.claim_key,
                "sides": [
                    {
                        "memory_id": s.memory_id,
                        "agent_id": s.agent_id,
                        "key_id": s.key_id,
                        "at": rfc3339(s.at),
                    }
                    for s in c.sides
                ],
            }
            for c in conflicts
        ]
    }


def conflicts_of_record(body: dict[str, Any]) -> tuple[OpenConflict, ...]:
    """The open conflicts a receipt (or a session context's memory part) records."""

    def side(record: dict[str, Any]) -> ConflictSide:
        return ConflictSide(
            MemoryId(record["memory_id"]),
            record["agent_id"],
            record["key_id"],
            datetime.fromisoformat(record["at"].replace("Z", "+00:00")),
        )

    return tuple(
        OpenConflict(c["claim_key"], (side(c["sides"][0]), side(c["sides"][1])))
        for c in body.get("conflicts", ())
    )


def exclusion(e: Exclusion) -> dict[str, Any]:
    return {"memory_id": e.memory_id, "reason": e.reason, "detail": e.detail}


def context_request(request: ContextRequest, as_of: datetime | None) -> dict[str, Any]:
    return {
        "as_of": rfc3339(as_of) if as_of else None,
        "task": request.task,
        "namespaces": list(request.namespaces),
        "budget_tokens": request.budget_tokens,
        "top_k": request.top_k,
        "memory_types": list(request.memory_types) if request.memory_types else None,
        "purpose": request.purpose,
        "include_index": request.include_index,
        "index_budget_tokens": request.index_budget_tokens,
        "fill": request.fill,
    }


def assembly_members(assembly: Assembly) -> dict[str, Any]:
    record = assembly.to_record()
    return {
        "included": record["included"],
        "excluded": record["excluded"],
        "index": record["index"],
        "refs": record["refs"],
        # The statistics of the candidates the ranking profile's adaptive priors read: derived
        # from the recorded candidates, recorded so that a replay can be checked against them.
        "ranking_input": record["ranking_input"],
        "budget": {
            "budget_tokens": assembly.budget_tokens,
            "tokens_used": assembly.tokens_used,
            "utilization_bp": assembly.utilization_bp,
            "prefix_bytes": record["prefix_bytes"],
        },
    }


def context_payload(assembly: Assembly) -> dict[str, Any]:
    return {
        "bundle": assembly.bundle,
        "bundle_sha256": assembly.bundle_sha256,
        "tokens_used": assembly.tokens_used,
        "budget_tokens": assembly.budget_tokens,
        "utilization": round(assembly.utilization, 4),
        "tokenizer": assembly.tokenizer,
        "ranking_profile": assembly.ranking_profile.to_record(),
        "index": assembly.index.to_record(),
        "included": [
            {
                "memory_id": item.memory_id,
                "content_sha256": item.content_sha256,
                "tokens": item.tokens,
                "score": item.score,
                "signals": item.signals,
                "ref": item.ref,
            }
            for item in assembly.included
        ],
        "excluded": [exclusion(e) for e in assembly.excluded],
        # The per-bundle references in the text (``m3``) and the memories they name.
        "refs": dict(assembly.refs),
    }


def timeline_entry(v: MemoryVersion, decision: dict[str, Any] | None = None) -> dict[str, Any]:
    """A version's history; `decision`: the supersession that retired it (rule, score, …)."""
    return {
        "memory_id": v.memory_id,
        "namespace": v.namespace,
        "memory_type": v.memory_type,
        "created_at": rfc3339(v.created_at),
        "supersedes": v.supersedes,
        "superseded_by": v.superseded_by,
        "deleted_at": rfc3339(v.deleted_at) if v.deleted_at else None,
        "deleted_reason": v.deleted_reason,
        "expires_at": rfc3339(v.expires_at) if v.expires_at else None,
        "valid_from": rfc3339(v.valid_from) if v.valid_from else None,
        "extractor": v.extractor,
        "sources": list(v.sources),
        "supersession": decision,
    }


def memory_payload(v: MemoryVersion, heading: str, content: str) -> dict[str, Any]:
    return {
        "memory_id": v.memory_id,
        "namespace": v.namespace,
        "memory_type": v.memory_type,
        "heading": heading,
        "content": content,
        "confidence": v.confidence,
        "labels": list(v.labels),
        "source_type": v.source_type,
        "source_ref": v.source_ref,
        "claim_key": v.claim_key,
        "supersedes": v.supersedes,
        "superseded_by": v.superseded_by,
        "agent_id": v.agent_id,
        "created_at": rfc3339(v.created_at),
        "expires_at": rfc3339(v.expires_at) if v.expires_at else None,
        "content_sha256": v.content_sha256,
        "tokens": v.tokens,
        "heading_tokens": v.heading_tokens,
        "embedding_model": v.embedding_model,
    }
