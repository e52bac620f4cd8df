"""Candidates for a context bundle: the compact index (tier 1) and hybrid top-k recall (tier 2).

Hybrid recall runs two retrievers in one statement: pgvector cosine distance over the HNSW index
(iterative scans, so tenant and namespace filters do not starve the result, pgvector ≥ 0.8) and
PostgreSQL full-text rank over the GIN index. Each returns its own 1-based ranks; fusion and
ranking are the pure core's job. Dead versions (deleted, superseded, expired) are retrieved too,
so that the receipt can say why a near match is absent.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from pgvector import Vector
from psycopg import sql
from psycopg.rows import dict_row

from gateway.core.model import Candidate, MemoryType, candidate_of
from gateway.store.database import Connection

__all__ = ["INDEX_LINE_OVERHEAD_TOKENS", "Scope", "index_entries", "live_count", "recall"]

# Tokens an index line costs besides its heading ("- <ULID> | <type> | 0.95 | "), measured with
# cl100k_base. The SQL cut is an estimate; the core re-counts the rendered text exactly.
INDEX_LINE_OVERHEAD_TOKENS = 28

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

_OTHER_COLUMNS = (
    "m.confidence::float8 AS confidence, m.labels, m.source_type, m.source_ref, m.created_at, "
    "m.expires_at, m.deleted_at, m.superseded_by, m.content_sha256, m.tokens, m.heading_tokens, "
    "m.erased_at, m.superseded_decision, m.claim_key"
)
_COLUMNS = sql.SQL(
    "m.memory_id, m.namespace, m.memory_type, m.heading, m.content, " + _OTHER_COLUMNS
)
# Index lines show headings only: without a policy that reads content, none is fetched for them.
_HEADING_COLUMNS = sql.SQL(
    "m.memory_id, m.namespace, m.memory_type, m.heading, ''::text AS content, " + _OTHER_COLUMNS
)


# How a query states the scope's `created_at <= as_of`: as a condition an index may serve
# ("indexed"); as a check of the rows another index found, which no btree can serve ("checked",
# the same truth value: WHERE keeps only true either way); or not at all, where the query's other
# conditions imply it ("implied"). "checked" is for the full-text probes: a pooled connection runs
# the recall statement on a generic plan after ten executions (psycopg prepares it after five, then
# PostgreSQL plans five custom before it compares), and a generic plan cannot see that as_of is
# now, guesses the bound keeps a third of the tenant, and ANDs each GIN bitmap with a scan of the
# tenant's whole memories_created range (0.5 ms a probe at 10k memories, linear in the tenant).
Created = Literal["indexed", "checked", "implied"]


@dataclass(frozen=True, slots=True)
class Scope:
    """Which memories a request may see: a tenant, its namespaces (None = all), optional types,
    and the instant `as_of` (versions created later do not exist yet)."""

    tenant_id: str
    namespaces: tuple[str, ...] | None
    memory_types: tuple[MemoryType, ...] | None
    as_of: datetime
    # True when `as_of` is in the past: versions retired since then were live at `as_of`. False
    # for the present, where only never-retired versions are live, which lets the partial
    # indexes (WHERE deleted_at IS NULL) serve the index and the count.
    historical: bool = False

    def live(self) -> sql.Composable:
        return _LIVE_THEN if self.historical else _LIVE_NOW

    def filters(self, alias: str = "m", *, created: Created = "indexed") -> sql.Composed:
        """The scope's conditions on `alias`, with ``created_at <= as_of`` as `created` says."""
        parts = [sql.SQL("{}.tenant_id = %(tenant_id)s").format(sql.Identifier(alias))]
        if self.namespaces is not None:
            parts.append(
                sql.SQL("{}.namespace = ANY(%(namespaces)s)").format(sql.Identifier(alias))
            )
        if self.memory_types is not None:
            parts.append(
                sql.SQL("{}.memory_type = ANY(%(memory_types)s)").format(sql.Identifier(alias))
            )
        if created == "checked" and self.namespaces is not None:
            # The full-text index's second column (migration 0025): the index scan keeps the
            # scope's namespaces itself.
            parts.append(
                sql.SQL("{}.scope_key @@ %(scope_keys)s::tsquery").format(sql.Identifier(alias))
            )
        if created == "indexed":
            parts.append(sql.SQL("{}.created_at <= %(as_of)s").format(sql.Identifier(alias)))
        elif created == "checked":
            parts.append(
                sql.SQL("({}.created_at <= %(as_of)s) IS TRUE").format(sql.Identifier(alias))
            )
        return sql.SQL(" AND ").join(parts)

    def params(self) -> dict[str, Any]:
        return {
            "tenant_id": self.tenant_id,
            "namespaces": list(self.namespaces) if self.namespaces is not None else None,
            "memory_types": list(self.memory_types) if self.memory_types is not None else None,
            "as_of": self.as_of,
            "scope_keys": None if self.namespaces is None else _scope_keys(self),
        }


def _scope_keys(scope: Scope) -> str:
    """The tsquery text matching `scope_key` in any of the scope's namespaces: each key a quoted
    lexeme (a quote doubled, a backslash escaped, as tsquery input reads them)."""
    assert scope.namespaces is not None
    keys = (f"{scope.tenant_id}/{namespace}" for namespace in scope.namespaces)
    return " | ".join("'" + k.replace("\\", "\\\\").replace("'", "''") + "'" for k in keys)


_LIVE_THEN = sql.SQL(
    "(m.deleted_at IS NULL OR m.deleted_at > %(as_of)s) "
    "AND (m.expires_at IS NULL OR m.expires_at > %(as_of)s) AND m.erased_at IS NULL"
)
_LIVE_NOW = sql.SQL(
    "m.deleted_at IS NULL "
    "AND (m.expires_at IS NULL OR m.expires_at > %(as_of)s) AND m.erased_at IS NULL"
)


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
        columns=_COLUMNS if with_content else _HEADING_COLUMNS,
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
    connection is (`gateway.store.database`): the query vector is sent binary."""
    query, params = _recall_query(
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
    "heading_tokens, erased_at, superseded_decision, claim_key"
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
        ctes=_recall_ctes(scope, len(query_vector), "live"),
        names=sql.SQL(_NAMES),
        index_columns=_COLUMNS if index_content else _HEADING_COLUMNS,
        overhead=sql.Literal(INDEX_LINE_OVERHEAD_TOKENS),
    )
    params = _recall_params(
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


def _recall_query(
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
    ).format(ctes=_recall_ctes(scope, dim, corpus_size))
    return query, _recall_params(
        scope,
        task=task,
        query_vector=query_vector,
        embedding_model=embedding_model,
        limit=limit,
        corpus_size=corpus_size,
    )


def _recall_ctes(scope: Scope, dim: int, corpus_size: int | Literal["live"] | None) -> sql.Composed:
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
        columns=_COLUMNS,
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


def _recall_params(
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
