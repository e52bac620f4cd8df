"""Corpora for the speed benchmarks, and a fast loader that writes exactly the rows the gateway
writes.

Two kinds. :func:`load_turns` is the real thing: the turns of a dev corpus as they are, one memory
each (LongMemEval_S: 28,813 distinct turns, median 466 characters, a tenth over 2,500, the longest
~42,000; LoCoMo: 1,451 distinct short turns), in haystack order, with that corpus's questions as
queries. A size beyond the distinct turns repeats them from the start (said so where measured).
:func:`load_corpus` is the older synthetic corpus of the same sentences:

Memories are built from real sentences: every sentence of the LongMemEval_S turns (MIT) is put in
one pool, and memory ``n`` is a seeded draw of consecutive-free sentences until it reaches its own
target of 100-250 cl100k tokens. The vocabulary, its Zipf-like frequencies and the sentence
lengths are therefore those of real chat transcripts, so that full-text matching (how many rows a
query term hits) and the hashed vectors behave as they would on real data. Queries are the
LongMemEval_S questions themselves.

The loader computes every column as :class:`gateway.usecases.memories.writer.Writer` does (same
``memory_text``, embedder, tokenizer, content sha256, request sha256) and inserts with the
gateway's own ``INSERT`` statement and parameter builder; only the per-row savepoint and the
idempotency lookup (no key is given) are skipped. For speed of setup the HNSW and GIN indexes are
dropped during the load and recreated from their own stored definitions afterwards.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Protocol

import psycopg
from pgvector.psycopg import register_vector
from ulid import ULID

from bench import locomo, longmemeval
from bench.harness import Database, new_database
from bench.longmemeval import Question, load_questions
from gateway.core.model import MemoryType
from gateway.core.render import one_line
from gateway.core.tokens import load_tokenizer
from gateway.domain.memory import MemoryDraft
from gateway.embedding import HashEmbedder
from gateway.store import memories as memory_store
from gateway.store.database import EmbeddedPostgres
from gateway.usecases.memories import writer as memory_usecase

__all__ = [
    "CORPORA",
    "Corpus",
    "MemorySource",
    "TurnCorpus",
    "bulk_load",
    "load_corpus",
    "load_turns",
    "loaded_database",
]

_SENTENCE = re.compile(r"(?<=[.!?])\s+")
BASE_TIME = datetime(2026, 1, 1, tzinfo=UTC)


class MemorySource(Protocol):
    """What `bulk_load` writes: memories by number, as (heading, content)."""

    @property
    def queries(self) -> tuple[str, ...]: ...

    def memories(self, start: int, stop: int) -> Iterator[tuple[str, str]]: ...


@dataclass(frozen=True)
class TurnCorpus:
    """The distinct turns of a dev corpus, as the quality benchmarks write them."""

    name: str
    turns: tuple[tuple[str, str], ...]  # (heading, content), haystack order
    queries: tuple[str, ...]

    def memories(self, start: int, stop: int) -> Iterator[tuple[str, str]]:
        """Turns number ``start`` .. ``stop - 1``; past the last distinct turn, from the start."""
        for number in range(start, stop):
            yield self.turns[number % len(self.turns)]


CORPORA: dict[str, Callable[[], list[Question]]] = {
    "longmemeval": longmemeval.load_questions,
    "locomo": locomo.load_questions,
}


def load_turns(name: str) -> TurnCorpus:
    """Every distinct turn of ``name`` (a key of `CORPORA`) once, and its distinct questions."""
    questions = CORPORA[name]()
    turns: dict[str, str] = {}
    for question in questions:
        for turn in question.turns:
            turns.setdefault(turn.content, turn.heading)
    queries = tuple(dict.fromkeys(q.question for q in questions))
    return TurnCorpus(name, tuple((h, c) for c, h in turns.items()), queries)


@dataclass(frozen=True)
class Corpus:
    sentences: tuple[str, ...]
    queries: tuple[str, ...]

    def memories(self, start: int, stop: int, seed: int = 20261130) -> Iterator[tuple[str, str]]:
        """Memories number ``start`` .. ``stop - 1`` as (heading, content); each depends only on
        its number and the seed, so a corpus grows by appending."""
        for number in range(start, stop):
            rng = random.Random(f"{seed}:{number}")
            target_chars = rng.randint(420, 1050)  # ~100-250 tokens of English chat text
            parts: list[str] = []
            size = 0
            while size < target_chars:
                sentence = self.sentences[rng.randrange(len(self.sentences))]
                parts.append(sentence)
                size += len(sentence) + 1
            content = " ".join(parts)
            heading = f"#{number} " + one_line(parts[0])[:80].strip()
            yield heading, content


def load_corpus() -> Corpus:
    questions = load_questions()
    seen: set[str] = set()
    pool: list[str] = []
    for question in questions:
        for turn in question.turns:
            for raw in _SENTENCE.split(turn.text):
                sentence = one_line(raw)
                if 20 <= len(sentence) <= 400 and sentence not in seen:
                    seen.add(sentence)
                    pool.append(sentence)
    return Corpus(tuple(pool), tuple(q.question for q in questions))


def _memory_id(number: int, tenant_id: str, namespace: str, created_at: datetime) -> str:
    """A ULID with the row's time and a deterministic random part (the gateway draws it)."""
    millis = int(created_at.timestamp() * 1000)
    tail = hashlib.blake2b(f"{tenant_id}/{namespace}:{number}".encode(), digest_size=10).digest()
    return str(ULID.from_bytes(millis.to_bytes(6, "big") + tail))


