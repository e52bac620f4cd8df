"""Every v1 endpoint as a method of both clients, written once: `Endpoints`, their common base.

An endpoint is its function in `gateway.client.calls` (the method's arguments in, the `Call` to
send out) and one line here. When a client class is defined, it makes each of them its own
method (`_endpoint`, `_pages`: how it sends a call): `Client.search` returns the results,
`AsyncClient.search` is a coroutine of them; listings are an iterator or an async iterator.
`Method` says those types to the type checker.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator, Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Concatenate, Generic, ParamSpec, TypeVar, overload

import httpx

from gateway import __version__
from gateway.client import calls
from gateway.client.call import Call, Page, answer
from gateway.client.errors import ConnectionFailedError
from gateway.client.retrying import Retries, wait_after_error, wait_after_status

if TYPE_CHECKING:
    from gateway.client.asynchronous import AsyncClient
    from gateway.client.sync import Client

__all__ = [
    "DEFAULT_URL",
    "Endpoints",
    "Method",
    "client_headers",
    "endpoint",
    "key_and_url",
    "now",
    "pages",
]

P = ParamSpec("P")
T = TypeVar("T")
S = TypeVar("S")
A = TypeVar("A")
Item = TypeVar("Item")
DEFAULT_URL = "http://127.0.0.1:8080"


def key_and_url(environ: Mapping[str, str]) -> tuple[str, str]:
    key = environ.get("CTXGW_API_KEY", "")
    if not key:
        raise ValueError("CTXGW_API_KEY is not set: the client needs an API key")
    return key, environ.get("CTXGW_URL") or DEFAULT_URL


def client_headers(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}", "User-Agent": f"ctxgw-client/{__version__}"}


def now() -> datetime:
    """The wall clock, for Retry-After dates (the shell may read it; nothing pure does)."""
    return datetime.now(UTC)


class Method(Generic[P, S, A]):
    """A method of both clients made from `build`, taking its arguments and returning `S` from a
    `Client`, `A` from an `AsyncClient` (`endpoint`, `pages`)."""

    def __init__(self, build: Callable[P, Call[Any]], listing: bool) -> None:
        self.build, self.listing = build, listing

    @overload
    def __get__(self, client: None, owner: type[Client]) -> Callable[Concatenate[Client, P], S]: ...
    @overload
    def __get__(
        self, client: None, owner: type[AsyncClient]
    ) -> Callable[Concatenate[AsyncClient, P], A]: ...
    @overload
    def __get__(self, client: Client, owner: type[Client]) -> Callable[P, S]: ...
    @overload
    def __get__(self, client: AsyncClient, owner: type[AsyncClient]) -> Callable[P, A]: ...
    def __get__(self, client: object, owner: type[Endpoints]) -> object:
        return self  # only read on `Endpoints`: each client holds its own methods


def endpoint(build: Callable[P, Call[T]]) -> Method[P, T, Coroutine[Any, Any, T]]:
    """One call: its answer from a `Client`, a coroutine of it from an `AsyncClient`."""
    return Method(build, listing=False)


def pages(
    build: Callable[P, Call[Page[Item]]],
) -> Method[P, Iterator[Item], AsyncIterator[Item]]:
    """A paged listing: every item, a page at a time, an iterator or an async iterator."""
    return Method(build, listing=True)


class Endpoints:
    """What both clients share: every endpoint, and the decisions around sending a call. Each
    client makes every endpoint its own method (`_endpoint`, `_pages`: how it sends a call)."""

    _retries: Retries

    health = endpoint(calls.health)
    ready = endpoint(calls.ready)
    write_memory = endpoint(calls.write_memory)
    write_batch = endpoint(calls.write_batch)
    delete_memory = endpoint(calls.delete_memory)
    context = endpoint(calls.context)
    search = endpoint(calls.search)
    timeline = endpoint(calls.timeline)
    fetch = endpoint(calls.fetch)
    fetch_claims = endpoint(calls.fetch_claims)
    compile = endpoint(calls.compile_now)
    compile_later = endpoint(calls.compile_later)
    compile_job = endpoint(calls.compile_job)
    conflicts = endpoint(calls.conflicts)
    resolve_conflict = endpoint(calls.resolve_conflict)
    receipt = endpoint(calls.receipt)
    receipts = endpoint(calls.receipts)
    iter_receipts = pages(calls.iter_receipts)
    verify_receipt = endpoint(calls.verify_receipt)
    receipt_proof = endpoint(calls.receipt_proof)
    checkpoint = endpoint(calls.checkpoint)
    export_receipts = endpoint(calls.export_receipts)
    replay = endpoint(calls.replay)
    upload_policy = endpoint(calls.upload_policy)
    activate_policy = endpoint(calls.activate_policy)
    active_policy = endpoint(calls.active_policy)
    policy = endpoint(calls.policy)
    what_if = endpoint(calls.what_if)
    create_session = endpoint(calls.create_session)
    append_turns = endpoint(calls.append_turns)
    session_context = endpoint(calls.session_context)
    session = endpoint(calls.session)
    history = endpoint(calls.history)
    iter_history = pages(calls.iter_history)

    def __init_subclass__(cls) -> None:
        super().__init_subclass__()
        for name, member in vars(Endpoints).items():
            if isinstance(member, Method) and getattr(cls, name) is member:
                made = cls._pages if member.listing else cls._endpoint
                setattr(cls, name, _method(made(member.build), member.build, cls, name))

    @staticmethod
    def _endpoint(build: Callable[P, Call[T]]) -> Callable[Concatenate[Any, P], object]:
        raise NotImplementedError

    @staticmethod
    def _pages(build: Callable[P, Call[Page[Item]]]) -> Callable[Concatenate[Any, P], object]:
        raise NotImplementedError

    @staticmethod
    def _request(http: httpx.Client | httpx.AsyncClient, call: Call[T]) -> httpx.Request:
        headers = {"Content-Type": call.content_type, **dict(call.headers)}
        return http.build_request(
            call.method, call.path, content=call.body, params=call.params, headers=headers
        )

    def _wait_after_error(self, attempt: int, call: Call[T], error: httpx.TransportError) -> float:
        """How long to wait before sending `call` again, or the error raised."""
        wait = wait_after_error(self._retries, attempt, error, call.resendable)
        if wait is None:
            raise self._failed(call, error) from error
        return wait

    def _wait_after(self, attempt: int, response: httpx.Response) -> float | None:
        """How long to wait before sending again, or None to answer with `response`."""
        retry_after = response.headers.get("retry-after")
        return wait_after_status(self._retries, attempt, response.status_code, retry_after, now())

    @staticmethod
    def _failed(call: Call[T], error: httpx.TransportError) -> ConnectionFailedError:
        return ConnectionFailedError(f"{call.method} {call.path}: {error}")

    @staticmethod
    def _answer(call: Call[T], response: httpx.Response, body: bytes) -> T:
        content_type = response.headers.get("content-type", "")
        return answer(call, response.status_code, content_type, body)


def _method(
    method: Callable[..., object], build: Callable[..., object], owner: type, name: str
) -> Callable[..., object]:
    """`method` as `help()` and `inspect` show a method: `name`, `build`'s doc and parameters
    after `self`, returning the call's answer (or an iterator of a listing's items)."""
    signature = inspect.signature(build)
    answer = str(signature.return_annotation).removeprefix("Call[").removesuffix("]")
    if inspect.isgeneratorfunction(method) or inspect.isasyncgenfunction(method):
        item = answer.removeprefix("Page[").removesuffix("]")
        answer = f"{'Async' if inspect.isasyncgenfunction(method) else ''}Iterator[{item}]"
    receiver = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)
    parameters = [receiver, *signature.parameters.values()]
    vars(method)["__signature__"] = signature.replace(
        parameters=parameters, return_annotation=answer
    )
    method.__name__, method.__qualname__ = name, f"{owner.__qualname__}.{name}"
    method.__module__, method.__doc__ = owner.__module__, build.__doc__
    return method
