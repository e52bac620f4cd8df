"""Candidates for a context bundle: the compact index (tier 1) and hybrid top-k recall (tier 2).

Hybrid recall runs two retrievers in one statement (`gateway.store.recall_statement`): pgvector
cosine distance over the HNSW index (iterative scans, so tenant and namespace filters do not
starve the result, pgvector ≥ 0.8) and PostgreSQL full-text rank over the GIN index. Each returns
its own 1-based ranks; fusion and ranking are the pure core's job. Dead versions (deleted,
superseded, expired) are retrieved too, so that the receipt can say why a near match is absent.
The memories a request may see are its `gateway.store.scope.Scope`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from psycopg import sql
from psycopg.rows import dict_row

from gateway.core.model import Candidate, candidate_of
from gateway.store.database import Connection
from gateway.store.recall_statement import recall_ctes, recall_params, recall_query
from gateway.store.scope import CANDIDATE_COLUMNS, HEADING_COLUMNS, Scope

__all__ = [
    "INDEX_LINE_OVERHEAD_TOKENS",
    "context_candidates",
    "index_entries",
    "live_count",
    "recall",
]


# Tokens an index line costs besides its heading ("- <ULID> | <type> | 0.95 | "), measured with
# cl100k_base. The SQL cut is an estimate; the core re-counts the rendered text exactly.
INDEX_LINE_OVERHEAD_TOKENS = 28


async def index_entries(
    conn: Connection, scope: Scope, budget_tokens: int, *, with_content: bool = True
) -> list[Candidate]:
    """Live memories in index order (confidence desc, memory_id), cut by the estimated cost of
    their index lines. The `LIMIT` keeps this an ordered index scan at any memory count.
    Without ``with_content`` each comes with an empty content (its hash and token count stay):
    a large budget reaches thousands of lines, whose contents nothing would read."""
    if budget_tokens <= 0:
        return []
    query, params = _index_query(scope, budget_tokens, with_content=with_content)
    async with conn.cursor(row_factory=dict_row) as cur:
        await cur.execute(query, params)
        return [candidate_of(row) for row in await cur.fetchall()]


def _index_query(
    scope: Scope, budget_tokens: int, *, with_content: bool
) -> tuple[sql.Composed, dict[str, Any]]:
    query = sql.SQL(
        """
        SELECT * FROM (
            SELECT {columns},
                   sum(m.heading_tokens + {overhead}) OVER (
                       ORDER BY m.confidence DESC, m.memory_id) AS running
              FROM (SELECT * FROM memories m
                     WHERE {filters} AND {live}
                     ORDER BY m.confidence DESC, m.memory_id
                     LIMIT %(max_lines)s) m
        ) ranked
        WHERE running <= %(budget)s
        ORDER BY confidence DESC, memory_id
        """
    ).format(
        columns=CANDIDATE_COLUMNS if with_content else HEADING_COLUMNS,
        overhead=sql.Literal(INDEX_LINE_OVERHEAD_TOKENS),
        filters=scope.filters(),
        live=scope.live(),
    )
    params = scope.params() | {
        "budget": budget_tokens,
        "max_lines": _max_lines(budget_tokens),
    }
    return query, params


def _max_lines(budget_tokens: int) -> int:
    """How many index lines `budget_tokens` could hold at most: the index scan's LIMIT. 0
    without a budget, so that no scan runs (an index-order scan for a small namespace in a large
    tenant walks the other namespaces' memories until it finds one of its own)."""
    return 0 if budget_tokens <= 0 else budget_tokens // INDEX_LINE_OVERHEAD_TOKENS + 1


def _count_query(scope: Scope) -> sql.Composed:
    return sql.SQL("SELECT count(*) FROM memories m WHERE {filters} AND {live}").format(
        filters=scope.filters(), live=scope.live()
    )


async def live_count(conn: Connection, scope: Scope) -> int:
    cur = await conn.execute(_count_query(scope), scope.params())
    row = await cur.fetchone()
    return int(row[0]) if row else 0  # type: ignore[call-overload]


async def recall(
    conn: Connection,
    scope: Scope,
    *,
    task: str,
    query_vector: Sequence[float],
    embedding_model: str,
    limit: int,
    corpus_size: int | None = None,
) -> list[Candidate]:
    """Hybrid recall: up to `limit` memories from each retriever, with their ranks and scores.

    `corpus_size` is BM25's N, the live memories in scope (counted in the statement when not
    given). One round trip, on a connection with pgvector's types registered, as every pooled
    connection is (`gateway.store.pool`): the query vector is sent binary."""
    query, params = recall_query(
        scope,
        task=task,
        query_vector=query_vector,
        embedding_model=embedding_model,
        limit=limit,
        corpus_size=corpus_size,
    )
    async with conn.cursor(row_factory=dict_row) as cur:
        await cur.execute(query, params)
        return [candidate_of(row) for row in await cur.fetchall()]


_NAMES = (
    "memory_id, namespace, memory_type, heading, content, confidence, labels, source_type, "
    "source_ref, created_at, expires_at, deleted_at, superseded_by, content_sha256, tokens, "
    "heading_tokens, erased_at, superseded_decision, claim_key, valid_from"
)


async def context_candidates(
    conn: Connection,
    scope: Scope,
    *,
    task: str,
    query_vector: Sequence[float],
    embedding_model: str,
    limit: int,
    index_reach: int,
    index_content: bool,
) -> tuple[list[Candidate], list[Candidate], int]:
    """What a context bundle is made from, in one statement and so one round trip: the recall
    (as `recall`), the index entries (as `index_entries`, to `index_reach` tokens) and the live
    count, which is also the recall's BM25 N. Rows of both parts come in one result, told
    apart by `part`; each carries the count."""
    query = sql.SQL(
        """
        WITH live AS MATERIALIZED (
            SELECT count(*) AS live_count FROM memories m WHERE {filters} AND {live}
        ),
        {ctes},
        indexed AS (
            SELECT 2 AS part, {names}, NULL::bigint AS vector_rank, NULL::float8 AS vector_distance,
                   NULL::bigint AS lexical_rank, NULL::float8 AS lexical_score,
                   NULL::text[] AS neighbours
              FROM (SELECT {index_columns},
                           sum(m.heading_tokens + {overhead}) OVER (
                               ORDER BY m.confidence DESC, m.memory_id) AS running
                      FROM (SELECT * FROM memories m
                             WHERE {filters} AND {live}
                             ORDER BY m.confidence DESC, m.memory_id
                             LIMIT %(max_lines)s) m) ranked
             WHERE running <= %(budget)s
        )
        SELECT u.*, live.live_count
          FROM (SELECT 1 AS part, r.* FROM recalled r UNION ALL SELECT * FROM indexed) u, live
         ORDER BY u.part, CASE WHEN u.part = 2 THEN u.confidence END DESC, u.memory_id
        """
    ).format(
        filters=scope.filters(),
        live=scope.live(),
        ctes=recall_ctes(scope, len(query_vector), "live"),
        names=sql.SQL(_NAMES),
        index_columns=CANDIDATE_COLUMNS if index_content else HEADING_COLUMNS,
        overhead=sql.Literal(INDEX_LINE_OVERHEAD_TOKENS),
    )
    params = recall_params(
        scope,
        task=task,
        query_vector=query_vector,
        embedding_model=embedding_model,
        limit=limit,
        corpus_size=None,
    ) | {"budget": index_reach, "max_lines": _max_lines(index_reach)}
    async with conn.cursor(row_factory=dict_row) as cur:
        await cur.execute(query, params)
        rows = await cur.fetchall()
    if not rows:  # nothing recalled and no index line: the count still has to be told
        return [], [], await live_count(conn, scope)
    candidates = [candidate_of(r) for r in rows if r["part"] == 1]
    index = [candidate_of(r) for r in rows if r["part"] == 2]
    return candidates, index, int(rows[0]["live_count"])
