"""Run the real app under uvicorn for a benchmark: ``python -m bench.serve URL PORT EMBEDDER``.

A separate process, so that the benchmark client and the server do not share one GIL.
"""

from __future__ import annotations

import logging
import sys
import tempfile
from pathlib import Path

import uvicorn

from gateway.http.app import create_app
from gateway.settings import Settings


def main(argv: list[str]) -> None:
    url, port, embedder = argv[0], int(argv[1]), argv[2]
    logging.basicConfig(level=logging.WARNING)
    settings = Settings(
        database_url=url,
        data_dir=Path(tempfile.mkdtemp(prefix="ctxgw-bench-")),
        migrate_on_start=False,
        pool_min_size=2,
        pool_max_size=16,
        embedder=embedder,  # type: ignore[arg-type]
        log_level="WARNING",
    )
    uvicorn.run(
        create_app(settings), host="127.0.0.1", port=port, log_level="warning", access_log=False
    )


if __name__ == "__main__":
    main(sys.argv[1:])
