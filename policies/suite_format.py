"""Reading a PolicyTestSuite document into fixtures and cases, with positioned findings.

    apiVersion: ctxgw/v1
    kind: PolicyTestSuite
    metadata: {name: default-bundle}
    spec:
      bundle: default.yaml            # relative to the suite file
      now: "2026-11-29T12:00:00Z"     # pinned time for every case
      requests:                       # named fixture requests (request.* fields)
        agent: {tenant: acme, role: agent, purpose: support}
      memories:                       # fixture memories (memory.* fields), memory_id required
        - {memory_id: m1, namespace: eng, content: "mail ann@example.com", labels: [pii]}
      cases:
        - name: contact details are found
          request: agent              # a fixture name, or an inline mapping
          memories: [m1]              # rank order; default every fixture, in order
          expect:
            refused: null             # or the id of the require rule that refuses
            outcomes:
              m1: admit               # short form, or a mapping:
              # {outcome, outcome_if_enforced, rule_id, rule_id_if_enforced, redactions,
              #  redactions_if_enforced, redacted_heading, redacted_content, decisions}

Values are typed by field, as in conditions: timestamps need an offset, numbers may be written
plainly. Redactions are listed as {field, detector} (count optional) and compared as a set.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from policies.fields import FIELDS, FieldSpec
from policies.lint_conditions import parse_timestamp
from policies.lint_rules import read_header
from policies.loader import MapNode, Node, ScalarNode
from policies.schema import Checker

__all__ = ["MISSING", "CaseSpec", "Expectation", "SuiteSpec", "read_suite"]

_TOP = ("apiVersion", "kind", "metadata", "spec")
_SPEC = ("bundle", "now", "requests", "memories", "cases")
_CASE = ("name", "request", "memories", "expect")
_EXPECT = ("refused", "outcomes")
_OUTCOME = (
    "outcome",
    "outcome_if_enforced",
    "rule_id",
    "rule_id_if_enforced",
    "redactions",
    "redactions_if_enforced",
    "redacted_heading",
    "redacted_content",
    "decisions",
)
_OUTCOMES = ("admit", "deny", "cap")
_MEMORY_FIELDS = {s.key: s for s in FIELDS.values() if s.scope == "memory"}
_REQUEST_FIELDS = {s.key: s for s in FIELDS.values() if s.scope == "request"}
MISSING = object()  # an expectation that was not written, as opposed to one written as null


@dataclass(frozen=True, slots=True)
class Expectation:
    """What one memory's outcome must be; MISSING members are not checked."""

    memory_id: str
    line: int
    col: int
    checks: dict[str, object] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class CaseSpec:
    name: str
    line: int
    col: int
    request: dict[str, object]
    memory_ids: tuple[str, ...]
    refused: object  # MISSING, None, or a rule id
    expectations: tuple[Expectation, ...]


@dataclass(frozen=True, slots=True)
class SuiteSpec:
    name: str
    bundle: str
    bundle_node: Node
    now: datetime
    memories: dict[str, dict[str, object]]
    cases: tuple[CaseSpec, ...]


def read_suite(root: Node, checker: Checker) -> SuiteSpec | None:
    top = read_header(checker, root, "PolicyTestSuite", _TOP)
    if top is None:
        return None
    meta = top.get("metadata")
    name = ""
    if meta is not None and (mapping := checker.mapping(meta, "metadata", ("name",))) is not None:
        name_node = mapping.get("name")
        name = (checker.string(name_node, "metadata.name") if name_node else "") or ""
    spec_node = top.get("spec")
    spec = None if spec_node is None else checker.mapping(spec_node, "spec", _SPEC, _SPEC[:2])
    if spec is None:
        return None
    bundle_node, now_node = spec.get("bundle"), spec.get("now")
    bundle = None if bundle_node is None else checker.string(bundle_node, "spec.bundle")
    now = None if now_node is None else _timestamp(checker, now_node, "spec.now")
    requests = _named_requests(checker, spec.get("requests"))
    memories = _memories(checker, spec.get("memories"))
    cases_node = spec.get("cases")
    items = None if cases_node is None else checker.sequence(cases_node, "spec.cases", min_items=1)
    cases = tuple(
        case
        for index, item in enumerate(() if items is None else items.items)
        if (case := _case(checker, item, f"spec.cases[{index}]", requests, memories)) is not None
    )
    if bundle is None or now is None or bundle_node is None or checker.log.has_errors:
        return None
    return SuiteSpec(name, bundle, bundle_node, now, memories, cases)


