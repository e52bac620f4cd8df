"""Run the real app under uvicorn for a benchmark: ``python -m bench.serve URL PORT EMBEDDER [WORKERS]``.

A separate process, so that the benchmark client and the server do not share one GIL. With
WORKERS > 1 it serves as ``ctxgw serve --workers`` does (``gateway.http.workers``): worker
processes each build the app from the environment.
"""

from __future__ import annotations

import logging
import os
import sys
import tempfile
from pathlib import Path

import uvicorn

from gateway.http.app import create_app
from gateway.http.slow_clients import http_protocol
from gateway.http.workers import run_workers
from gateway.shell.collector import settle_collector
from gateway.shell.settings import Settings


def main(argv: list[str]) -> None:
    url, port, embedder = argv[0], int(argv[1]), argv[2]
    workers = int(argv[3]) if len(argv) > 3 else 1
    logging.basicConfig(level=logging.WARNING)
    data_dir = Path(tempfile.mkdtemp(prefix="ctxgw-bench-"))
    if workers > 1:
        os.environ.update(
            GATEWAY_DATABASE_URL=url,
            GATEWAY_DATA_DIR=str(data_dir),
            GATEWAY_MIGRATE_ON_START="false",
            GATEWAY_POOL_MIN_SIZE="2",
            GATEWAY_POOL_MAX_SIZE=str(max(2, 16 // workers)),
            GATEWAY_EMBEDDER=embedder,
            GATEWAY_LOG_LEVEL="WARNING",
        )
        run_workers(
            host="127.0.0.1", port=port, workers=workers, log_level="warning", access_log=False
        )
        return
    settings = Settings(
        database_url=url,
        data_dir=data_dir,
        migrate_on_start=False,
        pool_min_size=2,
        pool_max_size=16,
        embedder=embedder,  # type: ignore[arg-type]
        log_level="WARNING",
        assembler=os.environ.get("GATEWAY_ASSEMBLER"),
    )
    app = create_app(settings)
    settle_collector()  # as `ctxgw serve` does
    # As `ctxgw serve` serves: its HTTP protocol (the slow-client deadlines) included.
    uvicorn.run(
        app,
        host="127.0.0.1",
        port=port,
        log_level="warning",
        access_log=False,
        http=http_protocol(settings.header_timeout_seconds),
    )


if __name__ == "__main__":
    main(sys.argv[1:])
