"""Request bodies and query parameters in the OpenAPI document (`/schema`).

Handlers read raw bodies and decode them with msgspec themselves, so that a bad request lists
every bad field at once (RFC 9457, `gateway.http.validation`); that hides their shapes from
Litestar's schema generation. Each route names its wire type instead (``operation_class=``), and
the type's JSON Schema, as msgspec derives it from the very type that decodes the request, goes
into the operation: the document cannot drift from what the gateway accepts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import msgspec
from litestar.enums import ParamType
from litestar.openapi.spec import (
    OpenAPIMediaType,
    OpenAPIType,
    Operation,
    Parameter,
    RequestBody,
    Schema,
)

__all__ = ["json_body", "query_parameters", "text_body"]

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


def json_body(struct: type[msgspec.Struct], description: str | None = None) -> type[Operation]:
    """An operation whose request body is ``struct`` as JSON."""
    return _with_body("application/json", schema_of(struct), description)


def text_body(media_type: str, description: str) -> type[Operation]:
    """An operation whose request body is a text document of ``media_type`` (e.g. YAML)."""
    return _with_body(media_type, Schema(type=OpenAPIType.STRING), description)


def _with_body(media_type: str, schema: Schema, description: str | None) -> type[Operation]:
    @dataclass
    class WithBody(Operation):
        def __post_init__(self) -> None:
            self.request_body = RequestBody(
                content={media_type: OpenAPIMediaType(schema=schema)},
                description=description,
                required=True,
            )

    return WithBody


def query_parameters(struct: type[msgspec.Struct]) -> type[Operation]:
    """An operation whose query parameters are the fields of ``struct``."""
    schema = schema_of(struct)
    required = set(schema.required or ())
    parameters = [
        Parameter(name=name, param_in=ParamType.QUERY, schema=field, required=name in required)
        for name, field in (schema.properties or {}).items()
        if isinstance(field, Schema)
    ]

    @dataclass
    class WithQuery(Operation):
        def __post_init__(self) -> None:
            self.parameters = [*(self.parameters or ()), *parameters]

    return WithQuery
