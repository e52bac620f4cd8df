"""Request bodies, query parameters and error responses in the OpenAPI document (`/schema`).

Handlers read raw bodies and decode them with msgspec themselves, so that a bad request lists
every bad field at once (RFC 9457, `gateway.http.validation`); that hides their shapes from
Litestar's schema generation. Each route names its wire type instead (``operation_class=``), and
the type's JSON Schema, as msgspec derives it from the very type that decodes the request, goes
into the operation: the document cannot drift from what the gateway accepts.

Response bodies are the `gateway.responses` Structs the handlers return, which Litestar documents
itself. What it cannot see is added here, to every operation alike: the problem responses
(`application/problem+json`, the `Problem` Struct, one shared component per status) and the
bodies of text media types (the export's JSONL, the checkpoint's signed note). Every route's
operation class comes from this module, so no route goes undocumented (`tests/gateway/
test_openapi.py` holds every operation of the document to it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import msgspec
from litestar.enums import ParamType
from litestar.openapi.spec import (
    Components,
    OpenAPIMediaType,
    OpenAPIResponse,
    OpenAPIType,
    Operation,
    Parameter,
    Reference,
    RequestBody,
    Schema,
)

from gateway.http.problems import MEDIA_TYPE as PROBLEM_MEDIA_TYPE
from gateway.responses.problems import Problem

__all__ = [
    "DOCUMENTED",
    "PROBLEM_STATUSES",
    "TextResponse",
    "json_body",
    "problem_components",
    "query_parameters",
    "text_body",
    "text_response",
]

# The problems any route may answer with, and when (gateway.domain.errors, gateway.http.problems).
PROBLEM_STATUSES = {
    400: "The body is not JSON (malformed_json, empty_body)",
    401: "The API key is missing, malformed, unknown or revoked",
    403: "The key's role, namespaces or purposes do not allow it, or a policy refused it",
    404: "Absent, or another tenant's",
    408: "The request body arrived too slowly (GATEWAY_BODY_TIMEOUT_SECONDS)",
    409: "The state does not allow it (a retired memory, a reused idempotency key)",
    413: "The body is larger than the limit",
    415: "The body's media type is not one this route reads",
    422: "Invalid content: every bad field is listed in `errors`",
    429: "Too many requests for this key",
    503: "A dependency failed; nothing was disclosed (fail closed)",
}

# JSON Schema keywords msgspec emits, by the name of Litestar's Schema field that holds them.
_RENAMED = {
    "maxLength": "max_length",
    "minLength": "min_length",
    "maxItems": "max_items",
    "minItems": "min_items",
    "exclusiveMinimum": "exclusive_minimum",
    "exclusiveMaximum": "exclusive_maximum",
}
_SAME = frozenset(
    {"title", "description", "pattern", "minimum", "maximum", "default", "enum", "format"}
)


def schema_of(struct: type[msgspec.Struct]) -> Schema:
    """The JSON Schema of ``struct`` (msgspec's), as Litestar's `Schema`, definitions inlined."""
    document = msgspec.json.schema(struct)
    return _converted(document, document.get("$defs", {}))


def _converted(node: dict[str, Any], defs: dict[str, Any]) -> Schema:  # noqa: C901  one branch per JSON Schema keyword
    if "$ref" in node:  # wire types are not recursive: inline the definition
        return _converted(defs[node["$ref"].rsplit("/", 1)[1]], defs)
    fields: dict[str, Any] = {}
    for key, value in node.items():
        if key == "type":
            fields["type"] = OpenAPIType(value)
        elif key == "properties":
            fields["properties"] = {name: _converted(v, defs) for name, v in value.items()}
        elif key == "items":
            fields["items"] = _converted(value, defs)
        elif key == "anyOf":
            fields["any_of"] = [_converted(v, defs) for v in value]
        elif key == "additionalProperties":
            fields["additional_properties"] = (
                value if isinstance(value, bool) else _converted(value, defs)
            )
        elif key == "required":
            fields["required"] = list(value)
        elif key in _RENAMED:
            fields[_RENAMED[key]] = value
        elif key in _SAME:
            fields[key] = value
        elif key != "$defs":
            # A keyword this does not carry over would silently vanish from the document.
            raise ValueError(f"JSON Schema keyword {key!r} has no mapping to OpenAPI here")
    return Schema(**fields)


def problem_components() -> Components:
    """The shared problem responses the operations refer to (`#/components/responses/...`)."""
    content = {PROBLEM_MEDIA_TYPE: OpenAPIMediaType(schema=schema_of(Problem))}
    return Components(
        responses={
            _problem_name(status): OpenAPIResponse(description=description, content=content)
            for status, description in PROBLEM_STATUSES.items()
        }
    )


def _problem_name(status: int) -> str:
    return f"Problem{status}"


@dataclass(frozen=True, slots=True)
class TextResponse:
    """A 200 body that is text of ``media_type``, not a JSON document Litestar could describe."""

    media_type: str
    description: str


def _documented(
    *,
    request_body: RequestBody | None = None,
    parameters: Sequence[Parameter] = (),
    text: TextResponse | None = None,
) -> type[Operation]:
    problems: dict[str, OpenAPIResponse | Reference] = {
        str(status): Reference(ref=f"#/components/responses/{_problem_name(status)}")
        for status in PROBLEM_STATUSES
    }

    @dataclass
    class Documented(Operation):
        def __post_init__(self) -> None:
            # Litestar's own 400 (its ValidationException) is replaced by ours, a problem.
            responses = {**(self.responses or {}), **problems}
            if text is not None:
                responses["200"] = OpenAPIResponse(
                    description=text.description,
                    content={text.media_type: OpenAPIMediaType(schema=_TEXT)},
                )
            self.responses = responses
            if request_body is not None:
                self.request_body = request_body
            if parameters:
                self.parameters = [*(self.parameters or ()), *parameters]

    return Documented


_TEXT = Schema(type=OpenAPIType.STRING)
DOCUMENTED = _documented()  # an operation that reads no body and answers JSON


def json_body(struct: type[msgspec.Struct], description: str | None = None) -> type[Operation]:
    """An operation whose request body is ``struct`` as JSON."""
    return _documented(request_body=_body("application/json", schema_of(struct), description))


def text_body(media_type: str, description: str) -> type[Operation]:
    """An operation whose request body is a text document of ``media_type`` (e.g. YAML)."""
    return _documented(request_body=_body(media_type, _TEXT, description))


def text_response(media_type: str, description: str) -> type[Operation]:
    """An operation that answers text of ``media_type``."""
    return _documented(text=TextResponse(media_type, description))


def _body(media_type: str, schema: Schema, description: str | None) -> RequestBody:
    return RequestBody(
        content={media_type: OpenAPIMediaType(schema=schema)},
        description=description,
        required=True,
    )


def query_parameters(
    struct: type[msgspec.Struct], text: TextResponse | None = None
) -> type[Operation]:
    """An operation whose query parameters are the fields of ``struct``; with ``text``, it
    answers text of that media type."""
    schema = schema_of(struct)
    required = set(schema.required or ())
    parameters = [
        Parameter(name=name, param_in=ParamType.QUERY, schema=field, required=name in required)
        for name, field in (schema.properties or {}).items()
        if isinstance(field, Schema)
    ]
    return _documented(parameters=parameters, text=text)
