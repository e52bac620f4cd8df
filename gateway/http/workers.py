"""Serving the app from N worker processes under uvicorn's supervisor (`serve --workers N`).

uvicorn binds the listening socket that the workers share with `proto` 0, and asyncio only turns
on TCP_NODELAY for accepted sockets whose `proto` is IPPROTO_TCP (uvicorn issue #3149). Nagle's
algorithm then holds back the second segment of each response until the client's delayed ACK:
~40 ms added to every keep-alive request. The socket is re-wrapped with its real protocol here,
before the workers inherit it.
"""

from __future__ import annotations

import socket

import uvicorn
from uvicorn.supervisors import Multiprocess

__all__ = ["run_workers", "with_tcp_protocol"]


def run_workers(
    *, host: str, port: int, workers: int, log_level: str, access_log: bool = True
) -> None:
    """Serve `gateway.http.asgi:from_environment` from `workers` processes until stopped; each
    reads its settings from the environment."""
    config = uvicorn.Config(
        "gateway.http.asgi:from_environment",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        log_level=log_level,
        access_log=access_log,
    )
    Multiprocess(config, sockets=[with_tcp_protocol(config.bind_socket())]).run()


def with_tcp_protocol(sock: socket.socket) -> socket.socket:
    """`sock` as a socket object that says it is TCP, so that asyncio sets TCP_NODELAY on the
    connections it accepts. The descriptor, its binding and its flags are unchanged."""
    if sock.family not in (socket.AF_INET, socket.AF_INET6) or sock.proto == socket.IPPROTO_TCP:
        return sock
    return socket.socket(sock.family, sock.type, socket.IPPROTO_TCP, fileno=sock.detach())