def _timestamp(checker: Checker, node: Node, path: str) -> datetime | None:
    if isinstance(node, ScalarNode) and node.tag in ("str", "timestamp"):
        parsed = parse_timestamp(node.text)
        if parsed is not None:
            return parsed
    checker.error(node, "P047", f"{path} must be an RFC 3339 timestamp with an offset")
    return None


def _value(checker: Checker, node: Node, spec: FieldSpec, path: str) -> object:
    if isinstance(node, ScalarNode) and node.tag == "null":
        return None
    if spec.kind == "str":
        return checker.string(node, path, max_len=1_000_000)
    if spec.kind == "int":
        return checker.integer(node, path, -(2**53), 2**53)
    if spec.kind == "number":
        number = checker.decimal(node, path)
        return None if number is None else float(number)
    if spec.kind == "datetime":
        return _timestamp(checker, node, path)
    items = checker.sequence(node, path)
    if items is None:
        return None
    return [checker.string(item, f"{path}[{i}]") for i, item in enumerate(items.items)]


def _record(
    checker: Checker, node: Node, path: str, fields: dict[str, FieldSpec], required: tuple[str, ...]
) -> dict[str, object] | None:
    mapping = checker.mapping(node, path, list(fields), required)
    if mapping is None:
        return None
    return {
        key.text: _value(checker, value, fields[key.text], f"{path}.{key.text}")
        for key, value in mapping.entries
        if key.text in fields
    }


def _named_requests(checker: Checker, node: Node | None) -> dict[str, dict[str, object]]:
    if node is None:
        return {}
    mapping = checker.mapping(node, "spec.requests", None)
    if mapping is None:
        return {}
    found: dict[str, dict[str, object]] = {}
    for key, value in mapping.entries:
        record = _record(checker, value, f"spec.requests.{key.text}", _REQUEST_FIELDS, ())
        if record is not None:
            found[key.text] = record
    return found


def _memories(checker: Checker, node: Node | None) -> dict[str, dict[str, object]]:
    items = None if node is None else checker.sequence(node, "spec.memories")
    found: dict[str, dict[str, object]] = {}
    for index, item in enumerate(() if items is None else items.items):
        path = f"spec.memories[{index}]"
        record = _record(checker, item, path, _MEMORY_FIELDS, ("memory_id",))
        memory_id = None if record is None else record.get("memory_id")
        if isinstance(memory_id, str):
            if memory_id in found:
                checker.error(item, "P060", f"{path}: duplicate memory_id '{memory_id}'")
            found[memory_id] = record or {}
    return found


