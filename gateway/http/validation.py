"""Request bodies → wire Structs, reporting every bad field at once.

msgspec stops at the first error; a client fixing a request wants all of them. Each field is
decoded on its own with JSON semantics (no coercion: "1" is not an int), unknown fields are named
with a suggestion, and what PostgreSQL cannot store (NUL in text) or psycopg cannot read back (an
instant outside `gateway.domain.instants`) is rejected by path.
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Collection, Mapping
from datetime import datetime
from typing import Annotated, Any, Literal, TypeVar, get_args, get_origin

import msgspec
from litestar import Request

from gateway.domain.errors import FieldError, InvalidRequestError, UnsupportedMediaTypeError
from gateway.domain.instants import outside_calendar
from gateway.requests import NOT_WHITESPACE

__all__ = [
    "JSON_MEDIA_TYPES",
    "MAX_DEPTH",
    "decode_json",
    "decode_struct",
    "nul_fields",
    "read_json",
    "require_media_type",
]

# Deeper than any request of the v1 contract needs (a batch item's labels are level 3), and far
# below the interpreter's recursion limit that the checks after parsing (field by field, NUL
# search) would otherwise run into: a client learns the bound instead of causing a 500.
MAX_DEPTH = 32

S = TypeVar("S", bound=msgspec.Struct)
JSON_MEDIA_TYPES = frozenset({"application/json"})


def require_media_type(request: Request[Any, Any, Any], accepted: Collection[str]) -> None:
    """A body labelled as something this route does not read is refused (415) rather than
    parsed anyway: a form post or `text/plain` that happens to hold JSON is a client (or a
    cross-site page, whose simple requests may send exactly those types) asking for something
    else. A body with no `Content-Type` at all is read as the route's type."""
    said = request.headers.get("content-type")
    if said is None:
        return
    media_type = said.partition(";")[0].strip().lower()
    if media_type in accepted or (
        "application/json" in accepted
        and media_type.startswith("application/")
        and media_type.endswith("+json")
    ):
        return
    raise UnsupportedMediaTypeError(
        f"Content-Type {media_type or said!r} is not read here; send {' or '.join(sorted(accepted))}"
    )


async def read_json(request: Request[Any, Any, Any]) -> Any:
    """The request's JSON body, parsed (`decode_json`), once its media type says it is JSON."""
    require_media_type(request, JSON_MEDIA_TYPES)
    return decode_json(await request.body())


def decode_json(raw: bytes) -> Any:
    """Parse a JSON document; malformed JSON or non-UTF-8 bytes are a 400 problem."""
    if not raw.strip():
        raise InvalidRequestError(
            "the request body is empty; send a JSON object", code="empty_body"
        )
    try:
        data = msgspec.json.decode(raw)
    except msgspec.DecodeError as exc:
        raise InvalidRequestError(f"malformed JSON: {exc}", code="malformed_json") from None
    except RecursionError:  # the parser's own bound, about a thousand levels
        raise _too_deep() from None
    if _deeper_than(data, MAX_DEPTH):
        raise _too_deep()
    return _integral(data)