_TYPES: tuple[MemoryType, ...] = ("semantic", "episodic", "procedural", "working")
PII_SENTENCE = " You can reach me at jane.doe@example.com or +1 555 123 4567."


def _draft(number: int, heading: str, content: str, namespace: str, vary: bool) -> MemoryDraft:
    """The draft as the HTTP layer would build it. ``vary`` spreads the metadata policies look
    at (type, labels, confidence, personal data) deterministically over the numbers."""
    if not vary:
        confidence = round(0.5 + 0.5 * ((number * 7919) % 1000) / 1000, 3)
        return MemoryDraft(namespace, "semantic", heading, content, confidence, ("bench",))
    labels = ["bench"]
    if number % 20 == 0:
        labels.append("pii")
        content += PII_SENTENCE
    for modulus, label in ((37, "secret"), (53, "public"), (71, "restricted")):
        if number % modulus == 0:
            labels.append(label)
    confidence = round(0.05 + 0.95 * ((number * 7919) % 1000) / 1000, 3)
    memory_type = _TYPES[(number * 31) % 7 % 4]
    return MemoryDraft(namespace, memory_type, heading, content, confidence, tuple(sorted(labels)))


def _created_at(number: int, vary: bool) -> datetime:
    # Varied: spread over ~11 months, so that age predicates (older_than) split the corpus.
    return BASE_TIME + (timedelta(hours=(number * 7) % 8000) if vary else timedelta(seconds=number))


Item = tuple[int, str, str, str, str]  # number, heading, content, tenant_id, key_id


def _params(items: Sequence[Item], namespace: str, vary: bool) -> list[dict[str, object]]:
    """What `Writer.write` + `insert_versions` would send for these memories (numbered)."""
    embedder, tokenizer = HashEmbedder(), load_tokenizer("cl100k_base")
    drafts = [_draft(n, h, c, namespace, vary) for n, h, c, _, _ in items]
    texts = [memory_usecase.memory_text(d.heading, d.content) for d in drafts]
    vectors = embedder.embed(texts)
    rows = []
    for (number, _, _, tenant_id, key_id), draft, text, vector in zip(
        items, drafts, texts, vectors, strict=True
    ):
        created_at = _created_at(number, vary)
        version = memory_store.NewVersion(
            tenant_id=tenant_id,
            memory_id=_memory_id(number, tenant_id, namespace, created_at),
            draft=draft,
            agent_id="bench",
            written_by_key=key_id,
            request_sha256=memory_usecase._request_sha256(draft),
            created_at=created_at,
            content_sha256=hashlib.sha256(draft.content.encode("utf-8")).hexdigest(),
            heading_tokens=tokenizer.count(draft.heading),
            tokens=tokenizer.count(text),
            embedding=vector,
            embedding_model=embedder.model,
            embedding_dim=embedder.dim,
        )
        rows.append(memory_store._insert_params(version))
    return rows


_REBUILT = ("memories_embedding_384", "memories_tsv")


def bulk_load(
    url: str,
    corpus: MemorySource,
    *,
    tenants: Sequence[tuple[str, str]],
    namespace: str,
    start: int,
    stop: int,
    vary: bool = False,
    workers: int = 2,
    chunk: int = 2000,
) -> None:
    """Write memories ``start`` .. ``stop - 1`` into ``namespace`` of every (tenant_id, key_id)."""
    texts = list(corpus.memories(start, stop))
    items: list[Item] = [
        (number, heading, content, tenant_id, key_id)
        for tenant_id, key_id in tenants
        for number, (heading, content) in zip(range(start, stop), texts, strict=True)
    ]
    chunks = [items[i : i + chunk] for i in range(0, len(items), chunk)]
    with psycopg.connect(url) as conn:
        register_vector(conn)  # the rows' embeddings go binary, as the gateway sends them
        definitions = conn.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'memories'"
            " AND indexname = ANY(%s)",
            (list(_REBUILT),),
        ).fetchall()
        for name, _ in definitions:
            conn.execute(f'DROP INDEX "{name}"')
        with ProcessPoolExecutor(workers) as pool, conn.cursor() as cur:
            for rows in pool.map(_params, chunks, [namespace] * len(chunks), [vary] * len(chunks)):
                cur.executemany(memory_store._INSERT, rows)
        conn.execute("SET maintenance_work_mem = '1GB'")
        for _, definition in definitions:
            conn.execute(definition)
        conn.commit()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE memories")


def loaded_database(
    server: EmbeddedPostgres, name: str, corpus: MemorySource, *, namespace: str, memories: int
) -> Database:
    """A fresh database (`bench.harness.new_database`) with the first `memories` of `corpus`
    written into `namespace` by its agent key."""
    db = new_database(server, name)
    bulk_load(
        db.url,
        corpus,
        tenants=[(db.tenant_id, db.key_id)],
        namespace=namespace,
        start=0,
        stop=memories,
    )
    return db
