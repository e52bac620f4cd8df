"""The hybrid recall statement: two retrievers in one query, their ranks and scores, and the
neighbours of their strongest hits.

The vector retriever is pgvector cosine distance over the HNSW index (iterative scans, so tenant
and namespace filters do not starve the result, pgvector ≥ 0.8); the lexical one is Okapi BM25
over PostgreSQL full-text matches from the GIN index. `gateway.store.retrieval` runs it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pgvector import Vector
from psycopg import sql

from gateway.store.scope import CANDIDATE_COLUMNS, Scope

__all__ = [
    "BM25_B",
    "BM25_K1",
    "COMMON_TERM_CAP",
    "CONTEXT_HITS",
    "UNPROBED_SCOPE",
    "recall_ctes",
    "recall_params",
    "recall_query",
]


# Okapi BM25 (Robertson & Zaragoza 2009) over the tsvector: k1 and b are the usual defaults.
BM25_K1 = 1.2
BM25_B = 0.75
# A query term held by more memories than this is left out of the lexical branch (see `recall`).
# At the few hundred memories of one conversation it drops only near-stopwords; at 100k it drops
# words found in more than 0.3% of them, whose inverse document frequency is small anyway. Measured
# on LongMemEval_S: recall unchanged (0.78 at 2000 tokens), and /v1/context p50 grows 1.7x from 1k
# to 100k memories (3.1x with a cap of 1,000). See bench/RESULTS.md, Speed.
COMMON_TERM_CAP = 300
# A scope of at most this many memories is matched on every query term at once, and a term's
# document frequency is counted among those matches, so the common terms are known without
# probing (each probe is an index scan of its own, one per query term). Up to here the one
# match reads no more rows than the probes and a match of the rarer terms would
# (COMMON_TERM_CAP times a query's dozens of terms); beyond it a common term could make the
# match linear in the scope.
UNPROBED_SCOPE = 1000
# The strongest hits of each retriever whose neighbours in write order (the live memory written
# just before and just after, in the same namespace) are looked up and recalled too, for the
# ranking's context signal: two index probes per hit. Tuned with the ranking profile
# (bench/RESULTS.md, issue 15, 2026-12-02 second session).
CONTEXT_HITS = 10


def recall_query(
    scope: Scope,
    *,
    task: str,
    query_vector: Sequence[float],
    embedding_model: str,
    limit: int,
    corpus_size: int | None,
) -> tuple[sql.Composed, dict[str, Any]]:
    """The hybrid recall statement; BM25's N is `corpus_size`, or counted in the statement."""
    dim = len(query_vector)
    query = sql.SQL(
        """
        WITH {ctes}
        SELECT * FROM recalled ORDER BY memory_id
        """
    ).format(ctes=recall_ctes(scope, dim, corpus_size))
    return query, recall_params(
        scope,
        task=task,
        query_vector=query_vector,
        embedding_model=embedding_model,
        limit=limit,
        corpus_size=corpus_size,
    )


