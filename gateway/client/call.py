"""A call to the gateway as a value (`Call`: what to send, how to read the answer) and the
reading of an answer, success or problem (`answer`); the encodings calls are written with.
No I/O: `gateway.client.calls` writes every endpoint as a `Call`, the clients send them."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, TypeVar
from urllib.parse import quote

import msgspec

from gateway.client.errors import UnexpectedResponseError, problem_error
from gateway.client.export import Sink
from gateway.responses.problems import Problem

__all__ = [
    "JSON",
    "Call",
    "Page",
    "answer",
    "as_text",
    "decoder",
    "json_body",
    "maybe",
    "query_params",
    "segment",
]

T = TypeVar("T")
U = TypeVar("U")
Item = TypeVar("Item")
JSON = "application/json"


@dataclass(frozen=True, slots=True)
class Call(Generic[T]):
    """One request and the reader of its success body. `resendable`: sending it again after an
    answer was lost cannot do twice what was meant once (a read of the log, a keyed write).
    `stream`: a success body goes chunk by chunk into the sink it opens (never read whole)."""

    method: str
    path: str
    read: Callable[[bytes], T]
    resendable: bool
    body: bytes | None = None
    content_type: str = JSON
    params: tuple[tuple[str, str], ...] = ()
    headers: tuple[tuple[str, str], ...] = ()
    stream: Callable[[], AbstractContextManager[Sink[T]]] | None = None

    def then(self, after: Callable[[T], U]) -> Call[U]:
        """The same request, its answer read on by `after`."""
        read = self.read
        return Call(
            self.method, self.path, lambda body: after(read(body)), self.resendable, self.body,
            self.content_type, self.params, self.headers,
        )  # fmt: skip


@dataclass(frozen=True, slots=True)
class Page(Generic[Item]):
    """One page of a listing: its items, and the call of the next page (None after the last)."""

    items: Sequence[Item]
    following: Call[Page[Item]] | None


def decoder(kind: type[T]) -> Callable[[bytes], T]:
    return msgspec.json.Decoder(kind).decode


def as_text(body: bytes) -> str:
    return body.decode("utf-8")


def json_body(members: Mapping[str, Any]) -> bytes:
    return msgspec.json.encode({k: v for k, v in members.items() if v is not None})


def segment(value: str) -> str:
    return quote(value, safe="")  # an id never reaches another path


def query_params(members: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    def spell(value: Any) -> str:
        return value.isoformat() if isinstance(value, datetime) else str(value)

    return tuple((k, spell(v)) for k, v in members.items() if v is not None)


def maybe(value: T | None, make: Callable[[T], U]) -> U | None:
    return None if value is None else make(value)


_PROBLEM = msgspec.json.Decoder(Problem)


def answer(call: Call[T], status: int, content_type: str, body: bytes) -> T:
    """The success body read as the call's type, or the problem raised as its typed error."""
    if 200 <= status < 300:
        try:
            return call.read(body)
        except (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError) as exc:
            raise UnexpectedResponseError(
                status, f"the body is not the contract's: {exc}", body
            ) from exc
    if content_type.split(";", maxsplit=1)[0].strip() != "application/problem+json":
        raise UnexpectedResponseError(status, "an error without a problem body", body)
    try:
        problem = _PROBLEM.decode(body)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise UnexpectedResponseError(status, f"a malformed problem body: {exc}", body) from exc
    raise problem_error(problem)
