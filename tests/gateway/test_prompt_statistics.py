"""The embedded PostgreSQL analyses a table that just grew within seconds (autovacuum looks every
`AUTOVACUUM_NAPTIME`, not PostgreSQL's minute): a conversation imported and compiled at once must
not be planned as if its tables were empty."""

from __future__ import annotations

import time

import psycopg

from gateway.store.database import AUTOVACUUM_NAPTIME


def test_a_table_that_grew_from_nothing_is_analysed_within_seconds(database_url: str) -> None:
    with psycopg.connect(database_url, autocommit=True) as conn:
        shown = conn.execute("SHOW autovacuum_naptime").fetchone()
        assert shown == (AUTOVACUUM_NAPTIME,)
        conn.execute("CREATE TABLE grown (id bigint PRIMARY KEY, note text)")
        conn.execute("INSERT INTO grown SELECT n, 'row ' || n FROM generate_series(1, 5000) n")
        deadline = time.monotonic() + 30  # six rounds of the embedded naptime; a minute by default
        analysed = None
        while analysed is None and time.monotonic() < deadline:
            time.sleep(0.5)
            row = conn.execute(
                "SELECT last_autoanalyze FROM pg_stat_user_tables WHERE relname = 'grown'"
            ).fetchone()
            analysed = row[0] if row else None
        assert analysed is not None
        estimated = conn.execute("SELECT reltuples FROM pg_class WHERE relname = 'grown'")
        assert estimated.fetchone() == (5000.0,)
