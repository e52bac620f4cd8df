"""A session's state: immutable summaries, each covering a prefix `[1, to_seq]` of its
history; the latest is the one a context builds on, an older one is loaded by id on replay."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import psycopg
from psycopg.rows import class_row

__all__ = [
    "SummaryRow",
    "find_summary",
    "insert_summary",
    "latest_summary",
]

Conn = psycopg.AsyncConnection[tuple[object, ...]]


@dataclass(frozen=True, slots=True)
class SummaryRow:
    summary_id: str
    to_seq: int
    covered_sha256: str
    text: str
    tokens: int
    summarizer: str
    summarizer_version: str
    previous_summary_id: str | None
    created_at: datetime


_LATEST_SUMMARY = """
SELECT summary_id, to_seq, covered_sha256, text, tokens, summarizer,
       summarizer_version, previous_summary_id, created_at FROM session_summaries
 WHERE tenant_id = %(tenant_id)s AND session_id = %(session_id)s AND erased_at IS NULL
 ORDER BY to_seq DESC, summary_id DESC
 LIMIT 1
"""


async def latest_summary(conn: Conn, tenant_id: str, session_id: str) -> SummaryRow | None:
    async with conn.cursor(row_factory=class_row(SummaryRow)) as cur:
        await cur.execute(_LATEST_SUMMARY, {"tenant_id": tenant_id, "session_id": session_id})
        return await cur.fetchone()


_FIND_SUMMARY = """
SELECT summary_id, to_seq, covered_sha256, text, tokens, summarizer,
       summarizer_version, previous_summary_id, created_at FROM session_summaries
 WHERE tenant_id = %(tenant_id)s AND session_id = %(session_id)s AND summary_id = %(summary_id)s
"""


async def find_summary(
    conn: Conn, tenant_id: str, session_id: str, summary_id: str
) -> SummaryRow | None:
    params = {"tenant_id": tenant_id, "session_id": session_id, "summary_id": summary_id}
    async with conn.cursor(row_factory=class_row(SummaryRow)) as cur:
        await cur.execute(_FIND_SUMMARY, params)
        return await cur.fetchone()


_INSERT_SUMMARY = """
INSERT INTO session_summaries (tenant_id, summary_id, session_id, to_seq, covered_sha256, text,
    tokens, summarizer, summarizer_version, previous_summary_id, created_at)
VALUES (%(tenant_id)s, %(summary_id)s, %(session_id)s, %(to_seq)s, %(covered_sha256)s,
    %(text)s, %(tokens)s, %(summarizer)s, %(summarizer_version)s, %(previous_summary_id)s,
    %(created_at)s)
"""


async def insert_summary(conn: Conn, tenant_id: str, session_id: str, s: SummaryRow) -> None:
    await conn.execute(
        _INSERT_SUMMARY,
        {
            "tenant_id": tenant_id,
            "session_id": session_id,
            "summary_id": s.summary_id,
            "to_seq": s.to_seq,
            "covered_sha256": s.covered_sha256,
            "text": s.text,
            "tokens": s.tokens,
            "summarizer": s.summarizer,
            "summarizer_version": s.summarizer_version,
            "previous_summary_id": s.previous_summary_id,
            "created_at": s.created_at,
        },
    )
