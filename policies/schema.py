"""Typed reads of positioned nodes: each read either returns a value or logs one finding there.

Shared by the bundle linter and the test-suite reader, so that both speak the same messages:
`rules[2].effect must be one of allow, cap, deny, redact, require; got 'dney' (did you mean
'deny'?)`.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from decimal import Decimal, InvalidOperation

from policies.issues import IssueLog
from policies.loader import MapNode, Node, ScalarNode, SeqNode

__all__ = ["Checker", "describe", "did_you_mean"]

# Decimal thresholds are bounded in size so that converting them to floats for comparison is
# exact enough to be meaningful (IEEE 754 doubles carry 15-17 significant digits).
_MAX_DECIMAL_TEXT = 32


def did_you_mean(word: str, options: Sequence[str]) -> str:
    close = difflib.get_close_matches(word, options, n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def describe(node: Node) -> str:
    if isinstance(node, MapNode):
        return "a mapping"
    if isinstance(node, SeqNode):
        return "a list"
    names = {
        "str": "a string",
        "int": "an integer",
        "float": "a number",
        "bool": "a boolean",
        "null": "null",
        "timestamp": "a timestamp",
    }
    shown = node.text if len(node.text) <= 40 else node.text[:40] + "…"
    return f"{names[node.tag]} '{shown}'" if node.tag != "null" else "null"


class Checker:
    """Reads nodes against expectations; findings go to the log, results are None on failure."""

    def __init__(self, log: IssueLog) -> None:
        self.log = log

    def error(self, node: Node, code: str, message: str) -> None:
        if isinstance(node, ScalarNode) and node.trapped and code in ("P022", "P023"):
            return  # the YAML 1.1 trap was reported where it was read; one finding is enough
        self.log.report(node.line, node.col, code, message)

    def warning(self, node: Node, code: str, message: str) -> None:
        self.log.warn(node.line, node.col, code, message)

    def mapping(
        self,
        node: Node,
        what: str,
        allowed: Sequence[str] | None,
        required: Sequence[str] = (),
    ) -> MapNode | None:
        """The node as a mapping; `allowed` None admits any key (names chosen by the author)."""
        if not isinstance(node, MapNode):
            self.error(node, "P022", f"{what} must be a mapping, got {describe(node)}")
            return None
        for key, _ in () if allowed is None else node.entries:
            if allowed is not None and key.text not in allowed:
                hint = did_you_mean(key.text, allowed)
                self.error(key, "P020", f"unknown key '{key.text}' in {what}{hint}")
        for name in required:
            if node.get(name) is None:
                self.error(node, "P021", f"{what} is missing required key '{name}'")
        return node

    def sequence(self, node: Node, what: str, *, min_items: int = 0) -> SeqNode | None:
        if not isinstance(node, SeqNode):
            self.error(node, "P022", f"{what} must be a list, got {describe(node)}")
            return None
        if len(node.items) < min_items:
            self.error(node, "P023", f"{what} must have at least {min_items} item(s)")
            return None
        return node

    def string(
        self, node: Node, what: str, *, max_len: int = 1000, allow_empty: bool = True
    ) -> str | None:
        if not isinstance(node, ScalarNode) or node.tag != "str":
            hint = " (quote it)" if isinstance(node, ScalarNode) and node.tag != "null" else ""
            self.error(node, "P022", f"{what} must be a string, got {describe(node)}{hint}")
            return None
        if len(node.text) > max_len:
            self.error(node, "P024", f"{what} is longer than {max_len} characters")
            return None
        if not node.text and not allow_empty:
            self.error(node, "P023", f"{what} must not be empty")
            return None
        return node.text

    def integer(self, node: Node, what: str, low: int, high: int) -> int | None:
        if not isinstance(node, ScalarNode) or node.tag != "int":
            self.error(node, "P022", f"{what} must be an integer, got {describe(node)}")
            return None
        assert isinstance(node.value, int)
        if not low <= node.value <= high:
            self.error(node, "P024", f"{what} must be between {low} and {high}")
            return None
        return node.value

    def decimal(self, node: Node, what: str) -> Decimal | None:
        """A number written as an integer, a decimal, or a decimal string ("0.9")."""
        value: Decimal | None = None
        if isinstance(node, ScalarNode) and len(node.text) <= _MAX_DECIMAL_TEXT:
            if node.tag in ("int", "float"):
                value = Decimal(str(node.value))
            elif node.tag == "str":
                try:
                    value = Decimal(node.text)
                except InvalidOperation:
                    value = None
        if value is None or not value.is_finite():
            self.error(node, "P022", f"{what} must be a finite number, got {describe(node)}")
            return None
        return value

    def choice(self, node: Node, what: str, options: Sequence[str]) -> str | None:
        text = self.string(node, what)
        if text is None:
            return None
        if text not in options:
            hint = did_you_mean(text, options)
            listed = ", ".join(sorted(options))
            self.error(node, "P023", f"{what} must be one of {listed}; got '{text}'{hint}")
            return None
        return text
