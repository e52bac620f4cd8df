"""Idempotent appends: the turns one idempotency key appended, so that a retry is answered
with the same seqs instead of appending them again."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import psycopg
from psycopg.rows import class_row

__all__ = [
    "AppendRecord",
    "find_append",
    "insert_append",
]

Conn = psycopg.AsyncConnection[tuple[object, ...]]


@dataclass(frozen=True, slots=True)
class AppendRecord:
    request_sha256: str
    first_seq: int
    last_seq: int


_FIND_APPEND = """
SELECT request_sha256, first_seq, last_seq FROM session_appends
 WHERE tenant_id = %(tenant_id)s AND session_id = %(session_id)s AND idempotency_key = %(key)s
"""


async def find_append(conn: Conn, tenant_id: str, session_id: str, key: str) -> AppendRecord | None:
    async with conn.cursor(row_factory=class_row(AppendRecord)) as cur:
        await cur.execute(
            _FIND_APPEND, {"tenant_id": tenant_id, "session_id": session_id, "key": key}
        )
        return await cur.fetchone()


_INSERT_APPEND = """
INSERT INTO session_appends (tenant_id, session_id, idempotency_key, request_sha256, first_seq,
    last_seq, created_at)
VALUES (%(tenant_id)s, %(session_id)s, %(key)s, %(request_sha256)s, %(first_seq)s, %(last_seq)s,
    %(created_at)s)
"""


async def insert_append(
    conn: Conn,
    tenant_id: str,
    session_id: str,
    key: str,
    record: AppendRecord,
    created_at: datetime,
) -> None:
    await conn.execute(
        _INSERT_APPEND,
        {
            "tenant_id": tenant_id,
            "session_id": session_id,
            "key": key,
            "request_sha256": record.request_sha256,
            "first_seq": record.first_seq,
            "last_seq": record.last_seq,
            "created_at": created_at,
        },
    )
