"""Canonical receipt bytes: RFC 8785 (JSON Canonicalization Scheme) with a stricter profile.

A receipt body is signed and hashed byte-exact, so there must be exactly one byte string for a
given value. RFC 8785 gives that for JSON in general; this profile removes the two places where
implementations still disagree in practice:

- **No floats.** ECMAScript number formatting (RFC 8785 §3.2.2.3) is easy to get subtly wrong
  across languages. Scores travel as fixed-point integers or decimal strings instead.
- **ASCII object keys.** RFC 8785 §3.2.3 sorts keys by UTF-16 code units; with ASCII keys every
  sort order (UTF-8, UTF-16, code points) agrees. Values may hold any Unicode text.

Integers must lie in the I-JSON range, ±(2**53 - 1) (RFC 7493 §2.2), as RFC 8785 requires.

`canonicalize` is for producers and raises `CanonicalizationError` naming the offending path.
`decode_body` is for verifiers: it accepts bytes only if they are exactly the canonical form of
the JSON object they parse to, and otherwise raises `NotCanonicalError` (code ``not_canonical``)
or `MalformedError` (code ``malformed``, not JSON at all).

Not done here, deliberately: schema validation (see `receipts.body`) and any normalisation of
Unicode text (the bytes the gateway saw are the bytes it signs).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

import msgspec
import rfc8785

from receipts.errors import CanonicalizationError, MalformedError, NotCanonicalError

__all__ = ["MAX_SAFE_INTEGER", "CanonicalTemplate", "canonicalize", "decode_body"]

# RFC 7493 §2.2 / RFC 8785 §3.2.2.3: integers beyond 2**53 - 1 lose precision as IEEE doubles.
MAX_SAFE_INTEGER: Final = 2**53 - 1

_ENCODER: Final = msgspec.json.Encoder(order="sorted")


def canonicalize(obj: object) -> bytes:
    """Return the RFC 8785 bytes of ``obj`` under this package's profile.

    ``obj`` is built from ``dict`` (str keys), ``list``/``tuple``, ``str``, ``int``, ``bool`` and
    ``None``. Raises `CanonicalizationError` (with ``.path`` and ``.value``) for a float, a
    non-ASCII or non-string key, an integer outside ±(2**53 - 1), a string that is not valid
    Unicode (lone surrogates) or any other type.
    """
    if _plain(obj):
        # Within the profile (no floats, ASCII keys, safe integers) RFC 8785 is exactly what
        # msgspec writes with sorted keys: no whitespace, no ASCII escaping; JCS escapes `"`,
        # backslash and U+0000-U+001F alone, with the same short forms and lower-case `\u00xx`,
        # and ASCII keys sort alike by code point and by UTF-16 unit. Tested against the rfc8785
        # package, which is still the path for anything unusual. (The C JSON encoder writes the
        # same bytes ~9x slower.) A lone surrogate shows up as the encode error; the full check
        # below then names its path.
        try:
            return _ENCODER.encode(obj)
        except UnicodeEncodeError:
            pass
    _check(obj, "$")
    try:
        return rfc8785.dumps(obj)  # type: ignore[arg-type]  # shape checked by _check above
    except rfc8785.CanonicalizationError as exc:  # pragma: no cover - _check rejects these first
        raise CanonicalizationError(str(exc), path="$", value=obj) from exc


class CanonicalTemplate:
    """The canonical bytes of an object with one member still to be filled: made once, filled
    cheaply. RFC 8785 orders members by key whatever their values, so the member's place is known
    before its value; a writer can canonicalize a large body before taking a lock, and under
    the lock only fill in the member the lock decides (a receipt's log position).

    `fill(value)` returns exactly `canonicalize({**obj, key: value})`."""

    def __init__(self, obj: Mapping[str, object], key: str) -> None:
        self._obj = dict(obj)
        self._key = key
        # A placeholder no value can hold unnoticed: if the encoded object already contains it
        # (some value spells it), `fill` falls back to canonicalizing the whole object.
        self._placeholder = canonicalize("\u0000" + key)
        self._template = canonicalize({**self._obj, key: "\u0000" + key})
        self._spliceable = self._template.count(self._placeholder) == 1

    def fill(self, value: object) -> bytes:
        if not self._spliceable:
            return canonicalize({**self._obj, self._key: value})
        return self._template.replace(self._placeholder, canonicalize(value), 1)


def decode_body(body: bytes) -> dict[str, Any]:
    """Parse receipt body bytes, insisting that they are canonical.

    Raises `MalformedError` if the bytes are not a JSON object and `NotCanonicalError` if they
    are JSON but not byte-identical to `canonicalize` of what they parse to (whitespace, key
    order, escapes, duplicate keys, floats, non-ASCII keys, a byte-order mark...).
    """
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NotCanonicalError("body is not valid UTF-8") from exc
    try:
        value = json.loads(
            text,
            parse_float=_reject_float,
            parse_constant=_reject_constant,
            object_pairs_hook=_unique_keys,
        )
    except (ValueError, RecursionError) as exc:
        raise MalformedError(f"body is not JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise MalformedError("body is not a JSON object")
    try:
        again = canonicalize(value)
    except CanonicalizationError as exc:
        raise NotCanonicalError(f"body is outside the canonical profile: {exc}") from exc
    if again != body:
        raise NotCanonicalError("body bytes differ from their RFC 8785 form")
    return value


def _plain(value: object) -> bool:
    """Within the profile and built from the exact builtin types only (subclasses, which might
    serialize their own way, take the reference path). No paths are built: it is the hot path (a
    receipt body has thousands of nodes), so the walk keeps its own stack instead of a call per
    node, and checks each object's keys in C: their types as one set, their text joined."""
    stack: list[object] = [value]
    pop, extend = stack.pop, stack.extend
    while stack:
        node = pop()
        kind = type(node)
        if kind is str or kind is bool or node is None:
            continue
        if kind is int:
            if -MAX_SAFE_INTEGER <= node <= MAX_SAFE_INTEGER:  # type: ignore[operator]
                continue
            return False
        if kind is dict:
            members: dict[str, object] = node  # type: ignore[assignment]
            if members and (set(map(type, members)) != _STR_ONLY or not "".join(members).isascii()):
                return False
            extend(members.values())
        elif kind is list or kind is tuple:
            extend(node)  # type: ignore[arg-type]
        else:
            return False
    return True


_STR_ONLY: Final = frozenset({str})


def _check(value: object, path: str) -> None:  # noqa: C901  one branch per JSON type of RFC 8785 section 3.2
    # bool before int: bool is an int subclass and is fine as it is.
    if value is None or isinstance(value, bool):
        return
    if isinstance(value, int):
        if not -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
            raise CanonicalizationError(
                "integer outside ±(2**53 - 1) (RFC 8785 §3.2.2.3)", path=path, value=value
            )
        return
    if isinstance(value, float):
        raise CanonicalizationError(
            "floats are not allowed in receipt bodies; use a fixed-point integer or a decimal "
            "string",
            path=path,
            value=value,
        )
    if isinstance(value, str):
        _check_text(value, path)
        return
    if isinstance(value, list | tuple):
        for index, item in enumerate(value):
            _check(item, f"{path}[{index}]")
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise CanonicalizationError("object key is not a string", path=path, value=key)
            if not key.isascii():
                raise CanonicalizationError("object key is not ASCII", path=path, value=key)
            _check(item, _member_path(path, key))
        return
    raise CanonicalizationError(f"unsupported type {type(value).__name__}", path=path, value=value)


def _check_text(text: str, path: str) -> None:
    if text.isascii():
        return
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise CanonicalizationError(
            "string is not valid Unicode (lone surrogate)", path=path, value=text
        ) from exc


def _member_path(path: str, key: str) -> str:
    if key.isidentifier():
        return f"{path}.{key}"
    return f"{path}[{json.dumps(key)}]"


def _reject_float(literal: str) -> object:
    raise NotCanonicalError(f"number {literal} is not an integer; floats are not allowed")


def _reject_constant(literal: str) -> object:
    raise NotCanonicalError(f"{literal} is not JSON")


def _unique_keys(pairs: list[tuple[str, Any]]) -> Mapping[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise NotCanonicalError(f"duplicate object key {key!r}")
        result[key] = value
    return result
