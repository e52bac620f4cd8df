"""Lint findings: one `LintIssue` per problem, each pointing at `file:line:col`.

Codes are stable; tools and tests match on them. P0xx are errors (the bundle is rejected),
P1xx are warnings (the bundle loads; the finding is reported alongside it).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

__all__ = ["CODES", "MAX_ISSUES", "IssueLog", "LintIssue", "PolicyLintError", "Severity"]

Severity = Literal["error", "warning"]

# code -> one-line meaning. Never renumber: CI pipelines and golden files depend on these.
CODES: dict[str, str] = {
    "P000": "file cannot be read",
    "P001": "source too large",
    "P002": "source is not UTF-8",
    "P003": "YAML syntax error",
    "P004": "YAML anchors and aliases are not allowed",
    "P005": "explicit YAML tags are not allowed",
    "P006": "YAML nesting too deep",
    "P007": "duplicate key",
    "P008": "mapping keys must be plain strings",
    "P009": "expected exactly one YAML document",
    "P010": "YAML 1.1 boolean trap",
    "P011": "YAML 1.1 sexagesimal number trap",
    "P012": "YAML 1.1 number trap (leading zero or underscore)",
    "P013": "document too large (too many nodes)",
    "P014": "scalar too long",
    "P020": "unknown key",
    "P021": "missing required key",
    "P022": "wrong type",
    "P023": "invalid value",
    "P024": "value out of range",
    "P030": "duplicate rule id",
    "P031": "too many rules",
    "P032": "invalid rule id",
    "P033": "stage does not match effect",
    "P034": "key not allowed for this effect",
    "P040": "unknown field",
    "P041": "unknown operator",
    "P042": "operator not applicable to field",
    "P043": "invalid operator value",
    "P044": "invalid regular expression",
    "P045": "pattern too long",
    "P046": "invalid duration",
    "P047": "invalid timestamp",
    "P048": "condition nesting too deep",
    "P049": "condition too large",
    "P050": "a condition needs exactly one of field, all, any, not",
    "P051": "request-stage rule refers to a memory field",
    "P052": "unknown detector",
    "P060": "test suite error",
    "P090": "too many issues",
    "P101": "rule is unreachable",
    "P102": "rule has no reason",
    "P103": "rule mode is overridden by the bundle mode",
}


@dataclass(frozen=True, slots=True)
class LintIssue:
    """One finding. `line` and `col` are 1-based, as editors count."""

    file: str
    line: int
    col: int
    code: str
    message: str
    severity: Severity = "error"

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}: {self.code} {self.message}"

    def sort_key(self) -> tuple[str, int, int, str, str]:
        return (self.file, self.line, self.col, self.code, self.message)


class PolicyLintError(Exception):
    """A bundle or test suite failed lint. `issues` holds every finding, errors and warnings."""

    def __init__(self, issues: Iterable[LintIssue]) -> None:
        self.issues: tuple[LintIssue, ...] = tuple(issues)
        super().__init__("\n".join(str(issue) for issue in self.issues))

    @property
    def errors(self) -> tuple[LintIssue, ...]:
        return tuple(issue for issue in self.issues if issue.severity == "error")


# Past this many findings the rest are summarized in one P090: a 10,000-rule bundle with the same
# mistake in every rule must not produce a 10,000-line report.
MAX_ISSUES = 200


class IssueLog:
    """Collects findings for one file, in the order found, bounded by `MAX_ISSUES`."""

    def __init__(self, filename: str) -> None:
        self.filename = filename
        self._issues: list[LintIssue] = []
        self._dropped = 0
        self._errors = 0

    def report(self, line: int, col: int, code: str, message: str) -> None:
        self._errors += 1
        self._add(LintIssue(self.filename, line, col, code, message, "error"))

    def warn(self, line: int, col: int, code: str, message: str) -> None:
        self._add(LintIssue(self.filename, line, col, code, message, "warning"))

    def _add(self, issue: LintIssue) -> None:
        if len(self._issues) < MAX_ISSUES:
            self._issues.append(issue)
        else:
            self._dropped += 1

    @property
    def error_count(self) -> int:
        return self._errors

    @property
    def has_errors(self) -> bool:
        return self.error_count > 0

    def issues(self) -> tuple[LintIssue, ...]:
        found = sorted(self._issues, key=LintIssue.sort_key)
        if self._dropped:
            last = found[-1]
            found.append(
                LintIssue(
                    self.filename,
                    last.line,
                    last.col,
                    "P090",
                    f"{self._dropped} more issues not shown",
                )
            )
        return tuple(found)