def recall_ctes(scope: Scope, dim: int, corpus_size: int | Literal["live"] | None) -> sql.Composed:
    """The recall's common table expressions: `vec` and `lex`, `adjacent` (the neighbours of
    their strongest hits), `recalled_ids` (all of them) and `recalled` (their rows with both
    retrievers' ranks and scores and the hits' neighbours). BM25's N is the
    `corpus_size` parameter, or the `live` CTE's count (the caller defines it), or counted here
    when it is None."""
    vector_type = sql.SQL("vector({})").format(sql.Literal(dim))
    return sql.SQL(
        """
        vec AS (
            SELECT memory_id, distance,
                   row_number() OVER (ORDER BY distance, memory_id) AS vector_rank
              FROM (SELECT m.memory_id,
                           (m.embedding::{vtype} <=> %(vector)s::{vtype}) AS distance
                      FROM memories m
                     WHERE {filters} AND m.embedding_dim = {dim}
                       AND m.embedding_model = %(model)s
                     ORDER BY m.embedding::{vtype} <=> %(vector)s::{vtype}
                     LIMIT %(limit)s) v
        ),
        query_lexemes AS (
            SELECT DISTINCT lexeme FROM unnest(to_tsvector('english'::regconfig, %(task)s))
        ),
        scope_size AS MATERIALIZED (SELECT greatest({corpus_size}, 1)::float8 AS n),
        probed AS (
            -- A term found in more than COMMON_TERM_CAP memories of the scope carries almost no
            -- BM25 weight and is left out (`df` below). In a large scope, matching it would
            -- make this branch linear in the corpus, so each term is probed first: how many
            -- memories in scope hold it, counted only up to the cap. Bounded probes keep the
            -- match proportional to the rare terms; the outcome depends on memory state alone.
            -- A scope of at most UNPROBED_SCOPE memories is not probed (0): every term is
            -- matched, and `df` leaves the common ones out. The scope is checked on the rows
            -- the full-text index found (see `Created`).
            SELECT q.lexeme,
                   CASE WHEN (SELECT n FROM scope_size) <= %(unprobed_scope)s THEN 0
                   ELSE (SELECT count(*) FROM (SELECT 1 FROM memories m
                                                WHERE m.tsv @@ quote_literal(q.lexeme)::tsquery
                                                  AND {matching_filters}
                                                LIMIT %(common_cap)s + 1) probe) END AS df
              FROM query_lexemes q
        ),
        terms AS MATERIALIZED (
            -- Any of the task's rarer terms (OR), not all of them: a question rarely repeats a
            -- memory word for word. Materialized, so it is built once: a plan that scans the
            -- scope and filters each memory by the query (estimates of a namespace with no
            -- statistics yet) rebuilt it for every memory (5 ms over a 500-turn namespace).
            SELECT array_agg(lexeme) AS lexemes,
                   string_agg(quote_literal(lexeme), ' | ' ORDER BY lexeme)::tsquery AS q
              FROM probed WHERE df <= %(common_cap)s
        ),
        matched AS (
            -- Each match keeps only the query's terms of its tsvector, cut in C (the query's
            -- lexemes weighted A, keep A; the stored tsvector carries no weights, which is D),
            -- so the next CTE unnests a few lexemes, not the hundreds of a long turn (unnesting
            -- them all was most of this statement). The tsvector is read once per match: it is
            -- in the row (migration 0026) unless the row is past a page, and then each mention
            -- of m.tsv would fetch it from TOAST again, so the length is taken from the weighted
            -- copy (setweight keeps every lexeme), computed once in the subquery.
            -- The index finds the matches; the scope is checked on the rows it found, not
            -- intersected with a created_at index scan of the whole tenant (see `Created`).
            SELECT m.memory_id, length(w.tsv)::float8 AS len, ts_filter(w.tsv, '{{a}}') AS query_terms
              FROM memories m, terms,
                   LATERAL (SELECT setweight(m.tsv, 'A', terms.lexemes) AS tsv OFFSET 0) w
             WHERE terms.q IS NOT NULL AND m.tsv @@ terms.q AND {matching_filters}
        ),
        hits AS (
            SELECT mt.memory_id, mt.len, u.lexeme,
                   coalesce(array_length(u.positions, 1), 1)::float8 AS tf
              FROM matched mt, LATERAL unnest(mt.query_terms) u
        ),
        df AS (
            -- Each term's document frequency in scope, the common ones left out (in a probed
            -- scope there are none left to leave).
            SELECT lexeme, count(*)::float8 AS df FROM hits GROUP BY lexeme
            HAVING count(*) <= %(common_cap)s
        ),
        scored AS (SELECT h.memory_id, h.len, h.tf, d.df FROM hits h JOIN df d USING (lexeme)),
        corpus AS (
            -- BM25's average length is over the memories that hold a term it scores.
            SELECT s.n, (SELECT greatest(avg(len), 1)
                           FROM (SELECT DISTINCT memory_id, len FROM scored) d) AS avgdl
              FROM scope_size s
        ),
        lex AS (
            SELECT memory_id, score,
                   row_number() OVER (ORDER BY score DESC, memory_id) AS lexical_rank
              FROM (SELECT h.memory_id,
                           sum(ln(1 + (c.n - h.df + 0.5) / (h.df + 0.5))
                               * h.tf * (%(k1)s + 1)
                               / (h.tf + %(k1)s * (1 - %(b)s + %(b)s * h.len / c.avgdl))) AS score
                      FROM scored h, corpus c
                     GROUP BY h.memory_id
                     ORDER BY score DESC, h.memory_id
                     LIMIT %(limit)s) l
        ),
        adjacent AS (
            -- The live memory written just before and just after each strong hit in its
            -- namespace: two probes of memories_written per hit, whatever the corpus size. The
            -- earlier one leaves out created_at <= as_of (the hit is in scope, so what precedes
            -- it is too): with both upper bounds the backward index scan started at as_of and
            -- walked back over every later write to the hit (0.15 ms a probe at 10k memories).
            SELECT h.memory_id, n.memory_id AS neighbour
              FROM memories h
              CROSS JOIN LATERAL (
                  (SELECT m.memory_id FROM memories m
                    WHERE {earlier_filters} AND {live} AND m.namespace = h.namespace
                      AND (m.created_at, m.memory_id) < (h.created_at, h.memory_id)
                    ORDER BY m.created_at DESC, m.memory_id DESC LIMIT 1)
                  UNION ALL
                  (SELECT m.memory_id FROM memories m
                    WHERE {filters} AND {live} AND m.namespace = h.namespace
                      AND (m.created_at, m.memory_id) > (h.created_at, h.memory_id)
                    ORDER BY m.created_at, m.memory_id LIMIT 1)
              ) n
             WHERE h.tenant_id = %(tenant_id)s
               -- By primary key (an array, as in the final join): as `IN (SELECT ...)` a generic
               -- plan hashed the hits and scanned the tenant's whole memories_written.
               AND h.memory_id = ANY(ARRAY(
                       SELECT memory_id FROM vec WHERE vector_rank <= %(context_hits)s
                       UNION
                       SELECT memory_id FROM lex WHERE lexical_rank <= %(context_hits)s))
        ),
        neighbours AS (
            -- Each strong hit's neighbours, once: a correlated subquery per candidate rescanned
            -- `adjacent` for each of them.
            SELECT memory_id, array_agg(neighbour ORDER BY neighbour) AS neighbours
              FROM adjacent GROUP BY memory_id
        ),
        recalled_ids AS (
            SELECT memory_id FROM vec UNION SELECT memory_id FROM lex
            UNION SELECT neighbour FROM adjacent
        ),
        recalled AS (
            SELECT {columns}, vec.vector_rank, vec.distance AS vector_distance,
                   lex.lexical_rank, lex.score::float8 AS lexical_score, nb.neighbours
              FROM memories m
              LEFT JOIN vec ON vec.memory_id = m.memory_id
              LEFT JOIN lex ON lex.memory_id = m.memory_id
              LEFT JOIN neighbours nb ON nb.memory_id = m.memory_id
             WHERE m.tenant_id = %(tenant_id)s
               -- An array, so the rows are fetched by primary key whatever the estimates: as
               -- `IN (SELECT ...)` the planner hashed the ids and scanned every memory.
               AND m.memory_id = ANY(ARRAY(SELECT memory_id FROM recalled_ids))
        )
        """
    ).format(
        vtype=vector_type,
        columns=CANDIDATE_COLUMNS,
        dim=sql.Literal(dim),
        filters=scope.filters(),
        earlier_filters=scope.filters(created="implied"),
        matching_filters=scope.filters(created="checked"),
        live=scope.live(),
        corpus_size=sql.SQL("(SELECT live_count FROM live)")
        if corpus_size == "live"
        else sql.SQL("%(corpus_size)s")
        if corpus_size is not None
        else sql.SQL("(SELECT count(*) FROM memories m WHERE {filters} AND {live})").format(
            filters=scope.filters(), live=scope.live()
        ),
    )


def recall_params(
    scope: Scope,
    *,
    task: str,
    query_vector: Sequence[float],
    embedding_model: str,
    limit: int,
    corpus_size: int | None,
) -> dict[str, Any]:
    return scope.params() | {
        "vector": Vector(list(query_vector)),
        "model": embedding_model,
        "limit": limit,
        "task": task,
        "k1": BM25_K1,
        "b": BM25_B,
        "common_cap": COMMON_TERM_CAP,
        "unprobed_scope": UNPROBED_SCOPE,
        "context_hits": CONTEXT_HITS,
        "corpus_size": corpus_size,
    }
