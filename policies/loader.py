"""YAML source → a tree of positioned nodes, with the YAML-level checks done on the way.

`yaml.safe_load` is not enough for policy files: it keeps the last of two duplicate keys
silently, forgets positions, expands alias bombs and reads `no` as false. So this module reads
the event stream (libyaml when available) and builds its own small tree, where every node keeps
its 1-based line and column and every scalar keeps the text it was written as.

Rejected here: sources over `MAX_SOURCE_BYTES`, non-UTF-8 bytes, syntax errors, anchors and
aliases (no bombs), explicit tags other than `!!str`, nesting over `MAX_YAML_DEPTH`, more than
`MAX_NODES` nodes, duplicate keys, non-string keys, and YAML 1.1 traps: the boolean words
(`yes`, `no`, `on`, `off`), sexagesimal numbers (`1:30`), leading-zero octals and underscores.
A trapped scalar is kept as the string it looks like, so later checks do not pile on.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from typing import Literal

import yaml

from policies.issues import IssueLog

__all__ = [
    "MAX_NODES",
    "MAX_SCALAR_CHARS",
    "MAX_SOURCE_BYTES",
    "MAX_YAML_DEPTH",
    "MapNode",
    "Node",
    "ScalarNode",
    "ScalarTag",
    "SeqNode",
    "node_from_json",
    "parse_yaml",
]

MAX_SOURCE_BYTES = 1024 * 1024
MAX_YAML_DEPTH = 32
MAX_NODES = 100_000
MAX_SCALAR_CHARS = 65_536

ScalarTag = Literal["str", "int", "float", "bool", "null", "timestamp"]

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_RESOLVER = yaml.resolver.Resolver()
_TAG_PREFIX = "tag:yaml.org,2002:"
_STR_TAG = _TAG_PREFIX + "str"


@dataclass(frozen=True, slots=True)
class ScalarNode:
    line: int
    col: int
    text: str
    tag: ScalarTag
    value: str | int | Decimal | bool | None
    trapped: bool = False  # a YAML 1.1 trap, already reported: later checks stay quiet


@dataclass(frozen=True, slots=True)
class SeqNode:
    line: int
    col: int
    items: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class MapNode:
    line: int
    col: int
    entries: tuple[tuple[ScalarNode, Node], ...]

    def get(self, key: str) -> Node | None:
        for k, v in self.entries:
            if k.text == key:
                return v
        return None


Node = ScalarNode | SeqNode | MapNode


class _AbortError(Exception):
    """Stops composition after a finding that makes the rest meaningless."""


def parse_yaml(source: str | bytes, log: IssueLog) -> Node | None:
    """Parse one YAML document into nodes; findings go to `log`. None when nothing usable."""
    text = _decode(source, log)
    if text is None:
        return None
    composer = _Composer(text, log)
    try:
        return composer.document()
    except _AbortError:
        return None
    except yaml.YAMLError as exc:
        line, col = _error_position(exc, text)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        context = getattr(exc, "context", None)
        detail = f"{problem} ({context})" if context else str(problem)
        log.report(line, col, "P003", f"YAML syntax error: {detail}")
        return None


def node_from_json(value: object) -> Node:
    """The node tree of an already-parsed JSON value (canonical bundles); positions are 1:1."""
    if isinstance(value, dict):
        return MapNode(
            1, 1, tuple((_json_scalar(str(k)), node_from_json(v)) for k, v in value.items())
        )
    if isinstance(value, list):
        return SeqNode(1, 1, tuple(node_from_json(v) for v in value))
    return _json_scalar(value)


def _json_scalar(value: object) -> ScalarNode:
    if value is None:
        return ScalarNode(1, 1, "null", "null", None)
    if isinstance(value, bool):
        return ScalarNode(1, 1, str(value).lower(), "bool", value)
    if isinstance(value, int):
        return ScalarNode(1, 1, str(value), "int", value)
    if isinstance(value, str):
        return ScalarNode(1, 1, value, "str", value)
    raise TypeError(f"unexpected JSON value of type {type(value).__name__}")


def _decode(source: str | bytes, log: IssueLog) -> str | None:
    # Check the cheap length first so a 10 MB upload is refused before any work on it.
    if len(source) > MAX_SOURCE_BYTES:
        log.report(1, 1, "P001", f"source is larger than {MAX_SOURCE_BYTES} bytes")
        return None
    if isinstance(source, str):
        text = source
        try:
            size = len(text.encode("utf-8"))
        except UnicodeEncodeError as exc:  # a lone surrogate: no UTF-8 form, so no YAML either
            line, col = _line_col(text[: exc.start])
            log.report(line, col, "P002", "source is not valid Unicode: a lone surrogate")
            return None
        if size > MAX_SOURCE_BYTES:
            log.report(1, 1, "P001", f"source is larger than {MAX_SOURCE_BYTES} bytes")
            return None
    else:
        try:
            text = source.decode("utf-8")
        except UnicodeDecodeError as exc:
            line, col = _line_col(source[: exc.start].decode("utf-8", "replace"))
            log.report(line, col, "P002", f"source is not valid UTF-8: {exc.reason}")
            return None
    return text.removeprefix("\ufeff")


def _line_col(prefix: str) -> tuple[int, int]:
    line = prefix.count("\n") + 1
    return line, len(prefix) - (prefix.rfind("\n") + 1) + 1


def _error_position(exc: yaml.YAMLError, text: str) -> tuple[int, int]:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    if mark is not None:
        return mark.line + 1, mark.column + 1
    position = getattr(exc, "position", None)
    if isinstance(position, int):
        return _line_col(text[:position])
    return 1, 1


def _position(event: yaml.Event) -> tuple[int, int]:
    mark = event.start_mark
    return (1, 1) if mark is None else (mark.line + 1, mark.column + 1)


class _Composer:
    def __init__(self, text: str, log: IssueLog) -> None:
        self._events: Iterator[yaml.Event] = iter(yaml.parse(text, Loader=_LOADER))
        self._log = log
        self._nodes = 0

    def _next(self) -> yaml.Event:
        return next(self._events)

    def document(self) -> Node | None:
        self._next()  # StreamStartEvent
        event = self._next()
        if isinstance(event, yaml.StreamEndEvent):
            self._log.report(1, 1, "P009", "expected one YAML document, found none")
            return None
        root = self._node(self._next(), 1)
        self._next()  # DocumentEndEvent
        event = self._next()
        if isinstance(event, yaml.DocumentStartEvent):
            line, col = _position(event)
            self._log.report(line, col, "P009", "expected one YAML document, found more")
            return None
        return root

    def _node(self, event: yaml.Event, depth: int) -> Node:
        line, col = _position(event)
        self._nodes += 1
        if self._nodes > MAX_NODES:
            self._log.report(line, col, "P013", f"document has more than {MAX_NODES} nodes")
            raise _AbortError
        if isinstance(event, yaml.AliasEvent):
            self._log.report(line, col, "P004", f"alias *{event.anchor} is not allowed")
            raise _AbortError
        anchor = getattr(event, "anchor", None)
        if anchor is not None:
            self._log.report(line, col, "P004", f"anchor &{anchor} is not allowed")
        if depth > MAX_YAML_DEPTH:
            self._log.report(line, col, "P006", f"nesting deeper than {MAX_YAML_DEPTH} levels")
            raise _AbortError
        if isinstance(event, yaml.ScalarEvent):
            return self._scalar(event, line, col)
        if isinstance(event, yaml.NodeEvent):
            self._check_tag(event, line, col)
        if isinstance(event, yaml.SequenceStartEvent):
            items: list[Node] = []
            while not isinstance(event := self._next(), yaml.SequenceEndEvent):
                items.append(self._node(event, depth + 1))
            return SeqNode(line, col, tuple(items))
        if not isinstance(event, yaml.MappingStartEvent):  # pragma: no cover - parser guarantees
            raise _AbortError
        return self._mapping(line, col, depth)

    def _mapping(self, line: int, col: int, depth: int) -> MapNode:
        entries: list[tuple[ScalarNode, Node]] = []
        seen: dict[str, ScalarNode] = {}
        while not isinstance(event := self._next(), yaml.MappingEndEvent):
            key = self._node(event, depth + 1)
            value = self._node(self._next(), depth + 1)
            if not isinstance(key, ScalarNode) or key.tag != "str":
                self._log.report(key.line, key.col, "P008", "mapping keys must be plain strings")
                continue
            first = seen.get(key.text)
            if first is not None:
                self._log.report(
                    key.line,
                    key.col,
                    "P007",
                    f"duplicate key '{key.text}' (first defined at {first.line}:{first.col})",
                )
                continue
            seen[key.text] = key
            entries.append((key, value))
        return MapNode(line, col, tuple(entries))

    def _check_tag(self, event: yaml.NodeEvent, line: int, col: int) -> None:
        tag = getattr(event, "tag", None)
        implicit = getattr(event, "implicit", True)
        if tag is not None and tag != "!" and not implicit:
            self._log.report(line, col, "P005", f"explicit tag {tag} is not allowed")

    def _scalar(self, event: yaml.ScalarEvent, line: int, col: int) -> ScalarNode:
        text = event.value
        if len(text) > MAX_SCALAR_CHARS:
            self._log.report(line, col, "P014", f"scalar longer than {MAX_SCALAR_CHARS} characters")
            return ScalarNode(line, col, text[:MAX_SCALAR_CHARS], "str", text[:MAX_SCALAR_CHARS])
        if event.tag is not None and event.tag not in ("!", _STR_TAG):
            self._log.report(line, col, "P005", f"explicit tag {event.tag} is not allowed")
        if event.tag is not None or event.style or not event.implicit[0]:
            return ScalarNode(line, col, text, "str", text)
        resolved: str = _RESOLVER.resolve(  # type: ignore[no-untyped-call]
            yaml.ScalarNode, text, (True, False)
        )
        kind = resolved.removeprefix(_TAG_PREFIX)
        if kind == "null":
            return ScalarNode(line, col, text, "null", None)
        if kind == "bool":
            if text.lower() in ("true", "false"):
                return ScalarNode(line, col, text, "bool", text.lower() == "true")
            meaning = "true" if text.lower() in ("yes", "on") else "false"
            self._log.report(
                line,
                col,
                "P010",
                f"'{text}' is read as boolean {meaning} by YAML 1.1; "
                f'quote it ("{text}") if you mean the word',
            )
            return ScalarNode(line, col, text, "str", text, trapped=True)
        if kind in ("int", "float"):
            return self._number(text, kind, line, col)
        if kind == "timestamp":
            return ScalarNode(line, col, text, "timestamp", text)
        return ScalarNode(line, col, text, "str", text)

    def _number(self, text: str, kind: str, line: int, col: int) -> ScalarNode:
        if ":" in text:
            self._log.report(
                line,
                col,
                "P011",
                f"'{text}' is read as a base-60 number by YAML 1.1; quote it (\"{text}\")",
            )
            return ScalarNode(line, col, text, "str", text, trapped=True)
        digits = text.lstrip("+-")
        octal = kind == "int" and len(digits) > 1 and digits[0] == "0" and digits[1].isdigit()
        if "_" in text or octal:
            self._log.report(
                line,
                col,
                "P012",
                f"'{text}' is read differently by YAML 1.1 and 1.2; quote it or write it plainly",
            )
            return ScalarNode(line, col, text, "str", text, trapped=True)
        if kind == "int":
            try:
                return ScalarNode(line, col, text, "int", int(text, 0))
            except ValueError:
                self._log.report(line, col, "P024", f"number '{text[:40]}' is out of range")
                return ScalarNode(line, col, text, "str", text)
        lowered = digits.lower()
        if lowered in (".inf", ".nan"):
            value = Decimal("NaN") if lowered == ".nan" else Decimal(text.replace(".", "").lower())
            return ScalarNode(line, col, text, "float", value)
        return ScalarNode(line, col, text, "float", Decimal(text))