def _integral(value: Any) -> Any:
    """Numbers with no fraction (`13.0`, `1e2`) as ints: JSON Schema's `integer` is any number
    with a zero fractional part (JSON Schema 2020-12 validation §6.1.1), and the document
    promises integers there; a float field takes an int all the same. Recursion is bounded by
    MAX_DEPTH, checked before."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [_integral(item) for item in value]
    if isinstance(value, dict):
        return {key: _integral(item) for key, item in value.items()}
    return value


def _too_deep() -> InvalidRequestError:
    return InvalidRequestError(
        f"the JSON body nests deeper than {MAX_DEPTH} levels", code="too_deep"
    )


def _deeper_than(data: Any, limit: int) -> bool:
    """Whether arrays and objects nest more than `limit` levels; iterative, so that measuring
    a deep document cannot itself exhaust the stack."""
    pending: list[tuple[Any, int]] = [(data, 1)]
    while pending:
        value, depth = pending.pop()
        children = value.values() if isinstance(value, dict) else value
        if not isinstance(value, (dict, list)):
            continue
        if depth > limit:
            return True
        pending.extend((child, depth + 1) for child in children)
    return False


def decode_struct(data: Any, struct_type: type[S], prefix: str = "") -> S:
    """Build `struct_type` from parsed JSON, or raise listing every bad field."""
    errors = _field_errors(data, struct_type, prefix)
    if errors:
        raise InvalidRequestError(_summary(errors), tuple(errors))
    return msgspec.convert(data, struct_type, strict=False)


def collect_errors(data: Any, struct_type: type[msgspec.Struct], prefix: str) -> list[FieldError]:
    return _field_errors(data, struct_type, prefix)


def _summary(errors: list[FieldError]) -> str:
    head = "; ".join(f"{e.field}: {e.message}" for e in errors[:3])
    more = f" (and {len(errors) - 3} more)" if len(errors) > 3 else ""
    return f"{len(errors)} invalid field{'s' if len(errors) > 1 else ''}: {head}{more}"


# msgspec resolves a struct's type hints each time it is asked for its fields; the wire types
# are fixed, so each is asked once.
_fields_of = functools.cache(msgspec.structs.fields)


def _field_errors(data: Any, struct_type: type[msgspec.Struct], prefix: str) -> list[FieldError]:
    if not isinstance(data, dict):
        return [FieldError(prefix.rstrip("/") or "/", "expected a JSON object")]
    fields = _fields_of(struct_type)
    known = [f.encode_name for f in fields]
    errors: list[FieldError] = []
    for key in data:
        if key not in known:
            guess = difflib.get_close_matches(str(key), known, n=1)
            hint = f"; did you mean {guess[0]!r}?" if guess else ""
            errors.append(FieldError(f"{prefix}{key}", f"unknown field{hint}"))
    for field in fields:
        path = f"{prefix}{field.encode_name}"
        if field.encode_name not in data:
            if field.required:
                errors.append(FieldError(path, "required"))
            continue
        value = data[field.encode_name]
        try:
            decoded = msgspec.json.decode(msgspec.json.encode(value), type=field.type)
        except msgspec.ValidationError as exc:
            errors.append(FieldError(path, _explain(str(exc), field.type)))
            continue
        if isinstance(decoded, datetime) and (why := outside_calendar(decoded)) is not None:
            errors.append(FieldError(path, why))
        errors.extend(
            FieldError(p, "text may not contain the NUL character (\\u0000)")
            for p in nul_fields(value, path)
        )
    return errors


def _pattern_message(pattern: str) -> str:
    """msgspec's message for a text that does not match `pattern`, as msgspec spells it."""
    try:
        msgspec.convert("", Annotated[str, msgspec.Meta(pattern=pattern)])
    except msgspec.ValidationError as exc:
        return str(exc)
    raise AssertionError(f"the empty text matches {pattern!r}")


# A task's or a turn's text of whitespace alone (`gateway.requests.NOT_WHITESPACE`).
_ONLY_WHITESPACE = _pattern_message(NOT_WHITESPACE)


def _explain(message: str, field_type: Any) -> str:
    # msgspec appends " - at `$...`" for nested paths; our paths are already explicit.
    message = message.split(" - at `$", maxsplit=1)[0]
    if message == _ONLY_WHITESPACE:
        return "must contain more than whitespace"
    choices = _literal_choices(field_type)
    if message.startswith("Invalid enum value") and choices:
        return f"{message}; expected one of {', '.join(choices)}"
    return message


def _literal_choices(field_type: Any) -> list[str]:
    if get_origin(field_type) is Literal:
        return [str(arg) for arg in get_args(field_type)]
    return [c for arg in get_args(field_type) for c in _literal_choices(arg)]


def nul_fields(value: Any, path: str) -> list[str]:
    """Paths of every string inside `value` that contains U+0000."""
    if isinstance(value, str):
        return [path] if "\x00" in value else []
    if isinstance(value, list):
        return [p for i, item in enumerate(value) for p in nul_fields(item, f"{path}/{i}")]
    if isinstance(value, Mapping):
        return [p for k, item in value.items() for p in nul_fields(item, f"{path}/{k}")]
    return []
