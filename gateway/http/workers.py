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
from gateway.settings import Settings

__all__ = ["run_workers", "with_tcp_protocol"]


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


def _supervise(
    host: str, port: int, workers: int, log_level: str, access_log: bool, header_timeout: float
) -> None:
    config = uvicorn.Config(
        "gateway.http.asgi:from_environment",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        log_level=log_level,
        http=http_protocol(header_timeout),
        log_config=None,  # each worker configures itself (gateway.http.asgi, GATEWAY_LOG_FORMAT)
        access_log=access_log,
    )
    Multiprocess(config, sockets=[with_tcp_protocol(config.bind_socket())]).run()


def with_tcp_protocol(sock: socket.socket) -> socket.socket:
    """`sock` as a socket object that says it is TCP, so that asyncio sets TCP_NODELAY on the
    connections it accepts. The descriptor, its binding and its flags are unchanged."""
    if sock.family not in (socket.AF_INET, socket.AF_INET6) or sock.proto == socket.IPPROTO_TCP:
        return sock
    return socket.socket(sock.family, sock.type, socket.IPPROTO_TCP, fileno=sock.detach())
