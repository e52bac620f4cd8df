"""Sample memories for the core tests (also imported by a subprocess in the determinism test)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from gateway.core.assembly import assemble
from gateway.core.model import Candidate, ContextRequest, FillMode, MemoryId, MemoryType
from gateway.core.outcome import Assembly
from gateway.core.tokens import load_tokenizer
from gateway.core.versions import ASSEMBLER, DEFAULT_PROFILE, Assembler

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


def memory(
    memory_id: str,
    *,
    heading: str | None = None,
    content: str | None = None,
    memory_type: MemoryType = "semantic",
    confidence: float = 0.8,
    namespace: str = "ops",
    created_days_ago: float = 3.0,
    expires_at: datetime | None = None,
    deleted_at: datetime | None = None,
    superseded_by: str | None = None,
    vector_rank: int | None = None,
    vector_distance: float | None = None,
    lexical_rank: int | None = None,
    lexical_score: float | None = None,
    labels: tuple[str, ...] = (),
) -> Candidate:
    heading = heading if heading is not None else f"Heading of {memory_id}"
    content = content if content is not None else f"Content of {memory_id}."
    tokenizer = load_tokenizer()
    return Candidate(
        memory_id=MemoryId(memory_id),
        namespace=namespace,
        memory_type=memory_type,
        heading=heading,
        content=content,
        confidence=confidence,
        labels=labels,
        source_type=None,
        source_ref=None,
        created_at=NOW - timedelta(days=created_days_ago),
        expires_at=expires_at,
        deleted_at=deleted_at,
        superseded_by=MemoryId(superseded_by) if superseded_by is not None else None,
        content_sha256=hashlib.sha256(content.encode("utf-8")).hexdigest(),
        tokens=tokenizer.count(content),
        heading_tokens=tokenizer.count(heading),
        vector_rank=vector_rank,
        vector_distance=vector_distance,
        lexical_rank=lexical_rank,
        lexical_score=lexical_score,
    )


def request(
    *,
    task: str = "why does the deploy fail?",
    budget_tokens: int = 4000,
    top_k: int | None = 6,
    include_index: bool = True,
    index_budget_tokens: int | None = None,
    fill: FillMode = "skip",
) -> ContextRequest:
    return ContextRequest(
        task=task,
        namespaces=("ops",),
        budget_tokens=budget_tokens,
        top_k=top_k,
        include_index=include_index,
        index_budget_tokens=index_budget_tokens,
        fill=fill,
    )


def retrieved(count: int) -> list[Candidate]:
    """``count`` live retrieval candidates with varied signals, ids in ascending order."""
    return [
        memory(
            f"01JM{n:022d}",
            heading=f"Deploy note {n}",
            content=f"Deploys to staging need the migration flag (note {n}).\n" * (1 + n % 3),
            memory_type=("semantic", "episodic", "procedural", "working")[n % 4],
            confidence=0.5 + (n % 5) / 10,
            created_days_ago=float(n),
            vector_rank=n + 1,
            vector_distance=0.1 + n / 50,
            lexical_rank=(count - n) if n % 2 == 0 else None,
            lexical_score=(0.1 / (count - n)) if n % 2 == 0 else None,
        )
        for n in range(count)
    ]


def index_of(candidates: Sequence[Candidate]) -> list[Candidate]:
    """Index order as the store gives it: confidence desc, then memory_id."""
    return sorted(candidates, key=lambda c: (-c.confidence, c.memory_id))


def sample_assembly(
    budget_tokens: int = 600, *, withhold_count: bool = False, assembler: Assembler = ASSEMBLER
) -> Assembly:
    memories = retrieved(8)
    extra = [memory(f"01JN{n:022d}", confidence=0.95) for n in range(3)]
    dead = [
        memory("01JD0000000000000000000001", deleted_at=NOW - timedelta(hours=1), vector_rank=1),
        memory("01JD0000000000000000000002", expires_at=NOW, lexical_rank=1),
    ]
    return assemble(
        request(budget_tokens=budget_tokens, top_k=4),
        [*memories, *dead],
        index_of([*memories, *extra]),
        total_live=40,
        profile=DEFAULT_PROFILE,
        tokenizer=load_tokenizer(),
        now=NOW,
        withhold_count=withhold_count,
        assembler=assembler,
    )
