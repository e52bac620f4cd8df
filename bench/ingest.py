"""Batch ingest throughput: the gateway over HTTP vs the floor, a bare binary COPY.

For each size, a fresh database receives ``size`` synthetic memories (~250 tokens, seeded) in one
namespace through ``POST /v1/memories/batch`` (batches of 100, several clients in flight), with the
``hash`` embedder. The floor is the very same rows (every column, including the embedding and the
token counts the gateway computed) copied with ``COPY … FROM STDIN (FORMAT binary)`` into another
fresh database in one transaction: index maintenance (HNSW, GIN, btree) and the generated tsvector
are paid by both, so the ratio is the cost of HTTP, validation, embedding, counting and
per-row writes with savepoints.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from typing import Any

import httpx
import psycopg
from psycopg import sql

from bench.harness import (
    OUT_DIR,
    Database,
    Server,
    embedded_postgres,
    machine,
    markdown_table,
    new_database,
    serve,
    write_result,
)
from bench.synthetic import memories
from gateway.core.tokens import load_tokenizer
from gateway.embedding import HashEmbedder
from gateway.store.database import EmbeddedPostgres
from gateway.usecases.memories.writer import memory_text

__all__ = ["main"]

NAMESPACE = "ingest"
BATCH = 100
# Every column the gateway writes (the generated tsv is computed by the server in both runs).
COLUMNS = sql.SQL(", ").join(
    map(
        sql.Identifier,
        (
            "tenant_id", "memory_id", "namespace", "memory_type", "heading", "content",
            "confidence", "labels", "source_type", "source_ref", "claim_key", "supersedes",
            "superseded_by", "agent_id", "written_by_key", "idempotency_key", "request_sha256",
            "created_at", "expires_at", "deleted_at", "deleted_reason", "erased_at",
            "content_sha256", "heading_tokens", "tokens", "embedding", "embedding_model",
            "embedding_dim",
        ),
    )
)  # fmt: skip


def _batches(size: int) -> list[list[dict[str, Any]]]:
    items = [
        {
            "namespace": NAMESPACE,
            "memory_type": "semantic",
            "heading": heading,
            "content": content,
            "confidence": 0.8,
            "labels": ["bench"],
        }
        for heading, content in memories(size)
    ]
    return [items[i : i + BATCH] for i in range(0, size, BATCH)]


async def _http_ingest(server: Server, batches: list[list[dict[str, Any]]], clients: int) -> float:
    queue: asyncio.Queue[list[dict[str, Any]]] = asyncio.Queue()
    for batch in batches:
        queue.put_nowait(batch)

    async def client_loop() -> None:
        async with httpx.AsyncClient(
            base_url=server.base_url, headers=server.headers, timeout=600
        ) as client:
            while not queue.empty():
                batch = queue.get_nowait()
                response = await client.post("/v1/memories/batch", json={"items": batch})
                response.raise_for_status()
                if response.json()["written"] != len(batch):
                    raise RuntimeError(f"a batch was not fully written: {response.text[:300]}")

    started = time.perf_counter()
    await asyncio.gather(*(client_loop() for _ in range(clients)))
    return time.perf_counter() - started


def _dump(database: Database) -> list[bytes]:
    with (
        psycopg.connect(database.url) as conn,
        conn.cursor() as cur,
        cur.copy(
            sql.SQL(
                "COPY (SELECT {} FROM memories ORDER BY memory_id) TO STDOUT (FORMAT binary)"
            ).format(COLUMNS)
        ) as copy,
    ):
        return [bytes(chunk) for chunk in copy]


def _copy_floor(database: Database, chunks: list[bytes]) -> float:
    with psycopg.connect(database.url) as conn, conn.cursor() as cur:
        started = time.perf_counter()
        copy_in = sql.SQL("COPY memories ({}) FROM STDIN (FORMAT binary)").format(COLUMNS)
        with cur.copy(copy_in) as copy:
            for chunk in chunks:
                copy.write(chunk)
        conn.commit()
        return time.perf_counter() - started


def _embed_and_count(sample: list[dict[str, Any]]) -> float:
    """Seconds per memory the write path spends in the hash embedder and the tokenizer."""
    embedder, tokenizer = HashEmbedder(), load_tokenizer()
    texts = [memory_text(item["heading"], item["content"]) for item in sample]
    started = time.perf_counter()
    embedder.embed(texts)
    for item, text in zip(sample, texts, strict=True):
        tokenizer.count(item["heading"])
        tokenizer.count(text)
    return (time.perf_counter() - started) / len(sample)


def _measure(pg: EmbeddedPostgres, size: int, clients: int) -> dict[str, Any]:
    batches = _batches(size)
    # A throughput measurement: the key's default write rate (500/s) would be the ceiling.
    http_db = new_database(pg, f"ingest_http_{size}", writes_per_second=None)
    with serve(http_db, "hash") as server:
        http_seconds = asyncio.run(_http_ingest(server, batches, clients))
    chunks = _dump(http_db)
    floor_db = new_database(pg, f"ingest_copy_{size}")
    floor_seconds = _copy_floor(floor_db, chunks)
    with psycopg.connect(floor_db.url) as conn:
        row = conn.execute("SELECT count(*), avg(tokens) FROM memories").fetchone()
    if row is None or row[0] != size:
        raise RuntimeError(f"the floor database holds {row} rows, expected {size}")
    return {
        "size": size,
        "avg_tokens": round(float(row[1]), 1),
        "http_seconds": round(http_seconds, 2),
        "http_per_second": round(size / http_seconds, 1),
        "copy_seconds": round(floor_seconds, 2),
        "copy_per_second": round(size / floor_seconds, 1),
        "ratio": round(http_seconds / floor_seconds, 2),
        "embed_and_count_ms_per_memory": round(1000 * _embed_and_count(batches[0] * 5), 3),
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench ingest", description=__doc__)
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--clients", type=int, default=4, help="concurrent HTTP clients")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    runs: list[dict[str, Any]] = []
    result: dict[str, Any] = {
        "benchmark": "ingest",
        "command": "python -m bench ingest " + " ".join(argv),
        "clients": args.clients,
        "batch": BATCH,
        "runs": runs,
    }
    path = OUT_DIR / "ingest-partial.json"
    with embedded_postgres() as pg:
        result["machine"] = machine(pg)
        for size in sizes:
            runs.append(_measure(pg, size, args.clients))
            print(runs[-1], flush=True)
            # Written after every size, so a long run that is stopped still leaves its figures.
            path = write_result("ingest", result)
    table = markdown_table(
        [
            "memories",
            "HTTP (memories/s)",
            "COPY floor (memories/s)",
            "HTTP / COPY time",
            "embed+count (ms/memory)",
        ],
        [
            [
                f"{r['size']:,}",
                f"{r['http_per_second']:,.0f}",
                f"{r['copy_per_second']:,.0f}",
                f"{r['ratio']:.1f}×",
                f"{r['embed_and_count_ms_per_memory']:.2f}",
            ]
            for r in runs
        ],
    )
    print(f"\nbatch ingest, {args.clients} clients × batches of {BATCH}, hash embedder\n")
    print(table)
    print(f"\nwritten to {path.relative_to(OUT_DIR.parent.parent)}")
    return 0