def _case(
    checker: Checker,
    node: Node,
    path: str,
    requests: dict[str, dict[str, object]],
    memories: dict[str, dict[str, object]],
) -> CaseSpec | None:
    mapping = checker.mapping(node, path, _CASE, ("name", "expect"))
    if mapping is None:
        return None
    name_node = mapping.get("name")
    name = None if name_node is None else checker.string(name_node, f"{path}.name")
    request: dict[str, object] | None = {}
    if (request_node := mapping.get("request")) is not None:
        request = _case_request(checker, request_node, f"{path}.request", requests)
    memory_ids = tuple(memories)
    if (ids_node := mapping.get("memories")) is not None:
        memory_ids = _memory_ids(checker, ids_node, f"{path}.memories", memories)
    expect_node = mapping.get("expect")
    expect = (
        None if expect_node is None else checker.mapping(expect_node, f"{path}.expect", _EXPECT)
    )
    if expect is None:
        return None
    refused: object = MISSING
    if (refused_node := expect.get("refused")) is not None:
        is_null = isinstance(refused_node, ScalarNode) and refused_node.tag == "null"
        refused = None if is_null else checker.string(refused_node, f"{path}.expect.refused")
    expectations = _expectations(checker, expect.get("outcomes"), f"{path}.expect", memory_ids)
    if name is None or request is None:
        return None
    return CaseSpec(name, mapping.line, mapping.col, request, memory_ids, refused, expectations)


def _case_request(
    checker: Checker, node: Node, path: str, requests: dict[str, dict[str, object]]
) -> dict[str, object] | None:
    if isinstance(node, MapNode):
        return _record(checker, node, path, _REQUEST_FIELDS, ())
    name = checker.string(node, path)
    if name is not None and name not in requests:
        checker.error(node, "P060", f"{path}: no fixture request named '{name}'")
        return None
    return None if name is None else dict(requests[name])


def _memory_ids(
    checker: Checker, node: Node, path: str, memories: dict[str, dict[str, object]]
) -> tuple[str, ...]:
    items = checker.sequence(node, path)
    ids: list[str] = []
    for index, item in enumerate(() if items is None else items.items):
        memory_id = checker.string(item, f"{path}[{index}]")
        if memory_id is not None and memory_id not in memories:
            checker.error(item, "P060", f"{path}: no fixture memory '{memory_id}'")
        elif memory_id is not None:
            ids.append(memory_id)
    return tuple(ids)


def _expectations(
    checker: Checker, node: Node | None, path: str, memory_ids: tuple[str, ...]
) -> tuple[Expectation, ...]:
    mapping = None if node is None else checker.mapping(node, f"{path}.outcomes", list(memory_ids))
    found: list[Expectation] = []
    for key, value in () if mapping is None else mapping.entries:
        where = f"{path}.outcomes.{key.text}"
        if isinstance(value, ScalarNode):
            outcome = checker.choice(value, where, _OUTCOMES)
            found.append(Expectation(key.text, key.line, key.col, {"outcome": outcome}))
            continue
        entry = checker.mapping(value, where, _OUTCOME)
        if entry is None:
            continue
        checks: dict[str, object] = {}
        for item_key, item in entry.entries:
            checks[item_key.text] = _check_value(
                checker, item_key.text, item, f"{where}.{item_key.text}"
            )
        found.append(Expectation(key.text, key.line, key.col, checks))
    return tuple(found)


def _check_value(checker: Checker, name: str, node: Node, path: str) -> object:
    if isinstance(node, ScalarNode) and node.tag == "null" and name.startswith("rule_id"):
        return None
    if name in ("outcome", "outcome_if_enforced"):
        return checker.choice(node, path, _OUTCOMES)
    if name in ("rule_id", "rule_id_if_enforced", "redacted_heading", "redacted_content"):
        return checker.string(node, path, max_len=1_000_000)
    items = checker.sequence(node, path)
    if name == "decisions":
        return [
            checker.string(item, f"{path}[{i}]")
            for i, item in enumerate(() if items is None else items.items)
        ]
    redactions = []
    for index, item in enumerate(() if items is None else items.items):
        entry = checker.mapping(
            item, f"{path}[{index}]", ("field", "detector", "count"), ("field", "detector")
        )
        if entry is None:
            continue
        parts = {
            k.text: (
                checker.integer(v, f"{path}[{index}].count", 0, 2**31)
                if k.text == "count"
                else checker.string(v, f"{path}[{index}].{k.text}")
            )
            for k, v in entry.entries
        }
        redactions.append(parts)
    return redactions
