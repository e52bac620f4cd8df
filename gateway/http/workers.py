"""Serving the app from N worker processes under uvicorn's supervisor (`serve --workers N`).

uvicorn binds the listening socket that the workers share with `proto` 0, and asyncio only turns
on TCP_NODELAY for accepted sockets whose `proto` is IPPROTO_TCP (uvicorn issue #3149). Nagle's
algorithm then holds back the second segment of each response until the client's delayed ACK:
~40 ms added to every keep-alive request. The socket is re-wrapped with its real protocol here,
before the workers inherit it.
"""

from __future__ import annotations

import contextlib
import os
import socket
import tempfile

import uvicorn
from uvicorn.supervisors import Multiprocess

from gateway.http.slow_clients import http_protocol
from gateway.shell.settings import Settings

__all__ = ["WORKER_HEALTHCHECK_SECONDS", "run_workers", "with_tcp_protocol", "worker_config"]


def run_workers(
    *,
    host: str,
    port: int,
    workers: int,
    log_level: str,
    access_log: bool = False,
    header_timeout: float = Settings().header_timeout_seconds,
) -> None:
    """Serve `gateway.http.asgi:from_environment` from `workers` processes until stopped; each
    reads its settings from the environment.

    Each worker writes its metrics under `PROMETHEUS_MULTIPROC_DIR` and a scrape of any one sums
    them all (`gateway.http.metrics`); unless the operator names one, it is a fresh directory
    for this run, as prometheus-client requires."""
    with contextlib.ExitStack() as stack:
        if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
            shared = stack.enter_context(tempfile.TemporaryDirectory(prefix="ctxgw-metrics-"))
            os.environ["PROMETHEUS_MULTIPROC_DIR"] = shared  # the workers inherit it
        _supervise(host, port, workers, log_level, access_log, header_timeout)


# uvicorn's supervisor pings every worker each half second and kills one that has not answered
# within `timeout_worker_healthcheck` (5 s by default), counting from its spawn. A worker answers
# from a thread it starts once its interpreter has booted and imported uvicorn, which on cores
# other work keeps busy takes longer than 5 s: each replacement was killed in turn, the restarts
# burned the CPU, and one worker served alone (`python -m bench mixed --workers 2` at load 13).
# A hung worker is still replaced, a minute later.
WORKER_HEALTHCHECK_SECONDS = 60


def worker_config(
    host: str, port: int, workers: int, log_level: str, access_log: bool, header_timeout: float
) -> uvicorn.Config:
    """What the supervisor runs: the app factory in `workers` processes."""
    return uvicorn.Config(
        "gateway.http.asgi:from_environment",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        log_level=log_level,
        http=http_protocol(header_timeout),
        log_config=None,  # each worker configures itself (gateway.http.asgi, GATEWAY_LOG_FORMAT)
        access_log=access_log,
        timeout_worker_healthcheck=WORKER_HEALTHCHECK_SECONDS,
    )


def _supervise(
    host: str, port: int, workers: int, log_level: str, access_log: bool, header_timeout: float
) -> None:
    config = worker_config(host, port, workers, log_level, access_log, header_timeout)
    Multiprocess(config, sockets=[with_tcp_protocol(config.bind_socket())]).run()


def with_tcp_protocol(sock: socket.socket) -> socket.socket:
    """`sock` as a socket object that says it is TCP, so that asyncio sets TCP_NODELAY on the
    connections it accepts. The descriptor, its binding and its flags are unchanged."""
    if sock.family not in (socket.AF_INET, socket.AF_INET6) or sock.proto == socket.IPPROTO_TCP:
        return sock
    return socket.socket(sock.family, sock.type, socket.IPPROTO_TCP, fileno=sock.detach())
