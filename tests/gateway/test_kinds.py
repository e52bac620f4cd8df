"""The registry of receipt kinds is the one list of them: no other module of the gateway spells a
kind's name where it means a kind, every surface that lists kinds reads the registry, and a
receipt of a kind that cannot be rebuilt answers 422 naming why."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import msgspec
from litestar.testing import TestClient

import receipts
from gateway.responses.receipt_parts import ReceiptHeader
from gateway.usecases.receiptlog.kinds import KIND_NAMES, KINDS, REFUSAL, kind_named
from tests.conftest import KeyFactory

GATEWAY = Path(__file__).resolve().parents[2] / "gateway"
REGISTRY = GATEWAY / "usecases" / "receiptlog" / "kinds.py"
# Where a string means a kind: compared with or passed as a `kind`, named as what a refusal
# or a replay was of, or listed beside other kinds' names.
KIND_WORDS = {"kind", "of_kind", "disclosure", "kinds"}


def _named(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        return str(node.slice.value)
    return None


def _is_kind(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and node.value in KIND_NAMES


def _spelled(node: ast.AST) -> list[ast.expr]:
    """The kind names `node` spells where it means kinds (see KIND_WORDS)."""
    if isinstance(node, ast.Compare):
        sides = [node.left, *node.comparators]
        return (
            [s for s in sides if _is_kind(s)] if any(_named(s) in KIND_WORDS for s in sides) else []
        )
    if isinstance(node, ast.keyword):
        return [node.value] if node.arg in KIND_WORDS and _is_kind(node.value) else []
    if isinstance(node, ast.Dict):
        return [
            v
            for k, v in zip(node.keys, node.values, strict=True)
            if isinstance(k, ast.Constant) and k.value in KIND_WORDS and _is_kind(v)
        ]
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        names = [e for e in node.elts if _is_kind(e)]
        return names if len(names) >= 2 else []
    if isinstance(node, ast.Subscript) and _named(node.value) == "Literal":
        names = [e for e in getattr(node.slice, "elts", [node.slice]) if _is_kind(e)]
        return names if len(names) >= 2 else []
    return []


def _kind_literals(tree: ast.AST) -> list[tuple[int, str]]:
    exports = {  # `__all__` lists function names, some of which are kinds' names
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign) and any(_named(t) == "__all__" for t in node.targets)
    }
    return [
        (getattr(found, "lineno", 0), str(getattr(found, "value", "")))
        for node in ast.walk(tree)
        if id(node) not in exports
        for found in _spelled(node)
    ]


def test_no_module_but_the_registry_spells_a_kind() -> None:
    spelled = {
        f"{path.relative_to(GATEWAY.parent)}:{line}: {name}"
        for path in GATEWAY.rglob("*.py")
        if path != REGISTRY
        for line, name in _kind_literals(ast.parse(path.read_text(), str(path)))
    }
    assert not spelled, "kinds spelled outside the registry:\n" + "\n".join(sorted(spelled))
    # The check sees a kind where one is meant (each line below is how a module spelled one
    # before the registry), and not a word that only reads like one.
    before = """
REPLAYABLE = ("context", "replay")
Disclosure = Literal["context", "search", "timeline"]
record(kind="search")
if row.kind == "context": pass
members = {"of_kind": "refusal"}
__all__ = ["fetch", "search"]
signals = {"context": 0}
"""
    assert {line for line, _ in _kind_literals(ast.parse(before))} == {2, 3, 4, 5, 6}


def test_the_registry_agrees_with_the_offline_verifier_and_itself() -> None:
    assert REFUSAL.name == receipts.REFUSAL_KIND  # the verifier checks a refusal delivered nothing
    assert len(set(KIND_NAMES)) == len(KINDS)
    assert all(kind_named(k.name) is k for k in KINDS)
    assert {k.replay_as for k in KINDS} == {"bundle", "session", "refusal", None}


def test_the_console_filter_and_the_listing_offer_every_kind(
    client: TestClient[Any], make_key: KeyFactory
) -> None:
    auditor = make_key(role="auditor", agent_id=None)
    page = client.get("/console", headers={**auditor.headers, "Accept": "text/html"})
    assert page.status_code == 200
    for name in KIND_NAMES:
        assert f'<option value="{name}"' in page.text, name
    assert 'value="erasure"' in page.text
    listed = client.get("/v1/receipts", params={"kind": "erasure"}, headers=auditor.headers)
    assert listed.status_code == 200 and listed.json()["receipts"] == []
    schema = client.get("/schema/openapi.json").json()
    parameters = schema["paths"]["/v1/receipts"]["get"]["parameters"]
    kind = next(p for p in parameters if p["name"] == "kind")
    assert set(kind["schema"]["anyOf"][0]["enum"]) == set(KIND_NAMES)


def test_an_unknown_kind_is_a_422_naming_the_field(
    client: TestClient[Any], make_key: KeyFactory
) -> None:
    auditor = make_key(role="auditor", agent_id=None)
    bad = client.get("/v1/receipts", params={"kind": "contexts"}, headers=auditor.headers)
    assert bad.status_code == 422, bad.text
    assert bad.json()["errors"][0]["field"] == "kind"


def _floats(kind: msgspec.inspect.Type, path: str) -> list[str]:
    """Where a float can stand in a value of `kind`: its fields, items and values, all the way
    down."""
    if isinstance(kind, msgspec.inspect.FloatType):
        return [path]
    if isinstance(kind, msgspec.inspect.StructType):
        return [f for field in kind.fields for f in _floats(field.type, f"{path}.{field.name}")]
    if isinstance(kind, msgspec.inspect.UnionType):
        return [f for member in kind.types for f in _floats(member, path)]
    if isinstance(kind, msgspec.inspect.DictType):
        return _floats(kind.value_type, f"{path}[]")
    if isinstance(kind, msgspec.inspect.CollectionType):
        return _floats(kind.item_type, f"{path}[]")
    if isinstance(kind, msgspec.inspect.TupleType):
        return [f for item in kind.item_types for f in _floats(item, f"{path}[]")]
    return []


def test_no_signed_body_can_hold_a_float() -> None:
    # RFC 8785 writes a float by an algorithm a verifier in another language must repeat to the
    # last digit; the signed members carry integers with their unit in the name (micro-units,
    # basis points) or a float's decimal text instead, by type, for every kind.
    signed: list[type[msgspec.Struct]] = [
        ReceiptHeader,
        *(k.body for k in KINDS),
        *(k.request for k in KINDS if k.request),
    ]
    assert {
        f for body in signed for f in _floats(msgspec.inspect.type_info(body), body.__name__)
    } == set()
