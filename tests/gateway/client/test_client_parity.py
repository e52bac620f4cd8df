"""`Client` and `AsyncClient` are one set of methods: the same names, parameters and docs; the
async ones awaited (coroutines, or async iterators for the listings)."""

from __future__ import annotations

import inspect
from unittest import mock

import pytest

from gateway.client import AsyncClient, Client


def _methods(kind: type) -> dict[str, object]:
    public = (name for name in dir(kind) if not name.startswith("_"))
    return {name: getattr(kind, name) for name in public if callable(getattr(kind, name))}


def test_the_two_clients_have_the_same_methods() -> None:
    plain, awaited = _methods(Client), _methods(AsyncClient)
    assert set(plain) - {"close"} == set(awaited) - {"aclose"}
    assert len(plain) > 30  # every endpoint, not an empty class
    for name in sorted(set(plain) - {"close", "from_environment"}):
        sent, received = plain[name], awaited[name]
        assert callable(sent) and callable(received)
        assert sent.__doc__ == received.__doc__, name
        sync, asynchronous = inspect.signature(sent), inspect.signature(received)
        assert next(iter(sync.parameters)) == "self", name
        assert sync.parameters == asynchronous.parameters, name
        assert not inspect.iscoroutinefunction(sent) and not inspect.isasyncgenfunction(sent)
        listing = inspect.isgeneratorfunction(sent)
        assert listing == inspect.isasyncgenfunction(received), name
        assert listing != inspect.iscoroutinefunction(received), name
        returned = str(sync.return_annotation)
        assert str(asynchronous.return_annotation) == ("Async" if listing else "") + returned
    assert inspect.signature(Client.from_environment).parameters == (
        inspect.signature(AsyncClient.from_environment).parameters
    )


def test_the_methods_read_as_methods() -> None:
    assert Client.search.__qualname__ == "Client.search"
    assert str(inspect.signature(Client.iter_receipts).return_annotation) == (
        "Iterator[ReceiptSummary]"
    )
    assert "Compile one scope now" in str(AsyncClient.compile.__doc__)
    spec = mock.create_autospec(Client, instance=True)
    spec.search("q", limit=2)
    with pytest.raises(TypeError):
        spec.search()  # an autospec keeps each method's parameters
