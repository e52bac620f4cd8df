"""Request bodies, query parameters, security and error responses in the OpenAPI document
(`/schema`).

Handlers read raw bodies and decode them with msgspec themselves, so that a bad request lists
every bad field at once (RFC 9457, `gateway.http.validation`); that hides their shapes from
Litestar's schema generation. Each route names its wire type instead (``operation_class=``), and
the type's JSON Schema, as msgspec derives it from the very type that decodes the request, goes
into the document: it cannot drift from what the gateway accepts. Each body is a named schema
component (`#/components/schemas/ContextIn`, the Struct's name, its nested Structs named too),
so that a generated client has one `ContextIn` model rather than a name made of the operation's
and the type's (`GetContextContextIn`). Litestar makes `components/schemas` from the types it
documents itself; `DocumentConfig` makes a `Document` that adds the bodies' when serialized.

Response bodies are the `gateway.responses` Structs the handlers return, which Litestar documents
itself. What it cannot see is added here: the bodies of text media types (the export's JSONL, the
checkpoint's signed note), the bearer key every `/v1` operation requires (`securitySchemes`,
`security`), and the problem responses (`application/problem+json`, the `Problem` Struct, one
shared component per status) that the operation can answer with. Those follow from what the
operation is: what any request may meet (`PROBLEMS_OF_ANY`), what a keyed one may
(`PROBLEMS_OF_A_KEY`), one that reads a body, a query, a path parameter, plus the statuses its
route names itself (``also=``: a 404 for an id in the body, a 409 for a state). Every route's
operation class comes from this module, so no route goes undocumented (`tests/gateway/
test_openapi.py` holds every operation of the document to it).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import msgspec
from litestar.enums import ParamType
from litestar.openapi import OpenAPIConfig, ResponseSpec
from litestar.openapi.spec import (
    Components,
    OpenAPI,
    OpenAPIMediaType,
    OpenAPIResponse,
    OpenAPIType,
    Operation,
    Parameter,
    Reference,
    RequestBody,
    Schema,
    SecurityScheme,
    Tag,
)

from gateway.http.problems import MEDIA_TYPE as PROBLEM_MEDIA_TYPE
from gateway.responses.problems import Problem

__all__ = [
    "COMPILING",
    "DISCLOSURE",
    "DOCUMENTED",
    "MEMORIES",
    "OPERATIONS",
    "POLICIES",
    "PROBLEM_SCHEMA",
    "PROBLEM_STATUSES",
    "RECEIPTS",
    "SESSIONS",
    "TAGS",
    "Document",
    "DocumentConfig",
    "TextResponse",
    "body_components",
    "components",
    "documented",
    "json_body",
    "query_parameters",
    "text_body",
    "text_response",
]

# The areas of the API, one tag each, in the order the docs list them.
MEMORIES = "memories"
DISCLOSURE = "disclosure"
SESSIONS = "sessions"
COMPILING = "compiling"
RECEIPTS = "receipts"
POLICIES = "policies"
OPERATIONS = "operations"
TAGS = [
    Tag(MEMORIES, "Write, supersede, delete and erase memories"),
    Tag(DISCLOSURE, "What an agent is shown: context bundles, search, timeline, fetch; receipted"),
    Tag(SESSIONS, "Conversations: turns, their history and each step's context"),
    Tag(COMPILING, "Turns and episodes compiled into typed facts, and their conflicts"),
    Tag(RECEIPTS, "The signed receipt log: read, verify, prove, export, replay (auditors)"),
    Tag(POLICIES, "Policy bundles: upload, activate, try against the past (admins)"),
    Tag(OPERATIONS, "Health, readiness and metrics, for the operator (no key)"),
]
BEARER = "bearerAuth"
_SECURITY = {
    BEARER: SecurityScheme(
        type="http",
        scheme="bearer",
        description="An API key (`ctxgw keys create`): `Authorization: Bearer <key>`",
    )
}

# The problems any route may answer with, and when (gateway.domain.errors, gateway.http.problems).
PROBLEM_STATUSES = {
    400: "The body is not JSON (malformed_json, empty_body)",
    401: "The API key is missing, malformed, unknown or revoked; or the request carries two "
    "Authorization headers (refused on every route, keyed or not)",
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
# What any request may meet: two Authorization headers are refused before any route runs.
PROBLEMS_OF_ANY = frozenset({401})
# What a request with a key may meet: a role, namespace or purpose it lacks, or a policy's
# refusal (403); its rate limit (429); the database down (503; the key is looked up there).
PROBLEMS_OF_A_KEY = frozenset({403, 429, 503})
# What reading a body may meet: not JSON (400), too slow (408), too large (413), of another media
# type (415), invalid content (422).
PROBLEMS_OF_A_BODY = frozenset({400, 408, 413, 415, 422})
PROBLEMS_OF_A_QUERY = frozenset({422})
# An id in the path: NUL in it (400, `bad_path`), or no such thing the key may see (404).
PROBLEMS_OF_A_PATH = frozenset({400, 404})

_SAME = frozenset(
    {"title", "description", "pattern", "minimum", "maximum", "default", "enum", "format"}
)


_COMPONENT = "#/components/schemas/{name}"


def schema_of(struct: type[msgspec.Struct]) -> Schema:
    """The JSON Schema of ``struct`` (msgspec's), as Litestar's `Schema`, definitions inlined."""
    document = msgspec.json.schema(struct)
    converted = _converted(document, document.get("$defs", {}))
    assert isinstance(converted, Schema)  # inlined: no reference left
    return converted


def body_components(structs: Iterable[type[msgspec.Struct]]) -> dict[str, dict[str, Any]]:
    """The schema components of request bodies (msgspec's JSON Schema, as OpenAPI writes it),
    by name: each Struct and the Structs it holds, referring to one another by name."""
    _, defs = msgspec.json.schema_components(
        sorted(set(structs), key=_name), ref_template=_COMPONENT
    )
    return {name: _converted(node, None).to_schema() for name, node in defs.items()}


def _name(struct: type[msgspec.Struct]) -> str:
    return struct.__name__


def _converted(node: dict[str, Any], defs: dict[str, Any] | None) -> Schema | Reference:  # noqa: C901  one branch per JSON Schema keyword
    """`node` as Litestar's `Schema`; a reference inlined from `defs`, or kept without them."""
    if "$ref" in node:  # wire types are not recursive: a definition can be inlined
        if defs is None:
            return Reference(ref=node["$ref"])
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


def components() -> Components:
    """The shared problem responses the operations refer to (`#/components/responses/...`) and
    the bearer key (`#/components/securitySchemes/bearerAuth`)."""
    # One `Problem` schema that every problem response refers to: a generated client gets one
    # problem type, not one per operation and status (`PROBLEM_SCHEMA` has Litestar make it).
    problem = Reference(ref="#/components/schemas/Problem")
    content = {PROBLEM_MEDIA_TYPE: OpenAPIMediaType(schema=problem)}
    return Components(
        responses={
            _problem_name(status): OpenAPIResponse(description=description, content=content)
            for status, description in PROBLEM_STATUSES.items()
        },
        security_schemes=dict(_SECURITY),
    )


# Litestar fills `components/schemas` with the types that routes name, replacing any given in the
# config; the `Problem` that the responses above refer to is named by the one route every app
# has (`/healthz`, whose 401 this is: two Authorization headers are refused everywhere).
PROBLEM_SCHEMA: dict[int, ResponseSpec] = {
    401: ResponseSpec(
        Problem,
        description=PROBLEM_STATUSES[401],
        media_type=PROBLEM_MEDIA_TYPE,
        generate_examples=False,
    )
}


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
    also: Iterable[int] = (),
    keyed: bool = True,
    body: type[msgspec.Struct] | None = None,
) -> type[Operation]:
    named = frozenset(also)
    unknown = named - PROBLEM_STATUSES.keys()
    if unknown:
        raise ValueError(f"no problem response is described for {sorted(unknown)}")

    @dataclass
    class Documented(Operation):
        # The Struct of the JSON body, a schema component of the document (`Document`).
        body_struct: ClassVar[type[msgspec.Struct] | None] = body

        def __post_init__(self) -> None:
            if request_body is not None:
                self.request_body = request_body
            if parameters:
                self.parameters = [*(self.parameters or ()), *parameters]
            statuses = _problems_of(self, keyed=keyed) | named
            # Litestar's own 400 (its ValidationException) is dropped: the problems are ours.
            responses = {
                status: response
                for status, response in (self.responses or {}).items()
                if status.startswith("2")
            }
            if text is not None:
                responses["200"] = OpenAPIResponse(
                    description=text.description,
                    content={text.media_type: OpenAPIMediaType(schema=_TEXT)},
                )
            for status in sorted(statuses):
                responses[str(status)] = Reference(
                    ref=f"#/components/responses/{_problem_name(status)}"
                )
            self.responses = responses
            if keyed:
                self.security = [{BEARER: []}]

    return Documented


def _problems_of(operation: Operation, *, keyed: bool) -> frozenset[int]:
    statuses = set(PROBLEMS_OF_ANY)
    if keyed:
        statuses |= PROBLEMS_OF_A_KEY
    if operation.request_body is not None:
        statuses |= PROBLEMS_OF_A_BODY
    found = [p for p in operation.parameters or () if isinstance(p, Parameter)]
    if any(p.param_in == ParamType.QUERY for p in found):
        statuses |= PROBLEMS_OF_A_QUERY
    if any(p.param_in == ParamType.PATH for p in found):
        statuses |= PROBLEMS_OF_A_PATH
    return frozenset(statuses)


def documented(*, also: Iterable[int] = (), keyed: bool = True) -> type[Operation]:
    """An operation that reads no body and answers JSON; ``keyed=False`` for one served without
    a key (health, readiness, metrics); ``also``: the problems its route names besides."""
    return _documented(also=also, keyed=keyed)


_TEXT = Schema(type=OpenAPIType.STRING)
DOCUMENTED = _documented()  # a keyed operation that reads no body and answers JSON


def json_body(
    struct: type[msgspec.Struct], description: str | None = None, *, also: Iterable[int] = ()
) -> type[Operation]:
    """An operation whose request body is ``struct`` as JSON, the component of its name."""
    schema = Reference(ref=_COMPONENT.format(name=_name(struct)))
    return _documented(
        request_body=_body("application/json", schema, description), also=also, body=struct
    )


def text_body(media_type: str, description: str, *, also: Iterable[int] = ()) -> type[Operation]:
    """An operation whose request body is a text document of ``media_type`` (e.g. YAML)."""
    return _documented(request_body=_body(media_type, _TEXT, description), also=also)


def text_response(
    media_type: str, description: str, *, also: Iterable[int] = (), keyed: bool = True
) -> type[Operation]:
    """An operation that answers text of ``media_type``."""
    return _documented(text=TextResponse(media_type, description), also=also, keyed=keyed)


def _body(media_type: str, schema: Schema | Reference, description: str | None) -> RequestBody:
    return RequestBody(
        content={media_type: OpenAPIMediaType(schema=schema)},
        description=description,
        required=True,
    )


def query_parameters(
    struct: type[msgspec.Struct], text: TextResponse | None = None, *, also: Iterable[int] = ()
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
    return _documented(parameters=parameters, text=text, also=also)


@dataclass
class Document(OpenAPI):
    """The OpenAPI document, whose `components/schemas` hold the request bodies' besides the
    types Litestar documents itself (it sets those when it builds the document)."""

    def to_schema(self) -> dict[str, Any]:
        document = super().to_schema()
        structs = [
            operation.body_struct
            for item in (self.paths or {}).values()
            for operation in _operations(item)
            if getattr(operation, "body_struct", None) is not None
        ]
        schemas: dict[str, Any] = document.setdefault("components", {}).setdefault("schemas", {})
        for name, schema in body_components(structs).items():
            if schemas.get(name, schema) != schema:
                raise ValueError(f"two schemas are named {name!r}: a request body and another")
            schemas[name] = schema
        document["components"]["schemas"] = dict(sorted(schemas.items()))
        return document


def _operations(item: Any) -> list[Any]:
    methods = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
    return [o for o in (getattr(item, m, None) for m in methods) if o is not None]


@dataclass
class DocumentConfig(OpenAPIConfig):
    """Litestar's OpenAPI configuration, making a `Document` (request bodies named)."""

    def to_openapi_schema(self) -> OpenAPI:
        made = super().to_openapi_schema()
        return Document(**{f.name: getattr(made, f.name) for f in dataclasses.fields(made)})
