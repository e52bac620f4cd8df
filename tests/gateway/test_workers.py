"""`serve --workers N`: the shared listening socket must give connections TCP_NODELAY."""

from __future__ import annotations

import asyncio
import socket

import uvicorn

from gateway.http.workers import WORKER_HEALTHCHECK_SECONDS, with_tcp_protocol, worker_config


async def _nodelay_of_accepted(listener: socket.socket) -> int:
    accepted: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    def on_connect(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        accepted.set_result(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
        writer.close()

    server = await asyncio.start_server(on_connect, sock=listener)
    async with server:
        host, port = listener.getsockname()[:2]
        _, writer = await asyncio.open_connection(host, port)
        found = await asyncio.wait_for(accepted, 5)
        writer.close()
    return found


def _bound_with_proto_zero() -> socket.socket:
    # What uvicorn's Config.bind_socket() makes for TCP (family only, so proto 0).
    sock = socket.socket(family=socket.AF_INET)
    sock.bind(("127.0.0.1", 0))
    sock.set_inheritable(True)
    return sock


def test_connections_on_the_rewrapped_socket_get_tcp_nodelay() -> None:
    # As it comes, Nagle stays on: the ~40 ms per keep-alive request this guards against.
    assert asyncio.run(_nodelay_of_accepted(_bound_with_proto_zero())) == 0
    fixed = with_tcp_protocol(_bound_with_proto_zero())
    assert fixed.proto == socket.IPPROTO_TCP and fixed.get_inheritable()
    assert asyncio.run(_nodelay_of_accepted(fixed)) != 0


def test_the_socket_uvicorn_binds_comes_out_as_tcp() -> None:
    config = uvicorn.Config("gateway.http.asgi:from_environment", host="127.0.0.1", port=0)
    fixed = with_tcp_protocol(config.bind_socket())
    assert fixed.proto == socket.IPPROTO_TCP and fixed.getsockname()[0] == "127.0.0.1"
    fixed.close()


def test_a_slowly_booting_worker_is_not_killed_for_it() -> None:
    # uvicorn's default (5 s from spawn) killed every replacement worker on busy cores.
    config = worker_config("127.0.0.1", 0, 2, "warning", access_log=False, header_timeout=10)
    assert config.timeout_worker_healthcheck == WORKER_HEALTHCHECK_SECONDS >= 30
    assert uvicorn.Config("x").timeout_worker_healthcheck < WORKER_HEALTHCHECK_SECONDS
    assert config.workers == 2 and config.factory
